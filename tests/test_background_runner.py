"""The worker's runner lets go of what a dropped job returns once the job ends, a quit waits for its step
under way, and a quiet job (work done ahead) never shows as busy."""

import threading
import time
import weakref

from PySide6.QtTest import QTest

from attention_explorer.engine.errors import ModelError
from attention_explorer.pretrained_worker import BackgroundRunner


class _Weights:
    """Stands for a real model read to its end: something large, whose lifetime a weakref can see."""


def test_what_a_dropped_job_returns_is_not_held_after_it_ends(qapp):
    runner = BackgroundRunner()
    started, finish = threading.Event(), threading.Event()
    returned = []

    def load(_progress):  # reads to its end without another progress report, as a load's last step does
        started.set()
        finish.wait(10)
        weights = _Weights()
        returned.append(weakref.ref(weights))
        return weights

    heard = []
    runner.submit("load", load, heard.append, heard.append)
    assert started.wait(10)
    runner.cancel()  # another model chosen: the caller hears "" now, the job runs on
    QTest.qWait(50)  # the runner's timer, with nothing left to deliver to anyone
    finish.set()
    assert runner.wait(10_000)
    QTest.qWait(100)
    assert heard == [""] and len(returned) == 1
    assert returned[0]() is None, "the dropped job's result is still held by the runner"


def test_quitting_waits_for_every_worker_s_step_and_no_longer(qapp, monkeypatch):
    """Quitting tells every job to stop; the app then waits for each worker's step under way to end
    (a token written), but not for a step that never ends (it then leaves without the teardown)."""
    from attention_explorer import pretrained_worker
    from attention_explorer.pretrained_worker import wait_for_every_worker

    monkeypatch.setattr(pretrained_worker, "_RUNNERS", weakref.WeakSet())  # these two only, not other tests'
    writer, reader = BackgroundRunner(), BackgroundRunner()
    steps, reading, stuck = threading.Event(), threading.Event(), threading.Event()

    def write(progress):  # a token at a time, stopping at the first report after it was told to
        while progress(0.5, "writing"):
            steps.set()
            time.sleep(0.05)
        return "stopped"

    def read(_progress):  # one long step that reports nothing
        reading.set()
        stuck.wait(30)

    writer.submit("write", write, lambda _r: None, lambda _m: None)
    assert steps.wait(10)
    writer.drop_all()
    assert wait_for_every_worker(5_000)  # the token under way ended, and with it the job
    reader.submit("load", read, lambda _r: None, lambda _m: None)
    assert reading.wait(10)
    reader.drop_all()
    assert not wait_for_every_worker(200)  # a step that never reports is not waited for
    stuck.set()
    assert wait_for_every_worker(10_000)


def test_a_quiet_job_never_makes_the_runner_busy(qapp):
    """Work done ahead of the user (the scrubber's next step) shows no busy cursor, progress or Cancel: a
    quiet job leaves the runner not busy, and a job beside it makes it busy until that job ends."""
    runner = BackgroundRunner()
    heard, done, shown = [], [], []
    runner.busy_changed.connect(heard.append)
    runner.progress_changed.connect(lambda fraction, text: shown.append(text))
    release = threading.Event()

    def ahead(progress):
        assert progress(0.5, "a layer made ahead")  # still wanted: it goes on, and nobody sees its progress
        release.wait(10)
        return "made ahead"

    runner.submit("ahead", ahead, done.append, done.append, quiet=True)
    assert not runner.busy and heard == []
    runner.submit("run", lambda _progress: "forward", done.append, done.append)
    assert runner.busy and heard == [True]
    release.set()
    assert runner.wait(10_000)
    deadline = time.monotonic() + 5
    while len(done) < 2 and time.monotonic() < deadline:  # delivered by the runner's timer
        QTest.qWait(10)
    assert sorted(done) == ["forward", "made ahead"] and not runner.busy and heard == [True, False]
    assert shown == []
    runner.submit("ahead", lambda _progress: "again", done.append, done.append, quiet=True)
    runner.drop("ahead")  # dropped before it answers: no word, and never busy
    assert runner.wait(10_000)
    QTest.qWait(50)
    assert heard == [True, False] and done[-1] != "again"


def test_an_outcome_is_delivered_as_soon_as_its_job_ends_not_on_the_next_poll(qapp, qtbot, monkeypatch):
    """The worker wakes the window's thread when a job ends: with the progress poll a minute apart, a
    quick job's outcome still arrives within the event loop's next passes."""
    from attention_explorer import pretrained_worker

    monkeypatch.setattr(pretrained_worker, "POLL_MS", 60_000)
    runner = BackgroundRunner()
    heard = []
    for answer in ("first", "second"):  # and again: each end wakes it
        runner.submit("run", lambda _progress, answer=answer: answer, heard.append, heard.append)
        qtbot.waitUntil(lambda answer=answer: heard[-1:] == [answer], timeout=5_000)
    assert heard == ["first", "second"]


def test_a_job_is_let_go_of_before_the_window_hears_its_outcome(qapp, qtbot):
    """A forward's closure holds the trace it replaces: held while the window takes the outcome, its layer
    inputs stand beside the new trace's matrices as the views make them. The worker lets go of the job
    before it hands the outcome over, so however soon the window takes it, nothing of the job is left."""
    runner = BackgroundRunner()
    replaced = _Weights()
    held = weakref.ref(replaced)
    alive_when_heard = []

    def forward(_progress, replaced=replaced):
        return "new trace" if replaced is not None else None

    runner.submit("run", forward, lambda _result: alive_when_heard.append(held() is not None), print)
    del forward, replaced
    qtbot.waitUntil(lambda: len(alive_when_heard) == 1, timeout=5_000)
    assert alive_when_heard == [False]


def test_a_runner_freed_by_its_ending_worker_leaves_the_event_loop_sound(qapp, qtbot, monkeypatch):
    """A runner without a parent is held last by its worker thread, and freed there when the thread ends
    idle. What it watches on the window's thread (its timer, the socket the worker wakes it by) is off by
    then: a socket notifier still on, freed from the worker, corrupted the event loop, and a later test
    crashed inside its events."""
    from attention_explorer import pretrained_worker

    monkeypatch.setattr(pretrained_worker, "IDLE_EXIT_S", 0.05)
    for _ in range(20):
        runner = BackgroundRunner()
        heard = []
        runner.submit("run", lambda _progress: "done", heard.append, heard.append)
        qtbot.waitUntil(lambda heard=heard: heard == ["done"], timeout=5_000)
        thread = runner._thread
        del runner  # the worker thread holds it last
        thread.join(5)
        assert not thread.is_alive()
        QTest.qWait(5)  # the window's events go on as before
    second = BackgroundRunner()
    heard = []
    second.submit("run", lambda _progress: "still answered", heard.append, heard.append)
    qtbot.waitUntil(lambda: heard == ["still answered"], timeout=5_000)


def test_a_job_s_lane_is_free_when_the_runner_says_it_is_no_longer_busy(qapp, qtbot):
    """What hears that the runner is idle again reads has_job (is a model still loading?) and must be told
    no: the lane still counted the job there, and a decoder's Generate, disabled while a model loads,
    stayed disabled after a refused model file."""
    runner = BackgroundRunner()
    loading_when_idle, outcomes = [], []
    runner.busy_changed.connect(lambda busy: busy or loading_when_idle.append(runner.has_job("load")))

    def refused(_progress):
        raise ModelError("bad.gguf: not a model")

    for count, work in enumerate((lambda _progress: "opened", refused), start=1):
        runner.submit("load", work, outcomes.append, outcomes.append)
        qtbot.waitUntil(lambda count=count: len(outcomes) == count, timeout=5_000)
    assert outcomes == ["opened", "bad.gguf: not a model"]
    assert loading_when_idle == [False, False]
