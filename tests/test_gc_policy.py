"""Python's cycle collector: paused while the window starts, and run on the GUI thread only once the
window has a model worker (a collection on the worker would destroy the GUI's garbage, closed
windows and plots, off the GUI thread)."""

import gc
import threading
import weakref

import pytest
from PySide6 import QtCore

from attention_explorer import engine, gc_policy
from attention_explorer.controller import Controller
from attention_explorer.gc_policy import collect_on_gui_thread_only

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

    kept = []  # alive until the end: freed objects would take the collector's count back down

    def allocate():  # what a forward on the worker does: far past every collection threshold
        kept.extend([] for _ in range(20_000))

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


@pytest.fixture
def gc_state(monkeypatch):
    """gc's switch as it was, put back after the test (a real model opened by an earlier test may
    have handed collection to the GUI thread's timer), and nothing left frozen."""
    was_enabled = gc.isenabled()
    yield
    (gc.enable if was_enabled else gc.disable)()
    gc.unfreeze()


def test_collection_is_paused_while_the_window_starts_and_resumed_after(gc_state, monkeypatch):
    monkeypatch.setattr(gc_policy, "_collector", None)
    gc.enable()
    gc_policy.pause_for_start()
    assert not gc.isenabled()
    gc_policy.resume_after_start()
    assert gc.isenabled()


def weakref_to_cycle(cycle: list):
    """A function telling whether `cycle` (a list holding itself) has been collected."""
    class Marker:
        pass

    marker = Marker()
    cycle.append(marker)
    ref = weakref.ref(marker)
    del marker
    return lambda: ref() is None


def test_what_the_start_made_is_kept_out_of_later_collections(gc_state, monkeypatch):
    """A full collection walked some 74,000 objects that live as long as the app: 15 to 21 ms with
    SmolLM2 open, among the user's hovers."""
    monkeypatch.setattr(gc_policy, "_collector", None)
    gc.enable()
    gc_policy.pause_for_start()
    made_at_start = [[index] for index in range(1000)]  # containers the collector tracks
    garbage = [[]]
    garbage[0].append(garbage)  # a cycle no one holds once the name goes
    collected = weakref_to_cycle(garbage)
    del garbage
    gc_policy.resume_after_start()
    tracked = {id(item) for item in gc.get_objects()}
    assert not any(id(item) in tracked for item in made_at_start)
    assert gc.get_freeze_count() >= len(made_at_start)
    assert collected(), "the start's garbage is collected, not frozen"
    made_after = [[index] for index in range(10)]
    tracked = {id(item) for item in gc.get_objects()}
    assert all(id(item) in tracked for item in made_after)  # what comes later is collected as ever


def test_a_worker_started_during_the_start_keeps_collection_on_the_gui_thread(gc_state, monkeypatch):
    monkeypatch.setattr(gc_policy, "_collector", None)
    gc.enable()
    gc_policy.pause_for_start()
    monkeypatch.setattr(gc_policy, "_collector", object())  # a real model opened while the window started
    gc_policy.resume_after_start()
    assert not gc.isenabled()  # the GUI thread's timer collects, not whichever thread allocates
    assert gc.get_freeze_count() == 0  # a model open: nothing frozen, its weights must go once it is closed


def test_the_pause_leaves_collection_off_when_someone_else_had_switched_it_off(gc_state, monkeypatch):
    monkeypatch.setattr(gc_policy, "_collector", None)
    gc.disable()
    gc_policy.pause_for_start()
    gc_policy.resume_after_start()
    assert not gc.isenabled()
