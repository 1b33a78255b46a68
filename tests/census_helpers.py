"""Running the census from its window in tests, as a user does: Run, then wait for the grid."""

from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest


def run_census(qtbot, census) -> None:
    QTest.mouseClick(census.run_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: census.census.result is not None and not census.census.busy, timeout=60_000)
    settle_layout(qtbot)


def settle_layout(qtbot) -> None:
    """Let the grid take its final size (the plot refits on the next turn of the event loop)."""
    for _ in range(3):
        QTest.qWait(10)
        QtWidgets.QApplication.processEvents()
