"""The random walk's pointer on a real X server: moved by xdotool, as a user's hand moves it, so the
window hears the motion the way it does on a desktop (the X server's events, Qt's xcb platform,
pyqtgraph's rate limit and hover logic), not QTest's synthetic events.

Used by test_random_walk.py's --pointer x11 under Xvfb (see test_walk_on_x11.py). Other windows the
walk opens (the lessons) are put beside the main window: on X11 the screen's picture of a window
holds whatever overlaps it, and the backing-store oracle compares that picture. The census window goes
beside it too; the oracle compares each of the two only while the other does not cover it.
"""

from __future__ import annotations

import subprocess

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from walk_actions import Walk

BESIDE_PX = 20  # the gap between the main window and the lessons window


class PointerWalk(Walk):
    def _mouse_to(self, widget, point: QtCore.QPoint) -> None:
        """Arrive at `point` from a neighbouring pixel, at a hand's pace. A point off the screen (a zoomed
        heatmap's row label, left of a matrix scrolled to the right) is out of a hand's reach: skipped."""
        target = widget.mapToGlobal(point)
        if not widget.screen().geometry().adjusted(0, 0, -2, -1).contains(target):
            return
        for where in (target + QtCore.QPoint(2, 1), target):
            subprocess.run(["xdotool", "mousemove", str(where.x()), str(where.y())], check=True)
            QTest.qWait(15)

    def lesson(self):
        super().lesson()
        self._beside(self.window.lessons_window)

    def _census_opened(self, window) -> None:
        self._beside(window)

    def window_sizes(self) -> tuple[tuple[int, int], ...]:
        """Those that leave room on the screen for the lessons beside the main window."""
        return tuple((width, height) for width, height in super().window_sizes() if width <= 1280 and height <= 900)

    def step(self) -> str:
        """An action; then the other windows are put beside the main one again if it changed its size
        itself (its least width follows the model's name in the model box: seed 66, action 446)."""
        name = super().step()
        QtGui.QGuiApplication.sync()  # the server has told Qt of every size it gave the window
        QtWidgets.QApplication.processEvents()
        if self.window.frameGeometry() != getattr(self, "_placed_beside", None):
            self._window_resized()
        return name

    def _window_resized(self) -> None:
        QTest.qWait(20)
        self._beside(self.window.lessons_window)
        self._beside(self.window.pretrained.census.window)
        self._placed_beside = self.window.frameGeometry()

    def _beside(self, window) -> None:
        """Put another window of the app right of the main one, off the picture the oracle compares."""
        if window is not None and window.isVisible():
            window.move(self.window.frameGeometry().right() + BESIDE_PX, 0)
            QTest.qWait(20)
