"""The matrix plot of the heatmap and the lessons: masked cells are hatched and labelled, never coloured as 0;
values only when they fit; labels never overlap."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6 import QtCore, QtGui, QtTest, QtWidgets

from attention_explorer import engine
from attention_explorer.views.matrix_plot import MatrixPlot, shared_levels, symmetric_levels
from screen_oracle import check_backing_store, check_same_picture, settle


def _heatmap(qtbot, width=700, height=500):
    heatmap = MatrixPlot()
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
    assert heatmap.written_text(0, 5) == "−∞"
    assert heatmap.written_text(1, 0) == f"{trace.heads[0].masked[1, 0]:.2f}"
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
    assert heatmap.values_written()
    heatmap.show_matrix(np.eye(40), [str(i) for i in range(40)], [str(i) for i in range(40)])
    QtWidgets.QApplication.processEvents()
    assert not heatmap.values_written()


def _no_two_overlap(axis) -> bool:
    rects = [rect for _, rect in axis.drawn_labels()]
    return not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


def test_crowded_column_labels_stand_upright_and_never_overlap(qtbot):
    heatmap = _heatmap(qtbot, width=360, height=300)
    words = ["preposition", "determiner", "adjective", "noun"]
    heatmap.show_matrix(np.zeros((2, 4)), ["a", "b"], words)
    QtWidgets.QApplication.processEvents()
    assert heatmap.top_axis.is_rotated()
    assert [i for i, _ in heatmap.top_axis.drawn_labels()] == [0, 1, 2, 3] and _no_two_overlap(heatmap.top_axis)
    heatmap.show_matrix(np.zeros((2, 2)), ["a", "b"], ["x", "y"])
    QtWidgets.QApplication.processEvents()
    assert not heatmap.top_axis.is_rotated()


def test_outline_and_message(qtbot):
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(np.ones((3, 3)), list("abc"), list("abc"))
    heatmap.set_outlined([(0, 1), (1, 0)])
    assert heatmap.outlined_cells() == [(0, 1), (1, 0)]
    heatmap.show_message("nothing here")
    assert heatmap.shown_matrix() is None and heatmap.message.isVisible()


def test_colour_scales_for_side_by_side_and_differences():
    assert shared_levels(np.array([[0.0, 2.0]]), np.array([[-1.0, -np.inf]])) == (-1.0, 2.0)
    assert symmetric_levels(np.array([[0.2, -0.5]])) == (-0.5, 0.5)
    assert symmetric_levels(np.zeros((2, 2))) == (-1.0, 1.0)


def test_values_are_inked_to_read_on_their_cells(qtbot):
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(np.array([[0.0, 1.0]]), ["a"], ["x", "y"], levels=(0, 1), colormap="viridis")
    ink = {(label.x, label.y): label.color.name() for label in heatmap.values.labels()}
    assert ink == {(0, 0): "#ffffff", (1, 0): "#000000"}  # white on viridis' dark purple, black on its yellow


def test_masked_words_sit_on_a_plain_patch_over_the_hatching(qtbot):
    heatmap = _heatmap(qtbot)
    mask = np.triu(np.ones((3, 3), dtype=bool), k=1)
    heatmap.show_matrix(np.where(mask, -np.inf, 1.0), list("abc"), list("abc"), masked_text="−∞")
    assert len(heatmap.hatch.masked_rects()) == 2                       # one hatched run per row with later words
    assert sorted((label.y, label.x) for label in heatmap.masked_values.labels()) == [(0, 1), (0, 2), (1, 2)]
    assert heatmap.masked_values.backdrop is not None


def test_a_long_sentence_thins_its_labels_and_keeps_the_focused_word(qtbot):
    heatmap = _heatmap(qtbot, width=500, height=400)
    words = [f"word{i}" for i in range(40)]
    heatmap.show_matrix(np.full((40, 40), 1 / 40), words, words, levels=(0, 1))
    heatmap.set_focus(23, None, words=(23, 23))
    QtWidgets.QApplication.processEvents()
    for axis in (heatmap.left_axis, heatmap.top_axis):
        drawn = [i for i, _ in axis.drawn_labels()]
        assert 23 in drawn and len(drawn) < 40 and _no_two_overlap(axis)
    assert heatmap.row_highlight.isVisible() and not heatmap.col_highlight.isVisible()
    assert 23 in heatmap.visible_cells()[0]


def test_a_cell_tip_names_the_row_the_column_and_the_value(qtbot):
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(np.array([[0.25, -np.inf]]), ["sat"], ["cat", "mat"], masked_text="−∞")
    assert heatmap.cell_tip(0, 0) == "sat, cat: 0.25"
    assert heatmap.cell_tip(0, 1) == "sat, mat: masked, −∞"


def test_a_tall_narrow_matrix_zooms_its_rows_and_keeps_every_column(qtbot):
    heatmap = _heatmap(qtbot, width=500, height=300)
    rows = [f"word{i}" for i in range(40)]
    heatmap.show_matrix(np.random.default_rng(0).random((40, 8)), rows, [f"h{i}" for i in range(8)])
    QtWidgets.QApplication.processEvents()
    visible_rows, visible_cols = heatmap.visible_cells()
    assert heatmap.is_zoomable() and len(visible_rows) < 40 and list(visible_cols) == list(range(8))
    width, height = heatmap.frame.cell_size()
    assert width > height >= 12  # the columns fill the pane; the rows are readable


def test_a_title_longer_than_the_pane_ends_in_an_ellipsis_and_is_whole_again_when_it_widens(qtbot):
    title = "attention weights softmax(QKᵀ/√d_k) — MiniLM-L6 (encoder), layer 1, head 1 of 12"
    heatmap = _heatmap(qtbot, width=300)
    heatmap.show_matrix(np.eye(3), ["a", "b", "c"], ["a", "b", "c"], title=title)
    QtWidgets.QApplication.processEvents()
    shown = heatmap.title_item.text
    assert heatmap.title() == title and shown.endswith("…") and title.startswith(shown[:-1])
    assert heatmap.title_item.geometry().right() <= heatmap.graphics.viewport().width()
    heatmap.resize(1000, 500)
    qtbot.waitUntil(lambda: heatmap.title_item.text == title)


@pytest.mark.parametrize(("pixels", "most_labels"), [(30, 2), (60, 3), (400, 11)])
def test_a_short_colour_bar_writes_only_the_numbers_that_fit(qtbot, pixels, most_labels):
    """pyqtgraph always wrote its coarsest ticks: 1.0, 0.8, … 0 on top of one another on a 30-pixel bar."""
    from attention_explorer.views.colour_bar import _FittingAxis

    axis = _FittingAxis("right")
    values = [v for _spacing, level in axis.tickValues(0.0, 1.0, pixels)[:1] for v in level]
    line = QtGui.QFontMetricsF(QtGui.QFont()).height()
    assert 2 <= len(values) <= most_labels
    assert pixels / (len(values) - 1) >= line * 1.5 or len(values) == 2


def test_a_value_that_rounds_to_zero_is_written_without_a_sign(qtbot):
    """The compare lesson's difference map read "−0.00" where nothing had changed."""
    plot = MatrixPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 400)
    plot.show()
    plot.show_matrix(np.array([[-0.0004, 0.0004], [-0.25, 0.0]]), ["a", "b"], ["a", "b"], value_format="{:+.2f}")
    QtWidgets.QApplication.processEvents()
    assert [[plot.written_text(r, c) for c in range(2)] for r in range(2)] == [["0.00", "0.00"], ["-0.25", "0.00"]]


def test_every_column_of_cells_is_drawn_as_wide_as_the_others(qtbot):
    """pyqtgraph hands the cells over as an indexed image, which Qt scales wider than asked (8 cells
    to 586 pixels came out 74.5 pixels each): the last column was cut short on screen and in PNGs."""
    heatmap = _heatmap(qtbot, width=700, height=640)
    columns = 8
    heatmap.show_matrix(np.tile(np.linspace(0, 1, columns), (columns, 1)), list("abcdefgh"), list("abcdefgh"),
                        levels=(0, 1))
    QtWidgets.QApplication.processEvents()
    assert heatmap.image.qimage.format() == QtGui.QImage.Format.Format_Indexed8  # the case this guards
    picture = heatmap.grab().toImage()
    ratio = picture.devicePixelRatio()
    view = heatmap.graphics
    cells = view.mapFromScene(heatmap.image.mapRectToScene(heatmap.image.boundingRect())).boundingRect()
    corner, width, height = view.mapTo(heatmap, cells.topLeft()), cells.width(), cells.height()
    row = round((corner.y() + height / (6 * columns)) * ratio)  # above the values written in the first row
    span = range(round((corner.x() - 3) * ratio), round((corner.x() + width + 3) * ratio))
    colours = [picture.pixel(x, row) for x in span]
    edges = [x for x in range(1, len(colours)) if colours[x] != colours[x - 1]]  # both ends and between cells
    assert len(edges) == columns + 1, edges
    widths = np.diff(edges)
    assert widths.max() - widths.min() <= 1, widths


def test_cells_masked_by_a_sliding_window_are_hatched_the_other_way(qtbot):
    """Ahead of the diagonal: the causal mask, hatched "/"; too far back (a window of 3): hatched "\\"."""
    n = 8
    i, j = np.indices((n, n))
    mask = (j > i) | (j <= i - 3)
    heatmap = _heatmap(qtbot)
    weights = np.where(mask, 0.0, 1.0 / np.minimum(i + 1, 3))
    heatmap.show_matrix(weights, list("abcdefgh"), list("abcdefgh"), mask=mask, levels=(0, 1), masked_text="0")
    heatmap.graphics.grab()  # paints the hatch
    ahead, behind = heatmap.hatch._drawn[1]
    assert len(ahead[0]) and len(behind[0])
    for x1, y1, x2, y2 in ahead[0]:  # "/": x grows as y falls
        assert (x2 - x1) * (y2 - y1) <= 0
    for x1, y1, x2, y2 in behind[0]:  # "\": x and y grow together
        assert (x2 - x1) * (y2 - y1) >= 0
    image = heatmap.graphics.grab().toImage()
    assert not image.isNull()


def test_a_read_only_mask_given_again_is_not_read_again_and_a_changed_one_is(qtbot, monkeypatch):
    """A real model gives every layer of its text one read-only causal mask: finding its runs reads
    every cell (54 ms a layer change at 8,192 tokens), so a second layer keeps the runs; a mask that
    can change, or another one, is read again."""
    from attention_explorer.engine.attention import causal_mask
    from attention_explorer.views import hatch

    read, runs_of = [], hatch.mask_runs
    monkeypatch.setattr(hatch, "mask_runs", lambda mask: read.append(mask.shape) or runs_of(mask))
    n = 1100  # past REGION_CELLS: the mask is handed to the hatch as it is
    words = [f"w{i}" for i in range(n)]
    mask = causal_mask(n)
    mask.flags.writeable = False
    heatmap = _heatmap(qtbot)
    rng = np.random.default_rng(0)
    for _layer in range(3):
        heatmap.show_matrix(np.where(mask, 0.0, rng.random((n, n))).astype(np.float32), words, words, mask=mask,
                            levels=(0, 1))
    assert read == [(n, n)]
    assert len(heatmap.hatch.masked_rects()) == n - 1  # every row but the last: one run to its end
    writable = causal_mask(n)
    heatmap.show_matrix(np.zeros((n, n), dtype=np.float32), words, words, mask=writable, levels=(0, 1))
    writable[-1, 0] = True  # the same object, changed: its runs are found again
    heatmap.show_matrix(np.zeros((n, n), dtype=np.float32), words, words, mask=writable, levels=(0, 1))
    assert read == [(n, n)] * 3
    assert len(heatmap.hatch.masked_rects()) == n


def test_the_readout_says_why_a_cell_is_masked(qtbot):
    from attention_explorer.engine.softmax import why_masked

    assert why_masked(1, 4, "cat", "mat") == "mat comes after cat"
    assert why_masked(6, 1, "tree", "the") == "the is too far back for the layer's sliding window"


def _docked(qtbot, width: int, height: int, **options) -> tuple[QtWidgets.QWidget, MatrixPlot]:
    """A square-celled plot in a plain host, as a docked view is: it can be made smaller than its
    least size, which a window cannot."""
    host = QtWidgets.QWidget()
    qtbot.addWidget(host)
    host.resize(width, height)
    plot = MatrixPlot(parent=host, min_size=None, square_cells=True, **options)
    plot.resize(width, height)
    host.show()
    qtbot.waitExposed(host)
    return host, plot


def _then_fresh(qtbot, heatmap: MatrixPlot, matrix: np.ndarray, words: list[str], **options
                ) -> tuple[QtCore.QSizeF, QtWidgets.QWidget, MatrixPlot]:
    """Show `matrix` over `words` in `heatmap`, then in a plot built fresh at its size: the heatmap's plot
    size as that call left it, and the fresh plot with its host, once both have settled."""
    heatmap.show_matrix(matrix, words, words, levels=(0, 1), **options)
    at_once = heatmap.plot.maximumSize()
    host, fresh = _docked(qtbot, heatmap.width(), heatmap.height())
    fresh.show_matrix(matrix, words, words, levels=(0, 1), **options)
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    return at_once, host, fresh


def test_a_pane_shorter_than_a_zoomed_cell_opens_on_one_row_of_square_cells(qtbot):
    """A 63-word heatmap in a window made small (its cells' pane a few pixels tall) asked for cells 18 px
    wide and a third of a row: the limits stretched that to one row and the square lock then widened the
    columns about the middle, so the view opened left of the first column, on a range that another
    change of range moved again (a fresh view given it showed other columns)."""
    _host, heatmap = _docked(qtbot, 370, 74)
    words = [f"w{i}" for i in range(63)]
    heatmap.show_matrix(np.random.default_rng(0).random((63, 63)), words, words, levels=(0, 1))
    QtWidgets.QApplication.processEvents()
    view = heatmap.view
    assert heatmap.is_zoomable() and 0 < view.height() < 18
    (x0, x1), (y0, y1) = view.viewRange()
    assert y1 - y0 == pytest.approx(1.0)  # one row, whole
    assert (x1 - x0) / view.width() == pytest.approx((y1 - y0) / view.height(), rel=0.05)  # square cells
    assert x0 > -1.5  # from the first column (within pyqtgraph's rounding of the pane to whole pixels)
    view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)  # the same range asked again stays as it is
    assert view.viewRange() == [[x0, x1], [y0, y1]]


def test_a_zoomed_matrix_framed_before_its_pane_has_a_size_raises_nothing(qtbot, monkeypatch):
    """A resized window framed the heatmap while its cells' pane was still laid out at no size: the
    square cells' size, taken from the pane, was 0 and the frame divided by it (a crash dialog)."""
    _host, heatmap = _docked(qtbot, 370, 300)
    words = [f"w{i}" for i in range(63)]
    heatmap.show_matrix(np.random.default_rng(0).random((63, 63)), words, words, levels=(0, 1))
    QtWidgets.QApplication.processEvents()
    monkeypatch.setattr(heatmap.view, "rect", lambda: QtCore.QRectF())  # the pane before its layout
    heatmap.frame.update((63, 63), None, force=True)
    assert heatmap.frame.zoomable


def test_a_pane_made_shorter_than_upright_words_need_gives_the_plot_the_pane_once_they_lie_flat(qtbot):
    """A window made smaller (a dock opened beside the heatmap) left the plot as tall as its upright
    column words had needed, past the bottom of the pane, once they lay flat: its last rows were cut,
    and a fresh view showed them."""
    host, heatmap = _docked(qtbot, 361, 445)
    heatmap.show_matrix(np.random.default_rng(0).random((9, 3)), list("abcdefghi"), ["<s>", "x" * 20, "y" * 20],
                        levels=(0, 1))
    QtWidgets.QApplication.processEvents()
    assert heatmap.top_axis.is_rotated()
    least = heatmap.graphics.ci.effectiveSizeHint(QtCore.Qt.SizeHint.MinimumSize).height()
    host.resize(361, int(least) - 12)
    heatmap.resize(361, int(least) - 12)
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    assert not heatmap.top_axis.is_rotated()
    assert heatmap.graphics.ci.geometry().height() == heatmap.graphics.viewport().height()


def test_shorter_words_in_a_pane_too_narrow_for_the_plot_give_it_the_width_a_fresh_view_takes(qtbot):
    """Long row words made the plot's least width larger than a narrow pane; shorter ones then left the
    plot as wide as the long ones had needed, its cells 73 px wide where a fresh view's were 8 (the
    central item kept the least size Qt had cached for the long words)."""
    _host, heatmap = _docked(qtbot, 156, 488)
    long = [f"a-rather-long-{i}" for i in range(9)]
    heatmap.show_matrix(np.random.default_rng(0).random((9, 9)), long, long, levels=(0, 1))
    QtWidgets.QApplication.processEvents()
    short, matrix = ["cats", "chase", "mice"], np.random.default_rng(1).random((3, 3))
    heatmap.show_matrix(matrix, short, short, levels=(0, 1))
    _fresh_host, fresh = _docked(qtbot, 156, 488)
    fresh.show_matrix(matrix, short, short, levels=(0, 1))
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    assert heatmap.graphics.ci.geometry() == fresh.graphics.ci.geometry()
    assert heatmap.view.boundingRect() == fresh.view.boundingRect()


def test_longer_words_that_leave_no_room_for_cells_decide_zoom_as_a_fresh_view_does(qtbot):
    """A pane 195 px wide: five short words zoomed (cells under 12 px), then ten words whose labels and
    colour bar leave no width at all for cells. The plot measured its fixed parts before its layout had
    grown to the longer labels, found 6 px for ten cells and stayed zoomed, with a Fit button; a fresh
    view measured them grown and found none (X11 walk, seed 90)."""
    _host, heatmap = _docked(qtbot, 195, 448)
    fit = heatmap.make_fit_button()
    short = ["cat", "ate", "the", "fish", "."]
    heatmap.show_matrix(np.random.default_rng(0).random((5, 5)), short, short, levels=(0, 1))
    QtWidgets.QApplication.processEvents()
    long = ["it", "was", "tired", "because", "the", "long", "day", "had", "ended", "unexpectedly-late"]
    matrix = np.random.default_rng(1).random((10, 10))
    heatmap.show_matrix(matrix, long, long, levels=(0, 1))
    _fresh_host, fresh = _docked(qtbot, 195, 448)
    fresh_fit = fresh.make_fit_button()
    fresh.show_matrix(matrix, long, long, levels=(0, 1))
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    assert heatmap.frame.zoomable == fresh.frame.zoomable
    assert fit.isHidden() == fresh_fit.isHidden()
    assert heatmap.plot.maximumSize() == fresh.plot.maximumSize()


def test_much_longer_words_after_a_zoomed_matrix_get_at_once_the_cells_a_fresh_view_gives(qtbot):
    """A pane 341 × 165: seven short words zoomed (the plot fills the pane), then two words elided to the
    longest a label may be, their cells fitting whole. The plot kept the pane's size, so its own layout
    did not lay out again when the words widened their axis: its fixed parts were measured as the short
    words had them, and the cells came out too narrow, fitted again pass after pass (an X11 walk, seed 108,
    was left with cells 8 px wide where a fresh view gave them 15)."""
    _host, heatmap = _docked(qtbot, 341, 165)
    short = ["<s>", "the", "cat", "sat", "on", "mat", "</s>"]
    titles = ("word looking", "word looked at")
    heatmap.show_matrix(np.random.default_rng(0).random((7, 7)), short, short, levels=(0, 1), axis_titles=titles)
    QtWidgets.QApplication.processEvents()
    assert heatmap.frame.zoomable
    at_once, _fresh_host, fresh = _then_fresh(qtbot, heatmap, np.random.default_rng(1).random((2, 2)),
                                              ["a" * 300, "aaaa"], axis_titles=titles)
    assert not fresh.frame.zoomable and not heatmap.frame.zoomable
    assert at_once == heatmap.plot.maximumSize() == fresh.plot.maximumSize()
    assert heatmap.view.geometry() == fresh.view.geometry()


def test_a_long_word_after_short_ones_that_fitted_whole_gets_the_cells_a_fresh_view_gives(qtbot):
    """A pane 330 × 130: two short words fitted whole (the plot held to their width), then one word elided
    to the longest a label may be. Its axis needed more than the plot's old width: the layout ran past
    the plot's edge and the cell took the shortfall, so the plot less its cell read 37 px short of what
    the labels and the colour bar take, and the cell came out 8 px wide where a fresh view's was 36 (a
    generation's first token in a narrow pane, offscreen walk, seed 127)."""
    _host, heatmap = _docked(qtbot, 330, 130)
    titles = ("word looking", "word looked at")
    heatmap.show_matrix(np.full((1, 2), 0.5), ["·ly"], ["·ly", "on"], levels=(0, 1), axis_titles=titles)
    QtWidgets.QApplication.processEvents()
    assert not heatmap.frame.zoomable
    at_once, _fresh_host, fresh = _then_fresh(qtbot, heatmap, np.full((1, 1), 0.5), ["a" * 40], axis_titles=titles)
    assert at_once == heatmap.plot.maximumSize() == fresh.plot.maximumSize()
    assert heatmap.view.geometry() == fresh.view.geometry()
    assert heatmap.cell_px() == fresh.cell_px() > 30


def test_a_title_set_where_there_was_none_takes_its_height_from_the_cells_as_in_a_fresh_view(qtbot):
    """The same one-word matrix, first untitled and then titled: the title took a line of the pane's
    height, but only a new shape or new words fitted the plot again, so the cells kept the height they
    had without it and ran under the pane's bottom edge (found by a fuzzer of plot updates). In the
    heatmap's title size: an empty title takes the height of a line of the default size."""
    matrix, words, titles = np.full((1, 1), 0.5), ["the"], ("word looking", "word looked at")
    _host, heatmap = _docked(qtbot, 330, 250, title_size="10pt")
    heatmap.show_matrix(matrix, words, words, levels=(0, 1), axis_titles=titles)
    settle()
    title = "scaled scores QKᵀ/√d_k — layer 2, head 1 of 9"
    heatmap.show_matrix(matrix, words, words, levels=(0, 1), axis_titles=titles, title=title)
    settle()
    _fresh_host, fresh = _docked(qtbot, 330, 250, title_size="10pt")
    fresh.show_matrix(matrix, words, words, levels=(0, 1), axis_titles=titles, title=title)
    settle()
    assert heatmap.plot.maximumSize() == fresh.plot.maximumSize()
    assert heatmap.view.geometry() == fresh.view.geometry()
    check_same_picture(heatmap, fresh, "a title set on an untitled plot")


def test_a_pane_with_no_room_for_cells_frames_no_word_and_its_screen_matches_a_repaint(qtbot):
    """A cross-attention of one target word over four source words in a pane too short for a row of
    cells (the view 0 px tall): the focused row's frame was a line of no height, which the repaint of
    its place left out and a full repaint drew (offscreen walk, seed 109). No room, no frame."""
    host, heatmap = _docked(qtbot, 300, 84)
    heatmap.show_matrix(np.random.default_rng(0).random((1, 4)), ["›x"], ["!!!", "???", "...", "</s>"],
                        levels=(0, 1), axis_titles=("target token looking", "source token looked at"))
    QtWidgets.QApplication.processEvents()
    assert heatmap.view.height() < 1
    for focus in ((0, None), (None, 2), (0, None)):
        heatmap.set_focus(*focus)
        assert not heatmap.row_highlight.isVisible() and not heatmap.col_highlight.isVisible()
        check_backing_store(host, f"focus {focus}")
    host.resize(300, 200)
    heatmap.resize(300, 200)
    QtWidgets.QApplication.processEvents()
    assert heatmap.view.height() >= 1 and heatmap.row_highlight.isVisible()  # room again: the frame is back
    check_backing_store(host, "room again")


@pytest.mark.parametrize("by", ["key", "wheel"])
def test_zooming_in_a_pane_a_cell_wide_keeps_the_cells_square(qtbot, by):
    """A pane made so narrow that one zoomed column fills the view's width: the view's least range held
    the columns while the rows zoomed on, and once a word was focused the cells were drawn 8 px wide
    and 10 px tall, not square (a view given the same range squared them again; found by a fuzzer of
    plot updates)."""
    host, heatmap = _docked(qtbot, 330, 160, title_size="10pt")
    words = ["mat", "sat", "a" * 40, "the", "a"] * 14
    heatmap.show_matrix(np.random.default_rng(0).random((70, 70)), words, words, levels=(0, 1),
                        axis_titles=("word looking", "word looked at"), title="attention weights")
    settle()
    host.resize(260, 140)
    heatmap.resize(260, 140)
    settle()
    assert heatmap.frame.zoomable
    assert heatmap.frame.cell_size()[0] == pytest.approx(heatmap.view.width())  # one column fills the width
    if by == "key":
        heatmap.graphics.setFocus()
        QtTest.QTest.keyClick(heatmap.graphics, QtCore.Qt.Key.Key_Plus)
    else:
        centre = heatmap.graphics.mapFromScene(heatmap.view.sceneBoundingRect().center())
        wheel = QtGui.QWheelEvent(QtCore.QPointF(centre), QtCore.QPointF(heatmap.graphics.mapToGlobal(centre)),
                                  QtCore.QPoint(0, 0), QtCore.QPoint(0, 120), QtCore.Qt.MouseButton.NoButton,
                                  QtCore.Qt.KeyboardModifier.NoModifier, QtCore.Qt.ScrollPhase.NoScrollPhase, False)
        QtWidgets.QApplication.sendEvent(heatmap.graphics.viewport(), wheel)
    settle()
    heatmap.set_focus(7, None)
    settle()
    width, height = heatmap.frame.cell_size()
    assert width == pytest.approx(height, abs=0.01)


def test_a_shorter_text_so_far_is_drawn_from_the_corner_of_the_whole_text_s_colours(qtbot):
    """A decoder's text so far holds the first rows of its whole text's weights: the plot draws it from
    the colours and pixels it made for the whole text (no colouring anew), and it looks as a plot made
    fresh for it; a matrix with one number changed is coloured anew."""
    from attention_explorer.image_export import render_image, svg_bytes

    n = 60
    words = [f"w{i}" for i in range(n)]
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    weights = np.where(mask, 0.0, np.random.default_rng(3).random((n, n))).astype(np.float32)
    heatmap = _heatmap(qtbot)
    heatmap.show_matrix(weights, words, words, mask=mask, levels=(0, 1), by_row=True)
    settle()
    whole_pixels = heatmap.image.qimage.data
    for k in (59, 40, 58, 12):
        part = weights[:k, :k].copy()  # the same numbers, made again for the shorter text
        heatmap.show_matrix(part, words[:k], words[:k], mask=mask[:k, :k].copy(), levels=(0, 1), by_row=True)
        settle()
        assert np.shares_memory(heatmap.image.qimage.data, whole_pixels)
        fresh = _heatmap(qtbot)
        fresh.show_matrix(part, words[:k], words[:k], mask=mask[:k, :k].copy(), levels=(0, 1), by_row=True)
        settle()
        assert not np.shares_memory(fresh.image.qimage.data, whole_pixels)
        check_same_picture(heatmap, fresh, f"the first {k} rows")
        check_backing_store(heatmap, f"the first {k} rows")
        assert render_image(heatmap, 2) == render_image(fresh, 2)  # a figure of it: PNG, and SVG's cells
        assert svg_bytes(heatmap) == svg_bytes(fresh)
    changed = weights[:30, :30].copy()
    changed[20, 3] = 0.999
    heatmap.show_matrix(changed, words[:30], words[:30], mask=mask[:30, :30].copy(), levels=(0, 1), by_row=True)
    settle()
    assert not np.shares_memory(heatmap.image.qimage.data, whole_pixels)
    fresh = _heatmap(qtbot)
    fresh.show_matrix(changed, words[:30], words[:30], mask=mask[:30, :30].copy(), levels=(0, 1), by_row=True)
    settle()
    check_same_picture(heatmap, fresh, "a changed number")


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.booleans(),
       st.lists(st.sampled_from([np.inf, -np.inf, np.nan, 3e38, -3e38, 1.0]), max_size=4), st.data())
def test_a_cell_outside_the_mask_not_finite_is_found_whatever_the_numbers_around_it(rows, cols, masked, specials,
                                                                                    data):
    """The quick look (a finite sum: nothing to find) answers as looking at every cell does, with
    infinities and NaN inside or outside the mask and numbers large enough to overflow the sum."""
    from attention_explorer.views.matrix_plot import _unmasked_not_finite
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    block = rng.random((rows, cols), dtype=np.float32)
    for value in specials:
        block[rng.integers(rows), rng.integers(cols)] = value
    mask = rng.random((rows, cols)) < 0.4 if masked else None
    expected = bool((~np.isfinite(block) & (True if mask is None else ~mask)).any())
    assert _unmasked_not_finite(block, mask) == expected
