"""The lessons' heatmap: masked cells are hatched and labelled, never coloured as 0; values only when they fit."""

import numpy as np
from PySide6 import QtWidgets

from attention_explorer import engine
from attention_explorer.labs.small_heatmap import QtSmallHeatmap, shared_levels, symmetric_levels


def _heatmap(qtbot, width=700, height=500):
    heatmap = QtSmallHeatmap()
    qtbot.addWidget(heatmap)
    heatmap.resize(width, height)
    heatmap.show()
    qtbot.waitExposed(heatmap)
    return heatmap


def test_minus_infinity_is_masked_and_written_not_coloured(qtbot):
    trace = engine.run(engine.load_builtin("cat-sat-on-mat"), "the cat sat on the mat", engine.Options(causal=True))
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(trace.heads[0].masked, trace.labels, trace.labels, masked_text="−∞")
    above = np.triu(np.ones((6, 6), dtype=bool), k=1)
    np.testing.assert_array_equal(heatmap.masked_cells(), above)
    assert np.all(np.isneginf(heatmap.shown_matrix()[above]))          # the engine's −∞, kept as given
    assert np.all(np.isnan(heatmap.image.image[above]))                # not coloured at all
    assert heatmap.cell_text(0, 5) == "−∞"
    assert heatmap.cell_text(1, 0) == f"{trace.heads[0].masked[1, 0]:.2f}"
    assert heatmap.row_labels() == trace.labels and heatmap.column_labels() == trace.labels


def test_masked_weights_are_not_drawn_as_zero(qtbot):
    trace = engine.run(engine.load_builtin("cat-ate-fish"), "my cat ate its fish")
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(trace.heads[0].weights, trace.labels, trace.labels, mask=trace.mask, levels=(0, 1),
                        masked_text="0")
    assert np.all(trace.heads[0].weights[trace.mask] == 0)
    assert np.all(np.isnan(heatmap.image.image[trace.mask]))
    assert heatmap.levels() == (0.0, 1.0)


def test_values_are_written_only_while_they_fit(qtbot):
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(np.eye(5), list("abcde"), list("abcde"))
    QtWidgets.QApplication.processEvents()
    assert heatmap.values_fit()
    heatmap.show_matrix(np.eye(40), [str(i) for i in range(40)], [str(i) for i in range(40)])
    QtWidgets.QApplication.processEvents()
    assert not heatmap.values_fit()


def test_crowded_column_labels_are_staggered(qtbot):
    heatmap = _heatmap(qtbot, width=360, height=300)
    words = ["preposition", "determiner", "adjective", "noun"]
    heatmap.show_matrix(np.zeros((2, 4)), ["a", "b"], words)
    QtWidgets.QApplication.processEvents()
    assert heatmap.column_labels_staggered()
    heatmap.show_matrix(np.zeros((2, 2)), ["a", "b"], ["x", "y"])
    QtWidgets.QApplication.processEvents()
    assert not heatmap.column_labels_staggered()


def test_outline_and_message(qtbot):
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(np.ones((3, 3)), list("abc"), list("abc"))
    heatmap.outline([(0, 1), (1, 0)])
    assert heatmap.outlined_cells() == [(0, 1), (1, 0)]
    heatmap.show_message("nothing here")
    assert heatmap.shown_matrix() is None and heatmap.message.isVisible()


def test_colour_scales_for_side_by_side_and_differences():
    assert shared_levels(np.array([[0.0, 2.0]]), np.array([[-1.0, -np.inf]])) == (-1.0, 2.0)
    assert symmetric_levels(np.array([[0.2, -0.5]])) == (-0.5, 0.5)
    assert symmetric_levels(np.zeros((2, 2))) == (-1.0, 1.0)
