"""When Python's cycle collector runs: not while the window starts, and only on the GUI thread once
the app has a worker thread.

Start-up: importing Qt, pyqtgraph and the app and building the window ran the collector about 150
times, some 50 ms of a 550 ms start, for objects that all live as long as the app. The collector is
paused from the command line's first step towards the window until the window has painted.

The worker: the collector runs on whichever thread happens to allocate past its threshold. On the
model worker that thread would destroy the GUI's garbage (closed windows, their plots, controllers
and thread pools) off the GUI thread, which Qt does not allow, and a test run once hung with the
worker inside a JSON parse and the GUI thread waiting. So automatic collection is switched off for
good and pyqtgraph's collector runs it from a timer on the GUI thread instead, generation by
generation, at the thresholds Python uses.
"""

from __future__ import annotations

import gc

from PySide6 import QtCore

_collector = None
_paused_for_start = False


def pause_for_start() -> None:
    """No automatic collection until resume_after_start(); nothing changes if it is already off."""
    global _paused_for_start
    if gc.isenabled():
        gc.disable()
        _paused_for_start = True


def resume_after_start() -> None:
    """Automatic collection back on, what the start made kept out of it (keep_start_out_of_collections);
    neither when the GUI thread's collector has taken over meanwhile (a real model opened at start)."""
    global _paused_for_start
    if _paused_for_start and _collector is None:
        keep_start_out_of_collections()
        gc.enable()
    _paused_for_start = False


def keep_start_out_of_collections() -> None:
    """Freeze the objects the start made (modules, Qt's wrappers, the window and its views, some 74,000),
    which live as long as the app: no collection walks them again. With SmolLM2 open, a full collection
    took 15 to 21 ms, a hitch among the hovers and scrubber steps whenever the collector came to it, and
    0.6 to 0.8 ms with them frozen. The start's garbage is collected first, once (an object frozen is
    never collected). Not once a real model is open: a closed model's weights must go."""
    gc.collect()
    gc.freeze()


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
