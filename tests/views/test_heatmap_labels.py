"""The heatmap's word labels: for long sentences no two drawn labels of an axis overlap, the focused
word's label is always drawn, and the top words stand upright when they do not fit side by side."""

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer import engine
from attention_explorer.controller import LOOKED_AT, LOOKING


def sentence_of(n: int) -> str:
    vocabulary = list(engine.load_builtin("cat-sat-on-mat").vocabulary)
    return " ".join(vocabulary[(5 * i + 3) % len(vocabulary)] for i in range(n))


def assert_no_overlap(drawn) -> None:
    for k, (i, a) in enumerate(drawn):
        for j, b in drawn[k + 1:]:
            assert not a.intersects(b), f"labels {i} and {j} overlap"


@pytest.mark.parametrize("n", [40, 200])
def test_long_sentences_draw_labels_that_never_overlap_and_always_the_focused_one(make_window, n):
    window = make_window(sentence=sentence_of(n))
    heatmap = window.heatmap
    heatmap.fit()  # the whole matrix: the most crowded the labels get
    QtWidgets.QApplication.processEvents()
    rows, cols = heatmap.visible_cells()
    assert len(rows) == len(cols) == n
    for focus in (n // 2 + 1, n - 1):
        window.controller.set_hovered(focus, LOOKING)
        QtWidgets.QApplication.processEvents()
        for axis in (heatmap.left_axis, heatmap.top_axis):
            drawn = axis.drawn_labels()
            assert 1 < len(drawn) < n  # thinned, not gone
            assert_no_overlap(drawn)
            assert focus in [i for i, _ in drawn], "the focused word is always drawn"
    assert heatmap.top_axis.is_rotated()


def test_a_short_sentence_draws_every_label(make_window):
    window = make_window()
    for axis in (window.heatmap.left_axis, window.heatmap.top_axis):
        drawn = axis.drawn_labels()
        assert sorted(i for i, _ in drawn) == list(range(6))
        assert_no_overlap(drawn)


def test_zoomed_in_the_focused_word_is_brought_into_sight(make_window):
    window = make_window(sentence=sentence_of(200))
    heatmap = window.heatmap
    assert heatmap.is_zoomable() and heatmap.fit_button.isVisible()
    rows, cols = heatmap.visible_cells()
    assert 150 not in rows and 150 not in cols
    window.controller.set_hovered(150, LOOKING)  # e.g. from a chip: its row scrolls into view
    assert 150 in heatmap.visible_cells()[0]
    window.controller.set_hovered(190, LOOKED_AT)  # its column
    assert 190 in heatmap.visible_cells()[1]
    assert 190 in [i for i, _ in heatmap.top_axis.drawn_labels()]
    heatmap.fit_button.click()
    assert len(heatmap.visible_cells()[0]) == 200


def test_the_colour_scale_can_fit_the_data_or_each_row_and_the_written_values_stay(make_window):
    window = make_window()
    heatmap, trace = window.heatmap, window.controller.trace
    weights = trace.heads[0].weights
    written = [label.text for label in heatmap.values.labels()]
    assert tuple(heatmap.colorbar.levels()) == (0.0, 1.0)
    heatmap.colour_scale_box.setCurrentIndex(1)
    heatmap.colour_scale_box.activated.emit(1)
    assert heatmap.colour_scale() == "data"
    assert tuple(heatmap.colorbar.levels()) == (weights.min(), weights.max())
    heatmap.set_colour_scale("row")
    np.testing.assert_allclose(heatmap.image.image, weights / weights.max(axis=1, keepdims=True))
    assert [label.text for label in heatmap.values.labels()] == written  # the numbers are the weights themselves


def test_zoom_keys_and_fit(qtbot, make_window):
    window = make_window(sentence=sentence_of(200))
    heatmap = window.heatmap
    before = len(heatmap.visible_cells()[1])
    heatmap.graphics.setFocus()
    QTest.keyClick(heatmap.graphics, QtCore.Qt.Key.Key_PageDown)
    assert heatmap.visible_cells()[0].start > 0  # moved down by rows
    QTest.keyClick(heatmap.graphics, QtCore.Qt.Key.Key_PageDown, QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert heatmap.visible_cells()[1].start > 0  # and right by columns
    QTest.keyClick(heatmap.graphics, QtCore.Qt.Key.Key_Minus)
    assert len(heatmap.visible_cells()[1]) > before
    QTest.keyClick(heatmap.graphics, QtCore.Qt.Key.Key_0)
    assert len(heatmap.visible_cells()[1]) == 200


def test_the_axis_titles_never_sit_over_the_words(make_window):
    window = make_window(sentence=sentence_of(40))
    window.heatmap.fit()
    QtWidgets.QApplication.processEvents()
    for axis in (window.heatmap.left_axis, window.heatmap.top_axis):
        title = axis.label.sceneBoundingRect()
        assert not any(title.intersects(rect) for _, rect in axis.drawn_labels())


def test_a_long_sentence_opens_with_colours_per_row_until_the_reader_chooses(make_window):
    window = make_window(sentence=sentence_of(40))
    heatmap = window.heatmap
    assert heatmap.colour_scale() == "row" and heatmap.colour_scale_box.currentData() == "row"
    window.controller.set_sentence("the cat sat on the mat")
    assert heatmap.colour_scale() == "fixed"
    heatmap.set_colour_scale("data")
    window.controller.set_sentence(sentence_of(40))
    assert heatmap.colour_scale() == "data"  # the reader's choice stays


def test_in_a_short_pane_upright_words_never_take_the_cells_room(make_window):
    """1280 × 720 with the step tables open and a long text: the column words stood upright and took
    every pixel the heatmap had, which showed words and no cells; lying flat, they leave the cells
    at least half."""
    window = make_window(sentence=sentence_of(200))
    window.resize(1280, 720)
    if not window.timeline.tables_shown():
        window.timeline.tables_button.click()
    QtWidgets.QApplication.processEvents()
    heatmap = window.heatmap
    axis, view = heatmap.top_axis, heatmap.view
    assert axis.height() + view.height() > 0
    assert view.height() >= axis.height(), (view.height(), axis.height())
    assert not axis.is_rotated()
    assert len(axis.drawn_labels()) > 1  # thinned, not gone


def test_a_longer_column_word_of_the_same_count_is_stood_upright_as_in_a_view_made_for_it(qtbot):
    """Whether the column words stand upright was decided only when the matrix changed shape: a word
    typed longer ("mice" to "miceet", the same count of words) kept them lying flat where a heatmap
    made for the new words stood them up (found by a random walk)."""
    from attention_explorer.views.matrix_plot import MatrixPlot

    def plot(columns):
        made = MatrixPlot(square_cells=True)
        qtbot.addWidget(made)
        made.resize(380, 420)
        made.show()
        made.show_matrix(matrix, rows, columns, levels=(0, 1))
        QTest.qWait(20)
        return made

    matrix = np.linspace(0, 1, 28).reshape(7, 4)
    rows = ["a", "b", "c", "d", "e", "f", "g"]
    short, long = ["cats", "chase", "mice", "end"], ["cats", "chase", "miceeeeeeeeet", "end"]
    shown = plot(short)
    assert not shown.top_axis.is_rotated()
    fresh = plot(long)
    assert fresh.top_axis.is_rotated(), "the long word does not fit side by side: the test needs it upright"
    shown.show_matrix(matrix, rows, long, levels=(0, 1))
    QTest.qWait(20)
    assert shown.top_axis.is_rotated()
    assert shown.grab().toImage() == fresh.grab().toImage()
    shown.show_matrix(matrix, rows, short, levels=(0, 1))  # and flat again when the words are short again
    QTest.qWait(20)
    assert not shown.top_axis.is_rotated()
    assert shown.grab().toImage() == plot(short).grab().toImage()



@pytest.mark.parametrize("zoomed", [False, True])
def test_every_label_stands_on_a_whole_pixel_along_its_edge(make_window, zoomed):
    """A range reached through a history of zooms can differ from the same range set fresh in its last
    bit; a label placed at 138.9375 px in one and a hair less in the other crossed a glyph's rounding
    edge and was drawn otherwise (an X11 random walk, seed 68). On whole pixels it is drawn alike."""
    window = make_window(sentence=sentence_of(200 if zoomed else 7))
    heatmap = window.heatmap
    window.controller.set_hovered(3, LOOKING)
    QtWidgets.QApplication.processEvents()
    assert heatmap.is_zoomable() == zoomed
    for width in (1280, 1281, 1282):  # a short pane a pixel wider moves the square plot half a pixel
        window.resize(width, 560)
        QtWidgets.QApplication.processEvents()
        for axis, along in ((heatmap.left_axis, QtCore.QRectF.y), (heatmap.top_axis, QtCore.QRectF.x)):
            drawn = axis.drawn_labels()
            assert len(drawn) > 1 and 3 in dict(drawn)
            assert [along(rect) for _, rect in drawn] == [round(along(rect)) for _, rect in drawn]
