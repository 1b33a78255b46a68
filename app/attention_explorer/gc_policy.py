"""Python's cycle collector, run on the GUI thread only, once the app has a worker thread.

The collector runs on whichever thread happens to allocate past its threshold. On the model
worker that thread would destroy the GUI's garbage — closed windows, dialogs and plots caught in
reference cycles — off the GUI thread, which Qt does not allow: it deadlocked the worker against
the event loop (the worker holding the interpreter inside a Qt destructor that waited on the GUI
thread, which waited for the interpreter). So automatic collection is switched off and pyqtgraph's
collector runs it from a timer on the GUI thread instead, generation by generation, at the same
thresholds Python uses.
"""

from __future__ import annotations

from PySide6 import QtCore

_collector = None


def collect_on_gui_thread_only() -> None:
    """Move cycle collection to a timer on this (the GUI) thread; a second call does nothing."""
    global _collector
    app = QtCore.QCoreApplication.instance()
    if app is None:
        return
    if QtCore.QThread.currentThread() is not app.thread():
        raise RuntimeError("collect_on_gui_thread_only() must be called on the GUI thread")
    if _collector is not None:
        return
    from pyqtgraph.util.garbage_collector import GarbageCollector

    _collector = GarbageCollector(interval=0.5)
    _collector.timer.setParent(app)  # deleted with the application, never after it by Python's shutdown
