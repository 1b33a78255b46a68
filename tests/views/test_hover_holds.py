"""Hover that holds: handing the pointer from a heatmap cell to its row's or column's label keeps the
word in focus, and a pointer that glides onto a cell and stops there always focuses it."""

from PySide6 import QtCore
from PySide6.QtTest import QTest

from attention_explorer.controller import LOOKED_AT, LOOKING
from gui_helpers import hover_cell


def _point(heatmap, x: float, y: float) -> QtCore.QPoint:
    return heatmap.graphics.mapFromScene(heatmap.plot.getViewBox().mapViewToScene(QtCore.QPointF(x, y)))


def _glide(widget, points: list[QtCore.QPoint]) -> None:
    """Moves faster than pyqtgraph's rate limit (a quick hand), no pause between them."""
    for point in points:
        QTest.mouseMove(widget, point, delay=1)


def test_a_cell_handed_to_its_row_label_keeps_the_word(make_window, qtbot):
    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    heatmap, c = window.heatmap, window.controller
    hover_cell(heatmap, 2, 0)
    assert (c.focus, c.focus_role) == (2, LOOKING)
    seen = []
    c.focus_changed.connect(seen.append)
    label = _point(heatmap, -0.5, 2) - QtCore.QPoint(14, 0)  # on the word "sat" left of the matrix
    QTest.qWait(15)
    QTest.mouseMove(heatmap.graphics.viewport(), label)
    QTest.qWait(30)
    assert (c.focus, c.focus_role) == (2, LOOKING)
    assert None not in seen, "the focus went away on the way from the cell to its label"


def test_a_cell_handed_to_its_column_label_keeps_the_word_looked_at(make_window):
    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    heatmap, c = window.heatmap, window.controller
    hover_cell(heatmap, 0, 1)
    QTest.qWait(15)
    seen = []
    c.focus_changed.connect(seen.append)
    QTest.mouseMove(heatmap.graphics.viewport(), _point(heatmap, 1, -0.5) - QtCore.QPoint(0, 12))
    QTest.qWait(30)
    assert (c.focus, c.focus_role) == (1, LOOKED_AT)
    assert None not in seen, "the focus went away on the way from the cell to its label"


def test_a_pointer_that_glides_onto_a_cell_and_stops_focuses_it(make_window, qtbot):
    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    heatmap, c = window.heatmap, window.controller
    hover_cell(heatmap, 0, 0)
    QTest.qWait(15)
    path = [_point(heatmap, 0.2 + 0.4 * i, 0.2 + 0.45 * i) for i in range(1, 10)]  # ends on the cell (4, 4)
    _glide(heatmap.graphics.viewport(), path)
    # pyqtgraph drops moves that come quicker than its rate limit, the last ones among them (on a busy
    # machine the moves may come slowly enough that none is dropped): the resting pointer focuses it
    # (an earlier cell of the same row focuses the word too: wait for the cell the pointer rests on)
    qtbot.waitUntil(lambda: c.focus == 4 and heatmap.readout.text() == heatmap.cell_text(4, 4), timeout=1000)


def test_a_move_pyqtgraph_heard_is_not_sent_again_when_the_pointer_rests(make_window, qtbot):
    """The resting pointer resends only a move pyqtgraph dropped: one it handled went through its hover
    work once already."""
    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    heatmap, c = window.heatmap, window.controller
    hover_cell(heatmap, 1, 1)
    heard = []
    heatmap.graphics.scene().sigMouseMoved.connect(heard.append)
    QTest.qWait(30)  # past pyqtgraph's rate limit: the next move is handled
    QTest.mouseMove(heatmap.graphics.viewport(), _point(heatmap, 3, 3))
    assert len(heard) == 1 and c.focus == 3
    QTest.qWait(60)  # the pointer rests past the resting pointer's delay
    assert len(heard) == 1


def test_a_cell_s_tooltip_goes_with_the_matrix_it_was_about(make_window, qtbot):
    """A new matrix under a pointer that stays still (the scores for the weights, a decoder's next text so
    far) took the readout and the focus with it, and left the tooltip naming the cell of the last one."""
    from PySide6 import QtWidgets

    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    heatmap, c = window.heatmap, window.controller
    hover_cell(heatmap, 3, 1)
    qtbot.waitUntil(QtWidgets.QToolTip.isVisible)
    assert QtWidgets.QToolTip.text() == heatmap.hover_tip()
    c.set_matrix("scores")
    qtbot.waitUntil(lambda: not QtWidgets.QToolTip.isVisible(), timeout=1000)  # Qt takes it down in 0.3 s
    other = window.sentence_box
    QtWidgets.QToolTip.showText(other.mapToGlobal(other.rect().center()), "another widget's tip", other)
    qtbot.waitUntil(QtWidgets.QToolTip.isVisible)
    c.set_matrix("weights")  # the heatmap draws again; a tip it did not show stays
    QTest.qWait(500)
    assert QtWidgets.QToolTip.isVisible() and QtWidgets.QToolTip.text() == "another widget's tip"
    QtWidgets.QToolTip.hideText()


def test_a_hover_lays_out_nothing_around_the_heatmap_and_paints_nothing_a_pass_late(make_window):
    """The readout's new text at each hover asked the heatmap's pane, the splitters and the window to
    lay out again, a pass of the event loop each, and the window was painted again for it; the readout
    itself, selectable, laid its text out in its paint and was painted again a pass later."""
    from PySide6 import QtWidgets

    from event_log import EventLog

    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    heatmap = window.heatmap
    hover_cell(heatmap, 1, 1)
    around = [window, *window.findChildren(QtWidgets.QSplitter), heatmap]
    for row in (3, 5, 7):
        QTest.qWait(30)  # past pyqtgraph's rate limit: the move is handled
        with EventLog({QtCore.QEvent.Type.LayoutRequest}, *around) as laid_out:
            QTest.mouseMove(heatmap.graphics.viewport(), _point(heatmap, 2, row))  # column 2 of the row
            QtWidgets.QApplication.processEvents()  # the pass that paints the window
            with EventLog({QtCore.QEvent.Type.Paint}, heatmap.readout) as painted_late:
                for _ in range(3):
                    QtWidgets.QApplication.processEvents()
        assert heatmap.readout.full_text() == heatmap.cell_text(row, 2)
        assert laid_out.seen == [] and painted_late.seen == [], row
