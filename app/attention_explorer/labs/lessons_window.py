"""The lessons window: every lesson panel as a tab, beside the main window and sharing its controller.

It is non-modal, so a learner can type in the main window and watch the open lesson follow. Only
the tab on screen recomputes (see LessonPanel); the others catch up when they are chosen.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import Controller
from .lesson_list import LESSON_LIST
from .lesson_panel import LessonPanel


def _scrolling(panel: QtWidgets.QWidget) -> QtWidgets.QScrollArea:
    """The panel in a scroll area: on a small screen the window fits and the lesson scrolls inside."""
    scroll = QtWidgets.QScrollArea()
    scroll.setWidget(panel)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
    return scroll


def _fitting_size(wanted: QtCore.QSize) -> QtCore.QSize:
    """`wanted`, or less where the screen is smaller (room left for the window's frame)."""
    screen = QtGui.QGuiApplication.primaryScreen()
    if screen is None:
        return wanted
    available = screen.availableGeometry().size()
    return QtCore.QSize(min(wanted.width(), available.width() - 20), min(wanted.height(), available.height() - 60))


class QtLessonsWindow(QtWidgets.QWidget):
    """A separate top-level window with one tab per lesson."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent, QtCore.Qt.WindowType.Window)  # its own window, closed with its parent
        self.controller = controller
        self.setWindowTitle("Lessons — Attention Explorer")
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        self.panels: dict[str, LessonPanel] = {}
        for lesson in LESSON_LIST:
            panel = lesson.panel_class()(controller)
            self.panels[lesson.key] = panel
            self.tabs.addTab(_scrolling(panel), lesson.title)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        QtGui.QShortcut(QtGui.QKeySequence.StandardKey.Close, self, self.close)
        self.resize(_fitting_size(QtCore.QSize(1320, 880)))

    def current_key(self) -> str:
        return LESSON_LIST[self.tabs.currentIndex()].key

    def current_panel(self) -> LessonPanel:
        return self.panels[self.current_key()]

    def show_lesson(self, key: str) -> None:
        """Open the window on lesson `key` (see lesson_list) and bring it to the front."""
        self.tabs.setCurrentIndex([lesson.key for lesson in LESSON_LIST].index(key))
        self.show()
        self.raise_()
        self.activateWindow()
