"""View ▸ Head census…: the entry that opens the census window. The window is built while the app is
idle a little after the main window first shows (its start does not pay for it, and the census
opens within a frame: built on the click, its first opening took 30 ms and more)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

PREBUILD_AFTER_MS = 2000  # after the main window first shows: its own first paint and the bars' plot come first
CENSUS_HINT = ("What every head does, measured over many texts: induction, previous-token, duplicate, sinks, "
               "Clark et al.'s averages and entropy (an encoder–decoder: the attention shown)")


class CensusLauncher(QtCore.QObject):
    """The menu action and, once opened, the census window (`window`, None before)."""

    built = QtCore.Signal(object)  # the census window's controls, once it is built (the model view offers its result)

    def __init__(self, main_window: QtWidgets.QMainWindow, menu: QtWidgets.QMenu):
        super().__init__(main_window)
        self.main_window = main_window
        self.window = None
        self._pointer_at = QtCore.QPoint()  # where the pointer was as the wait to build began
        self._views_changed = False  # whether the views showed something new since the wait began
        controller = main_window.controller
        self._changes = (controller.trace_changed, controller.focus_changed, controller.head_changed,
                         controller.step_changed)
        for change in self._changes:
            change.connect(self._on_views_changed)
        self.action = QtGui.QAction("Head &census…", main_window)
        self.action.setStatusTip(CENSUS_HINT)
        self.action.setToolTip(CENSUS_HINT)
        self.action.triggered.connect(self.open)
        menu.addAction(self.action)
        main_window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QtCore.QEvent.Type.Show:
            self.main_window.removeEventFilter(self)
            self._prebuild_later()
        return False

    def _on_views_changed(self, *_) -> None:
        self._views_changed = True

    def _prebuild_later(self) -> None:
        self._pointer_at = QtGui.QCursor.pos()
        self._views_changed = False
        QtCore.QTimer.singleShot(PREBUILD_AFTER_MS, self, self._prebuild)

    def _prebuild(self) -> None:
        """Build the window and draw it once off screen (fonts, style, plots), so opening only shows it.
        Not once the main window is closing: a Quit must not wait for a window nobody will open. Not
        while the controller works (a model opening, a forward, a decoder writing), nor while the user
        moves the pointer (it moved since the wait began) or the views change (keys scrubbing a
        generation or typing leave the pointer still): the build holds the window for about 100 ms,
        which then fell among the hovers, steps and tokens of a generation; it waits for a moment with
        nothing to do."""
        if self.window is not None or not self.main_window.isVisible():
            return
        if self.main_window.controller.busy or QtGui.QCursor.pos() != self._pointer_at or self._views_changed:
            self._prebuild_later()
            return
        self._build()
        self.window.grab()

    def _build(self) -> None:
        from .census_window import QtCensusWindow

        for change in self._changes:  # built: nothing left to wait for
            change.disconnect(self._on_views_changed)

        self.window = QtCensusWindow(self.main_window.controller, self.main_window,
                                     settings=getattr(self.main_window, "settings", None))
        self.window.setWindowFlag(QtCore.Qt.WindowType.Window)
        self.built.emit(self.window.census)

    def open(self) -> None:
        if self.window is None:
            self._build()
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()
