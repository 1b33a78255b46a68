"""The next tokens' rows, one painted widget: what each row draws (its token cut to the column, its bar
as long as its probability, the written one bold), the whole token in a tooltip and in the clipboard,
and a step that changes nothing painting nothing."""

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attention_explorer.views.candidate_rows import BAR_GAP_PX, QtCandidateRows
from event_log import EventLog

WORD_PX = 110


@pytest.fixture
def rows(qtbot):
    widget = QtCandidateRows(5, WORD_PX)
    qtbot.addWidget(widget)
    widget.resize(400, widget.sizeHint().height())
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def row_centre(widget: QtCandidateRows, index: int) -> QtCore.QPoint:
    height = widget.height() // 5
    return QtCore.QPoint(20, index * height + height // 2)


def filled_px(widget: QtCandidateRows, index: int) -> int:
    """How many pixels of a row's bar, along its middle, are in the palette's highlight colour."""
    image = widget.grab().toImage()
    highlight = widget.palette().color(QtGui.QPalette.ColorRole.Highlight).rgb()
    y = row_centre(widget, index).y()
    return sum(image.pixel(x, y) == highlight for x in range(WORD_PX + BAR_GAP_PX, widget.width()))


def test_each_row_draws_its_token_its_share_and_the_written_one_bold(rows):
    rows.set_rows([("·the", 0.5, False), ("·a", 0.25, True), ("·mat", 0.0, False)])
    drawn = rows.rows()
    assert [(row.label, row.text, row.bold, row.percent) for row in drawn] == [
        ("·the", "·the", False, "50.0%"), ("·a", "·a", True, "25.0%"), ("·mat", "·mat", False, "0.0%")]
    groove = rows.width() - WORD_PX - BAR_GAP_PX - 3  # inside the groove's frame
    half, quarter, none = (filled_px(rows, i) for i in range(3))
    # the percentage written over the bar takes a few of its pixels
    assert groove / 2 - 25 <= half <= groove / 2 + 1 and groove / 4 - 25 <= quarter <= groove / 4 + 1
    assert none == 0 and filled_px(rows, 3) == 0  # no fourth row


def test_a_long_token_is_cut_to_its_column_and_whole_in_its_tip(rows, qtbot):
    long = "a token far longer than the column " * 3
    rows.set_rows([(long, 0.9, False), ("·b", 0.1, False)])
    cut = rows.rows()[0].text
    assert cut.endswith("…") and long.startswith(cut[:-1])
    assert QtGui.QFontMetrics(rows.font()).horizontalAdvance(cut) <= WORD_PX
    point = row_centre(rows, 0)
    QtWidgets.QApplication.sendEvent(rows, QtGui.QHelpEvent(QtCore.QEvent.Type.ToolTip, point,
                                                            rows.mapToGlobal(point)))
    qtbot.waitUntil(QtWidgets.QToolTip.isVisible)
    assert QtWidgets.QToolTip.text() == f"{long.strip()}: 90.0%"
    below = QtCore.QPoint(20, rows.height() - 2)  # the fifth row's place, empty
    assert rows.row_at(below) is None and rows.row_at(row_centre(rows, 1)) == 1
    QtWidgets.QToolTip.hideText()


def test_the_menu_copies_the_token_under_the_pointer_or_every_row(rows):
    rows.set_rows([("·the", 0.6, False), ("·a", 0.4, False)])
    owner = QtWidgets.QWidget()
    menu = rows.copy_menu(row_centre(rows, 1), owner)
    assert [action.text() for action in menu.actions()] == ["Copy '·a'", "Copy every candidate"]
    assert menu.parent() is owner  # the window's, to delete once it closes
    menu.actions()[0].trigger()
    assert QtWidgets.QApplication.clipboard().text() == "·a"
    below = rows.copy_menu(QtCore.QPoint(20, rows.height() - 2), owner)  # no row there: every row only
    assert [action.text() for action in below.actions()] == ["Copy every candidate"]
    below.actions()[0].trigger()
    assert QtWidgets.QApplication.clipboard().text() == "·the\t60.0%\n·a\t40.0%"
    rows.set_rows([])
    assert rows.copy_menu(row_centre(rows, 0), owner) is None


def test_the_same_rows_again_paint_nothing_and_other_rows_paint_once(rows, qtbot):
    rows.set_rows([("·the", 0.6, False), ("·a", 0.4, True)])
    QtWidgets.QApplication.processEvents()
    with EventLog((QtCore.QEvent.Type.Paint, QtCore.QEvent.Type.LayoutRequest), rows) as log:
        rows.set_rows([("·the", 0.6, False), ("·a", 0.4, True)])
        QtWidgets.QApplication.processEvents()
    assert log.seen == []
    with EventLog((QtCore.QEvent.Type.Paint, QtCore.QEvent.Type.LayoutRequest), rows) as log:
        rows.set_rows([("·the", 0.6, True), ("·a", 0.4, False)])
        QtWidgets.QApplication.processEvents()
    assert [kind for _, kind in log.seen] == [QtCore.QEvent.Type.Paint]


def test_a_larger_font_cuts_the_tokens_again_and_makes_the_rows_taller(rows):
    token = "·wonderful"
    rows.set_rows([(token, 1.0, False)])
    assert rows.rows()[0].text == token
    before = rows.sizeHint().height()
    font = rows.font()
    font.setPointSize(font.pointSize() * 3)
    rows.setFont(font)
    assert rows.rows()[0].text.endswith("…") and rows.sizeHint().height() > before
