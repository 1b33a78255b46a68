"""The window's turn: while the user acts on the window, the worker writing tokens waits between layers.

Python runs one thread at a time, and PySide lets go of that lock at every call into Qt. While the
worker runs Python (a decoder's small steps between its matrix products), each of the window's calls
into Qt hands the lock over and then waits to get it back, so a word hovered while a decoder writes
took twice as long, and its slowest tenth four times (SmolLM2, 64 tokens: median 22 against 14 ms,
90th percentile 51–83 against 27–32). So an input event (the mouse moved, pressed or wheeled, a key)
gives the window the floor until its event loop has nothing left to do and is about to sleep; the
worker, between two layers, waits for that. The floor lasts FLOOR_S at most after the latest input:
a window that does not sleep (quitting, which waits for the worker's step to end) holds the writing up
that long, never longer.
"""

from __future__ import annotations

import threading
import time

from PySide6 import QtCore

FLOOR_S = 0.2
USER_INPUT = frozenset({
    QtCore.QEvent.Type.MouseMove, QtCore.QEvent.Type.MouseButtonPress, QtCore.QEvent.Type.MouseButtonRelease,
    QtCore.QEvent.Type.MouseButtonDblClick, QtCore.QEvent.Type.Wheel, QtCore.QEvent.Type.KeyPress,
    QtCore.QEvent.Type.KeyRelease,
})


class WindowTurn(QtCore.QObject):
    """Watches the user's input while a worker writes (`watch`), and holds the worker (`wait`) while the
    window answers it. Lives on the window's thread; `wait` is for the worker's."""

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self._free = threading.Event()
        self._free.set()
        self._claimed_at = 0.0  # time.monotonic() of the latest input that gave the window the floor
        self._watching = False

    def watch(self, on: bool) -> None:
        """Start (a worker begins writing) or stop (it ended) giving the window the floor on input."""
        app = QtCore.QCoreApplication.instance()
        if on == self._watching or app is None:
            return
        self._watching = on
        dispatcher = QtCore.QAbstractEventDispatcher.instance()
        if on:
            app.installEventFilter(self)
            dispatcher.aboutToBlock.connect(self._window_sleeps)
        else:
            app.removeEventFilter(self)
            dispatcher.aboutToBlock.disconnect(self._window_sleeps)
            self._free.set()

    @QtCore.Slot()
    def _window_sleeps(self) -> None:
        """The loop has nothing left to do: the worker may go on."""
        self._free.set()

    def wait(self) -> None:
        """On the worker: return once the window has answered the user's latest input, or its floor ran out."""
        left = self._claimed_at + FLOOR_S - time.monotonic()
        if left > 0:
            self._free.wait(left)

    def window_has_the_floor(self) -> bool:
        return not self._free.is_set()

    def since_input_s(self) -> float:
        """Seconds since the user's latest input while watched (a large number when none came)."""
        return time.monotonic() - self._claimed_at

    def eventFilter(self, _watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() in USER_INPUT:
            self._claimed_at = time.monotonic()
            self._free.clear()
        return False
