"""Python's cycle collector runs on the GUI thread only once the window has a model worker: a
collection on the worker would destroy the GUI's garbage (closed windows and plots) off the GUI
thread, which deadlocked the worker against the event loop."""

import gc
import threading
import weakref

import pytest
from PySide6 import QtCore

from attention_explorer import engine
from attention_explorer.controller import Controller
from attention_explorer.gui_thread_gc import collect_on_gui_thread_only

pytest.importorskip("tokenizers")

from pathlib import Path  # noqa: E402

BERT = str(Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-bert")


class _Cycle(QtCore.QObject):
    """A Qt object kept alive only by a reference cycle, as a closed window's plot can be."""

    def __init__(self):
        super().__init__()
        self.me = self


def test_a_window_controller_starts_no_worker_until_a_real_model_opens_then_collects_on_the_gui_thread(qtbot):
    controller = Controller(engine.load_builtin("cat-sat-on-mat"), background=True)
    assert controller._runner is None  # a start on a toy model creates no thread
    controller.open_model(BERT, "the cat sat")
    qtbot.waitUntil(lambda: controller.is_real and not controller.busy)
    assert not gc.isenabled()  # no thread collects on its own any more

    freed_on = []
    garbage = _Cycle()
    weakref.finalize(garbage, lambda: freed_on.append(threading.current_thread()))
    del garbage

    def allocate():  # what a forward on the worker does: far past every collection threshold
        for _ in range(200):
            _ = [[] for _ in range(1000)]

    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join()
    assert freed_on == []  # the worker did not collect it
    qtbot.waitUntil(lambda: bool(freed_on), timeout=5000)
    assert freed_on == [threading.main_thread()]  # the GUI thread's timer did


def test_it_must_be_started_from_the_gui_thread(qapp):
    errors = []

    def start():
        try:
            collect_on_gui_thread_only()
        except RuntimeError as error:
            errors.append(str(error))

    worker = threading.Thread(target=start)
    worker.start()
    worker.join()
    assert errors == ["collect_on_gui_thread_only() must be called on the GUI thread"]
