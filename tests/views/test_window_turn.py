"""The window's turn: while a decoder writes on the worker, the user's input (a mouse move, a key) holds
the worker between two layers until the window's event loop has nothing left to do; the tokens written
are the same."""

import threading
import time
from pathlib import Path

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer import window_turn  # noqa: E402
from attention_explorer.engine.pretrained import open_pretrained  # noqa: E402
from attention_explorer.engine.pretrained.decode import Decoder  # noqa: E402
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate  # noqa: E402
from attention_explorer.window_turn import WindowTurn  # noqa: E402

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
PROMPT = "the cat sat on the mat"


@pytest.fixture
def widget(qtbot):
    widget = QtWidgets.QLineEdit()
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_input_gives_the_window_the_floor_only_while_watched_and_until_it_sleeps(widget, qtbot, monkeypatch):
    monkeypatch.setattr(window_turn, "FLOOR_S", 30.0)  # a worker held until the window sleeps, however slow
    turn = WindowTurn()
    QTest.mouseMove(widget, QtCore.QPoint(5, 5))
    assert not turn.window_has_the_floor()  # no worker writing: input holds nothing
    turn.watch(True)
    for act in (lambda: QTest.mouseMove(widget, QtCore.QPoint(9, 7)), lambda: QTest.keyClick(widget, "a"),
                lambda: QTest.mouseClick(widget, QtCore.Qt.MouseButton.LeftButton)):
        act()
        assert turn.window_has_the_floor()
        worker = threading.Thread(target=turn.wait)
        worker.start()
        worker.join(0.05)
        assert worker.is_alive()  # held while the window answers
        qtbot.wait(20)  # the event loop runs out of work and sleeps
        worker.join(10)
        assert not worker.is_alive() and not turn.window_has_the_floor()
    turn.watch(False)
    QTest.keyClick(widget, "b")
    assert not turn.window_has_the_floor()
    turn.wait()  # returns at once


def test_a_window_that_does_not_sleep_holds_the_worker_for_the_floor_s_length_only(widget, monkeypatch):
    """Quitting waits for the worker's step with the event loop stopped: the floor the quit's own key gave
    the window runs out rather than holding the worker at every layer."""
    monkeypatch.setattr(window_turn, "FLOOR_S", 0.05)
    turn = WindowTurn()
    turn.watch(True)
    QTest.mouseMove(widget, QtCore.QPoint(6, 6))
    assert turn.window_has_the_floor()
    worker = threading.Thread(target=lambda: [turn.wait() for _ in range(1000)])
    worker.start()
    worker.join(10)  # the event loop never runs here: the first wait ends with the floor, the rest at once
    assert not worker.is_alive() and turn.window_has_the_floor()
    turn.watch(False)
    assert not turn.window_has_the_floor()


def test_a_mouse_move_while_a_decoder_writes_holds_its_worker_and_the_tokens_stay_the_same(real_window, qtbot,
                                                                                         monkeypatch):
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    controller, panel = window.controller, window.pretrained.generation
    moved, seen = threading.Event(), threading.Event()
    floors = []
    wait = WindowTurn.wait

    def wait_after_the_move(self):
        if not floors:  # the first layer read: the worker waits for the test's mouse move
            moved.wait(10)
            floors.append(self.window_has_the_floor())
            seen.set()
        wait(self)

    monkeypatch.setattr(WindowTurn, "wait", wait_after_the_move)
    panel.tokens.setValue(6)
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    assert controller.generating
    for point in (QtCore.QPoint(37, 42), QtCore.QPoint(40, 40)):  # one move at least, wherever the pointer was
        QTest.mouseMove(window.heatmap.graphics.viewport(), point)
    moved.set()
    assert seen.wait(10)  # the worker looked before the window's event loop ran again
    qtbot.waitUntil(lambda: not controller.generating and not controller.busy, timeout=30_000)
    assert floors == [True]
    alone = generate(open_pretrained(DATA / "tiny-llama"), PROMPT, GenerationSettings(tokens=6))
    assert [step.token_id for step in controller.generation.steps] == [step.token_id for step in alone.steps]


def test_the_views_hold_their_text_so_far_while_the_user_acts_and_take_the_whole_text_at_the_end(
        real_window, qtbot, monkeypatch):
    """A new text so far moves every word under a pointer that stays still: while the user acts, the views
    keep the one they show (for FOLLOW_AT_LEAST_S at most), and the text box follows every token."""
    from attention_explorer import controller_generation

    monkeypatch.setattr(controller_generation, "ACTING_S", 60.0)
    monkeypatch.setattr(controller_generation, "FOLLOW_AT_LEAST_S", 60.0)
    step = Decoder.step

    def a_slower_token(self, token_id):  # long enough for the views to follow several times, were they let
        time.sleep(0.01)
        return step(self, token_id)

    monkeypatch.setattr(Decoder, "step", a_slower_token)
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    controller, panel = window.controller, window.pretrained.generation
    shown = []
    controller.written_shown_changed.connect(lambda written: shown.append((controller.generating, written)))
    texts = []
    controller.sentence_changed.connect(lambda _text: texts.append(controller.generating))
    panel.tokens.setValue(40)
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    for point in (QtCore.QPoint(43, 41), QtCore.QPoint(40, 40)):  # the user acts as it begins (a move to where
        QTest.mouseMove(window.heatmap.graphics.viewport(), point)  # the pointer is already sends nothing)
    qtbot.waitUntil(lambda: not controller.generating and not controller.busy, timeout=30_000)
    written = len(controller.generation.steps)
    assert {w for writing, w in shown if writing} <= {0}  # the prompt as it began, then no token while it wrote
    assert controller.written_shown == written and shown[-1] == (False, written)  # the whole text at the end
    assert sum(texts) > 10  # the text box followed the tokens as they came


def test_a_turn_freed_while_watching_leaves_nothing_connected(widget, qtbot):
    dispatcher = QtCore.QAbstractEventDispatcher.instance()
    before = dispatcher.receivers(QtCore.SIGNAL("aboutToBlock()"))
    parent = QtCore.QObject()
    turn = WindowTurn(parent)
    turn.watch(True)
    assert dispatcher.receivers(QtCore.SIGNAL("aboutToBlock()")) == before + 1
    del turn
    parent.deleteLater()  # a controller closed while its decoder writes
    qtbot.waitUntil(lambda: dispatcher.receivers(QtCore.SIGNAL("aboutToBlock()")) == before, timeout=5_000)
    QTest.mouseMove(widget, QtCore.QPoint(8, 3))  # its event filter is gone with it
    qtbot.wait(10)
