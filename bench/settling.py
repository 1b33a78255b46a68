"""Run the event loop until an action has settled: what a user waits for, not one pass of it.

An action may post work for later passes (a queued call, a layout request, a repaint asked for by a
resize), and one `processEvents()` stops short of it. `settle()` runs passes until two in a row do
no such work, and says how many passes did some: an action that settles in one pass reads 1. The
app and its anchor are settled the same way, so their ratio compares like with like.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

# The events that mean a pass did work for the action: painting, laying out, a queued call.
WORK = {QtCore.QEvent.Type.Paint, QtCore.QEvent.Type.LayoutRequest, QtCore.QEvent.Type.UpdateRequest,
        QtCore.QEvent.Type.MetaCall, QtCore.QEvent.Type.Resize}
MAX_PASSES = 50


class _WorkCounter(QtCore.QObject):
    def __init__(self):
        super().__init__()
        self.count = 0

    def eventFilter(self, _watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() in WORK:
            self.count += 1
        return False


_counter: _WorkCounter | None = None


def settle() -> int:
    """Passes of the event loop until two in a row do no work; the number of passes that did some."""
    global _counter
    if _counter is None:
        _counter = _WorkCounter()
        QtWidgets.QApplication.instance().installEventFilter(_counter)
    busy, idle = 0, 0
    for _ in range(MAX_PASSES):
        before = _counter.count
        QtWidgets.QApplication.processEvents()
        if _counter.count == before:
            idle += 1
            if idle == 2:
                break
        else:
            busy, idle = busy + 1, 0
    return busy
