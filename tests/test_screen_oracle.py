"""The screen oracle's handling of tooltips: they are windows of their own, over the window on an X
server's screen, so the oracle hides them before it compares; one that a view keeps showing (the tip
of the cell under a resting pointer while a decoder writes) is left out of the comparison instead.
And of a repaint still queued when it compares, which the event loop would paint before anyone saw."""

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



def test_a_repaint_still_queued_is_painted_before_the_comparison(qtbot):
    """The comparison runs the event loop a few times first (for tips and popups). A timer's slot in
    the last of those passes (the status bar clearing its message after 4 s) asks for a repaint that
    the event loop paints next, before anyone sees the screen. Cleared in each pass the comparison runs."""
    for passes in range(1, 20):
        window = QtWidgets.QMainWindow()
        window.setCentralWidget(QtWidgets.QLabel("a window with a status bar"))
        window.resize(320, 120)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        window.statusBar().showMessage("a message for a few seconds")
        QTest.qWait(50)  # painted on the screen
        left = [passes]

        def clear_in_a_later_pass(left=left, window=window):
            left[0] -= 1
            if left[0]:
                QtCore.QTimer.singleShot(0, clear_in_a_later_pass)
            else:
                window.statusBar().clearMessage()

        QtCore.QTimer.singleShot(0, clear_in_a_later_pass)
        check_backing_store(window, f"a message cleared in pass {passes}")
        if left[0]:  # the comparison ran fewer passes than this
            break
    assert passes > 2
    qtbot.waitUntil(lambda: not left[0])  # the last chain ends before its window goes
