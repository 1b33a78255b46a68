"""The worker's runner lets go of what a dropped job returns once the job ends."""

import threading
import weakref

from PySide6.QtTest import QTest

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
