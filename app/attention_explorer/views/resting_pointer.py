"""A pointer that comes to rest is always heard where it rests.

pyqtgraph drops every mouse move that comes less than 1000 / mouseRateLimit ms after the last one it
handled, to spare the plots a storm of hover work. The last move of a quick glide is often one of the
dropped: the pointer then rests on a cell that never hears of it, and nothing is focused until the
next nudge. This filter sees every move reach a plot's viewport and, once the pointer has been still
for longer than that limit, sends the resting position once more, which pyqtgraph then handles. Only
where pyqtgraph dropped that last move: one it handled is not sent again (a word hovered cost a second
round of pyqtgraph's hover work, 2 to 3 ms, for nothing).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

SLACK_MS = 4  # past pyqtgraph's limit, so the resent move is always let through


class RestingPointer(QtCore.QObject):
    def __init__(self, view: pg.GraphicsView):
        super().__init__(view)
        self._viewport = view.viewport()
        self._last: QtGui.QMouseEvent | None = None
        self._last_heard = False  # whether pyqtgraph handled the last move
        self._resending = False
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        rate = pg.getConfigOption("mouseRateLimit")
        self._timer.setInterval(int(1000 / rate) + SLACK_MS if rate > 0 else 0)
        self._timer.timeout.connect(self._resend)
        self._viewport.installEventFilter(self)
        view.scene().sigMouseMoved.connect(self._heard)  # emitted while a move it lets through is delivered

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind == QtCore.QEvent.Type.MouseMove and not self._resending and self._timer.interval() > 0:
            self._last = QtGui.QMouseEvent(kind, event.position(), event.globalPosition(), event.button(),
                                           event.buttons(), event.modifiers())
            self._last_heard = False  # until pyqtgraph says otherwise, as the move is delivered after this
            self._timer.start()
        elif kind == QtCore.QEvent.Type.Leave:
            self._timer.stop()
            self._last = None
        return False

    def _heard(self, _scene_pos) -> None:
        self._last_heard = True

    def _resend(self) -> None:
        if self._last is None or self._last_heard or not self._viewport.underMouse():
            return
        self._resending = True
        try:
            QtWidgets.QApplication.sendEvent(self._viewport, self._last)
        finally:
            self._resending = False
