"""Loading a real model and running a text through it on a worker thread, so the window keeps answering.

Two lanes, "load" and "run": a new job supersedes the older one of its lane (only the latest result is
delivered; the older job is told to stop at its next progress report), `cancel()` stops both at once
(their callers hear so now, not when the work reaches its next report), `drop(lane)` forgets a lane's
job without a word (another model was chosen meanwhile) and `drop_all()` every job (quitting). A job
left behind inside a long step does not hold up the next one: that starts on a fresh thread, and the
old one ends when its step does. A quiet job (work done ahead of the user: the scrubber's next step)
never makes the runner busy, so no progress, Cancel or busy cursor shows for it.

Why a plain Python thread and a timer rather than Qt's thread pool: the worker never touches Qt. It
hands each outcome to a queue that the GUI thread empties, so nothing the worker does can reach a Qt
object being destroyed. The GUI thread looks at once when the worker writes a byte to a socket pair
(a QSocketNotifier watches its other end: a plain socket, no Qt call on the worker), and on a timer
for progress; on the timer alone, an outcome waited up to POLL_MS for it (7 ms in the median of typing
a word in MiniLM at 13 tokens, a quarter of the whole). The thread is a daemon: quitting while a load is still inside
a long step exits at once instead of waiting for it (Qt's pool waits for its threads when it is
destroyed). Every job comes back, whatever it raises: a ModelError as its message, anything else as
a message that says it was not foreseen (and the log has its traceback), so busy, progress and
Cancel always clear.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from PySide6 import QtCore

from .engine import EngineError
from .engine.memory import one_heap_for_every_thread
from .engine.pretrained import Cancelled
from .engine.threads import use_one_blas_thread
from .gc_policy import collect_on_gui_thread_only

Work = Callable[[Callable[[float, str], bool]], Any]   # work(progress) -> result
POLL_MS = 10          # how often the GUI thread looks for results while a job runs
IDLE_EXIT_S = 30.0    # an idle worker thread ends; the next job starts another
UNFORESEEN = "an error the app did not foresee"  # begins the message of an error no check caught
NO_MEMORY = "there is not enough memory for this model and text"

logger = logging.getLogger(__name__)
_RUNNERS: weakref.WeakSet[BackgroundRunner] = weakref.WeakSet()  # every runner made, for quitting


def wait_for_every_worker(msecs: int) -> bool:
    """Block until no runner's worker has a job left, `msecs` at most in all; whether none has.

    Quitting: every job has been told to stop by then, and most stop within a step (a token written,
    a layer); the interpreter and PySide should not tear the window down while one is still computing."""
    deadline = time.monotonic() + msecs / 1000
    return all(runner.wait(max(0, round((deadline - time.monotonic()) * 1000))) for runner in list(_RUNNERS))


class BackgroundRunner(QtCore.QObject):
    """One worker thread for the real model's loads and forwards, with progress and cancel."""

    progress_changed = QtCore.Signal(float, str)   # fraction 0–1 and what is happening
    busy_changed = QtCore.Signal(bool)

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        collect_on_gui_thread_only()  # the worker must never be the thread that frees the GUI's garbage
        use_one_blas_thread()  # before any worker: the limit must not change while a product runs
        one_heap_for_every_thread()  # before any worker too: its own heap would keep what it frees
        self._lock = threading.Condition()
        self._jobs: queue.SimpleQueue[tuple[int, Work]] = queue.SimpleQueue()
        self._outcomes: queue.SimpleQueue[tuple[int, bool, object]] = queue.SimpleQueue()  # (id, done?, result)
        self._progress: tuple[int, float, str] | None = None  # the latest report, written by the worker
        self._shown_progress: tuple[int, float, str] | None = None
        self._thread: threading.Thread | None = None
        self._generation = 0                               # of the thread that takes the next job
        self._running: int | None = None                   # the job that thread is running
        self._unfinished = 0                               # jobs queued or running on the worker
        self._next_id = 0
        self._current: dict[str, int] = {}                 # lane -> its latest job
        self._callbacks: dict[int, tuple[str, Callable, Callable]] = {}
        self._quiet: set[int] = set()                      # jobs that leave the runner not busy
        self._timer = QtCore.QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._deliver)
        self._wake_read, self._wake_write = socket.socketpair()  # the worker's "an outcome waits"
        for end in (self._wake_read, self._wake_write):
            end.setblocking(False)
        self._waker = QtCore.QSocketNotifier(self._wake_read.fileno(), QtCore.QSocketNotifier.Type.Read, self)
        self._waker.activated.connect(self._woken)
        self._listen(False)
        _RUNNERS.add(self)

    def _listen(self, on: bool) -> None:
        """Poll for the worker's progress and watch for its outcomes, or stop both. On only while a job is
        under way: the worker thread may hold the runner last and free it when it ends (a runner without a
        parent, in tests), and a notifier still watching, freed from that thread, corrupted the window's
        event loop (a crash in the next test's events)."""
        if on:
            self._timer.start()
        else:
            self._timer.stop()
        self._waker.setEnabled(on)

    @property
    def busy(self) -> bool:
        return any(job_id not in self._quiet for job_id in self._callbacks)

    def has_job(self, lane: str) -> bool:
        """A job of `lane` is queued, running, or done and not yet delivered."""
        with self._lock:
            return lane in self._current

    def is_current(self, job_id: int) -> bool:
        with self._lock:
            return job_id in self._current.values()

    def submit(self, lane: str, work: Work, on_done: Callable[[Any], None],
               on_failed: Callable[[str], None], quiet: bool = False) -> int:
        """Start `work` on the worker; the older job of `lane` stops and is never delivered.
        `on_failed` hears "" when the job was cancelled by the user. A `quiet` job leaves the runner
        not busy."""
        was_busy = self.busy
        with self._lock:
            self._next_id += 1
            job_id = self._next_id
            superseded = self._current.get(lane)
            self._current[lane] = job_id
            self._unfinished += 1
            self._jobs.put((job_id, work))
            abandoned = self._running is not None and self._running not in self._current.values()
            if self._thread is None or abandoned:  # none yet, or the one there is stuck in a job left behind
                self._generation += 1
                self._running = None
                self._thread = threading.Thread(target=self._serve, args=(self._generation,),
                                                name="real-model worker", daemon=True)
                self._thread.start()
        self._callbacks.pop(superseded, None)  # never delivered: the newer job answers
        self._quiet.discard(superseded)
        self._callbacks[job_id] = (lane, on_done, on_failed)
        if quiet:
            self._quiet.add(job_id)
        self._listen(True)
        if self.busy != was_busy:
            self.busy_changed.emit(self.busy)
        return job_id

    def cancel(self) -> None:
        """Stop every job; each one's on_failed hears "" now (the work stops at its next progress report)."""
        for entry in self.drop_all():
            entry[2]("")

    def drop(self, lane: str) -> None:
        """Forget the job of `lane`: it stops at its next progress report and nobody hears of it."""
        with self._lock:
            job_id = self._current.pop(lane, None)
        if job_id is not None:
            self._take(job_id)

    def drop_all(self) -> list[tuple[str, Callable, Callable]]:
        """Forget every job without a word (quitting: no message may open then); their callbacks."""
        with self._lock:
            jobs = list(self._current.values())
            self._current.clear()
        return [entry for job_id in jobs if (entry := self._take(job_id)) is not None]

    def wait(self, msecs: int = -1) -> bool:
        """Block until the worker has no job left (for tests and for closing); False if `msecs` ran out.
        The outcomes are delivered by the GUI thread's timer afterwards."""
        with self._lock:
            return self._lock.wait_for(lambda: self._unfinished == 0, None if msecs < 0 else msecs / 1000)

    # --- the worker thread ---------------------------------------------------------------------------
    def _serve(self, generation: int) -> None:
        while True:
            try:
                job_id, work = self._jobs.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty() and generation == self._generation:
                        self._thread = None
                        return
                continue
            with self._lock:
                if generation != self._generation:  # a fresh thread took over while this one was stuck
                    self._jobs.put((job_id, work))
                    return
                self._running = job_id
            outcome = self._run(job_id, work)
            # let go before the window hears of the outcome, which it may take at once (_wake): a forward's
            # closure holds the trace it replaces, whose layer inputs would stand beside the new trace's
            # matrices as the views make them; nor held while waiting for the next job (a model)
            del work
            self._outcomes.put(outcome)
            del outcome
            self._wake()
            with self._lock:
                self._unfinished -= 1
                self._lock.notify_all()
                if generation != self._generation:
                    return
                self._running = None

    def _run(self, job_id: int, work: Work) -> tuple[int, bool, object]:
        def progress(fraction: float, text: str) -> bool:
            if not self.is_current(job_id):
                return False
            if job_id not in self._quiet:  # a quiet job only asks whether it is still wanted
                self._progress = (job_id, fraction, text)
            return True

        if not self.is_current(job_id):  # superseded while it waited
            return job_id, False, ""
        try:
            return job_id, True, work(progress)
        except Cancelled:
            return job_id, False, ""
        except EngineError as error:
            return job_id, False, str(error)
        except MemoryError:
            return job_id, False, NO_MEMORY
        except (KeyboardInterrupt, SystemExit):  # not the worker's to handle: the job just stops
            return job_id, False, ""
        except BaseException as error:  # noqa: BLE001 - every job must come back, or busy never clears
            logger.error("a real-model job failed", exc_info=error)
            detail = " ".join(str(error).split())[:200]
            return job_id, False, f"{UNFORESEEN} ({type(error).__name__}{': ' + detail if detail else ''})"

    def _wake(self) -> None:
        """Tell the GUI thread an outcome waits: a byte on the socket its notifier watches."""
        with contextlib.suppress(OSError):  # full (a wake waits already) or closed (the runner has gone)
            self._wake_write.send(b"\0")

    # --- back on the GUI thread ----------------------------------------------------------------------
    def _woken(self) -> None:
        with contextlib.suppress(OSError):  # raised once nothing is left to read
            while self._wake_read.recv(256):
                pass
        self._deliver()

    def _deliver(self) -> None:
        progress = self._progress
        if progress is not None and progress != self._shown_progress and self.is_current(progress[0]):
            self._shown_progress = progress
            self.progress_changed.emit(progress[1], progress[2])
        while True:
            try:
                job_id, done, result = self._outcomes.get_nowait()
            except queue.Empty:
                break
            self._settle(job_id, done, result)
        with self._lock:
            unfinished = self._unfinished
        if not self._callbacks and not unfinished and self._outcomes.empty():
            # not before a dropped job has ended too: what it returns (a real model read to its end)
            # would wait in the queue for the next job, held
            self._listen(False)

    def _take(self, job_id: int) -> tuple[str, Callable, Callable] | None:
        was_busy = self.busy
        entry = self._callbacks.pop(job_id, None)
        self._quiet.discard(job_id)
        if was_busy and not self.busy:
            self.busy_changed.emit(False)
        return entry

    def _settle(self, job_id: int, done: bool, result: object) -> None:
        """Deliver a job's outcome. Its lane is freed before the runner says it is no longer busy, as drop
        does: heard in between, has_job still counted the job, and a decoder's Generate, disabled while
        a model loads, stayed disabled after a model file was refused (nothing told it again)."""
        entry = self._callbacks.get(job_id)
        if entry is None:  # superseded, cancelled or dropped: its callers have heard all they will
            return
        lane, on_done, on_failed = entry
        with self._lock:
            if self._current.get(lane) == job_id:
                del self._current[lane]
        self._take(job_id)
        (on_done if done else on_failed)(result)
