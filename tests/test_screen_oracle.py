"""The screen oracle's handling of tooltips: they are windows of their own, over the window on an X
server's screen, so the oracle hides them before it compares; one that a view keeps showing (the tip
of the cell under a resting pointer while a decoder writes) is left out of the comparison instead."""

from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from screen_oracle import check_backing_store, hide_tooltips


def _window(qtbot) -> QtWidgets.QLabel:
    window = QtWidgets.QLabel("a window with a tip over it")
    window.resize(320, 120)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_a_tip_shown_once_is_hidden_before_the_comparison(qtbot):
    window = _window(qtbot)
    QtWidgets.QToolTip.showText(window.mapToGlobal(QtCore.QPoint(20, 20)), "a tip", window)
    assert QtWidgets.QToolTip.isVisible()

    assert hide_tooltips() is None
    assert not QtWidgets.QToolTip.isVisible()
    check_backing_store(window, "a tip hidden")


def test_a_tip_a_view_keeps_showing_is_left_out_of_the_comparison(qtbot):
    window = _window(qtbot)
    at = window.mapToGlobal(QtCore.QPoint(20, 20))
    shown = []

    def show_again():  # as the heatmap does for the cell under the pointer at each new token
        shown.append(len(shown))
        QtWidgets.QToolTip.showText(at, f"token {len(shown)}", window)

    writer = QtCore.QTimer(interval=20, timeout=show_again)
    show_again()
    writer.start()
    QTest.qWait(100)  # a tip that has been up a while, as a resting pointer's is
    try:
        place = hide_tooltips()
        assert QtWidgets.QToolTip.isVisible()
        assert place is not None and not place.isEmpty()
        offset = place.topLeft() - at  # Qt puts a tip just below and right of where it is shown
        assert 0 <= offset.x() < 40 and 0 <= offset.y() < 40
        assert len(shown) > 50  # it was hidden again and again, and came back each time
        check_backing_store(window, "a tip that stays")
    finally:
        writer.stop()
        QtWidgets.QToolTip.hideText()
