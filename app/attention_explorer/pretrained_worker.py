"""Loading a real model and running a text through it on a worker thread, so the window keeps answering.

Two lanes, "load" and "run": a new job supersedes the older one of its lane (only the latest result is
delivered; the older job is told to stop at its next progress report), and cancel() stops both. The
results come back on the thread that made the runner (the GUI thread), through queued signals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6 import QtCore

from .engine import EngineError, ModelError
from .engine.pretrained import Cancelled
from .gc_policy import collect_on_gui_thread_only

Work = Callable[[Callable[[float, str], bool]], Any]   # work(progress) -> result


class _Relay(QtCore.QObject):
    """Lives on the GUI thread: a worker's emits reach the runner as queued calls."""

    finished = QtCore.Signal(int, object)
    failed = QtCore.Signal(int, str)
    progressed = QtCore.Signal(int, float, str)


class _Job(QtCore.QRunnable):
    def __init__(self, job_id: int, work: Work, runner: BackgroundRunner):
        super().__init__()
        self.job_id, self.work, self.runner = job_id, work, runner
        self.relay = runner._relay

    def _progress(self, fraction: float, text: str) -> bool:
        if not self.runner.is_current(self.job_id):
            return False
        self.relay.progressed.emit(self.job_id, fraction, text)
        return True

    def run(self) -> None:
        if not self.runner.is_current(self.job_id):  # superseded while it waited
            self.relay.failed.emit(self.job_id, "")
            return
        try:
            result = self.work(self._progress)
        except Cancelled:
            self.relay.failed.emit(self.job_id, "")
        except (EngineError, ModelError) as error:
            self.relay.failed.emit(self.job_id, str(error))
        except MemoryError:
            self.relay.failed.emit(self.job_id, "there is not enough memory for this model and text")
        else:
            self.relay.finished.emit(self.job_id, result)


class BackgroundRunner(QtCore.QObject):
    """One worker thread for the real model's loads and forwards, with progress and cancel."""

    progress_changed = QtCore.Signal(float, str)   # fraction 0–1 and what is happening
    busy_changed = QtCore.Signal(bool)

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        collect_on_gui_thread_only()  # the worker must never be the thread that frees the GUI's garbage
        self._pool = QtCore.QThreadPool(self)
        self._pool.setMaxThreadCount(1)  # one forward at a time: the machine's cores go to its products
        self._relay = _Relay(self)
        self._relay.finished.connect(self._on_finished)
        self._relay.failed.connect(self._on_failed)
        self._relay.progressed.connect(self._on_progress)
        self._next_id = 0
        self._current: dict[str, int] = {}                 # lane -> its latest job
        self._callbacks: dict[int, tuple[str, Callable, Callable]] = {}

    @property
    def busy(self) -> bool:
        return bool(self._callbacks)

    def is_current(self, job_id: int) -> bool:
        return job_id in self._current.values()

    def submit(self, lane: str, work: Work, on_done: Callable[[Any], None],
               on_failed: Callable[[str], None]) -> int:
        """Start `work` on the worker; the older job of `lane` stops and is never delivered.
        `on_failed` hears "" when the job was cancelled by the user."""
        was_busy = self.busy
        self._next_id += 1
        job_id = self._next_id
        self._current[lane] = job_id
        self._callbacks[job_id] = (lane, on_done, on_failed)
        self._pool.start(_Job(job_id, work, self))
        if not was_busy:
            self.busy_changed.emit(True)
        return job_id

    def cancel(self) -> None:
        """Stop every job; each one's on_failed hears "" once it has stopped."""
        self._current.clear()

    def wait(self, msecs: int = -1) -> bool:
        """Block until the worker is idle (for closing the window and for tests)."""
        return self._pool.waitForDone(msecs)

    def _take(self, job_id: int) -> tuple[str, Callable, Callable] | None:
        entry = self._callbacks.pop(job_id, None)
        if not self._callbacks:
            self.busy_changed.emit(False)
        return entry

    def _on_finished(self, job_id: int, result: object) -> None:
        current = self.is_current(job_id)
        entry = self._take(job_id)
        if entry is None:
            return
        lane, on_done, on_failed = entry
        if current:
            del self._current[lane]
            on_done(result)
        elif lane not in self._current:  # cancelled by the user after it had finished its work
            on_failed("")

    def _on_failed(self, job_id: int, message: str) -> None:
        current = self.is_current(job_id)
        entry = self._take(job_id)
        if entry is None:
            return
        lane, _on_done, on_failed = entry
        if current:
            del self._current[lane]
        if current or lane not in self._current:  # superseded jobs stay silent: a newer one answers
            on_failed(message)

    def _on_progress(self, job_id: int, fraction: float, text: str) -> None:
        if self.is_current(job_id):
            self.progress_changed.emit(fraction, text)
