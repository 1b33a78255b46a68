"""View ▸ Head census…: the entry that opens the census window, built on first use (the window's
start does not pay for it)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

CENSUS_HINT = ("What every head does, measured over many texts: induction, previous-token, duplicate, sinks, "
               "Clark et al.'s averages and entropy")


class CensusLauncher(QtCore.QObject):
    """The menu action and, once opened, the census window (`window`, None before)."""

    def __init__(self, main_window: QtWidgets.QMainWindow, menu: QtWidgets.QMenu):
        super().__init__(main_window)
        self.main_window = main_window
        self.window = None
        self.action = QtGui.QAction("Head &census…", main_window)
        self.action.setStatusTip(CENSUS_HINT)
        self.action.setToolTip(CENSUS_HINT)
        self.action.triggered.connect(self.open)
        menu.addAction(self.action)

    def open(self) -> None:
        if self.window is None:
            from .census_window import QtCensusWindow

            self.window = QtCensusWindow(self.main_window.controller, self.main_window,
                                         settings=getattr(self.main_window, "settings", None))
            self.window.setWindowFlag(QtCore.Qt.WindowType.Window)
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()
