"""A decoder writes in the window: Generate and Stop, the text box and the views following the newest
token, the scrubber (its buttons and ← / →) stepping through the text so far with the candidates of
each step, a head switched off and the two continuations side by side, an edit ending it, and the
generation exported. Driven through the panel's own buttons and keys, on the tiny committed decoders."""

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer.controller import LOOKED_AT, LOOKING  # noqa: E402
from attention_explorer.engine.lazy_trace import made_fields  # noqa: E402
from attention_explorer.engine.pretrained.generate import (  # noqa: E402
    CANCELLED,
    GenerationSettings,
    generate,
)
from attention_explorer.engine.pretrained.real_trace import PretrainedTrace  # noqa: E402
from attention_explorer.engine.pretrained.tokenizing import WRITTEN_MARK  # noqa: E402
from event_log import EventLog  # noqa: E402
from screen_oracle import check_backing_store, settle  # noqa: E402

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
PROMPT = "the cat sat on the mat"
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def written_ids(controller):
    return [step.token_id for step in controller.generation.steps]


def generate_in(window, qtbot, tokens: int):
    panel = window.pretrained.generation
    panel.tokens.setValue(tokens)
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.generating and not window.controller.busy, timeout=30_000)
    QtWidgets.QApplication.processEvents()
    return panel


def generate_with_the_prompt_held(panel, qtbot, monkeypatch) -> threading.Event:
    """Generate clicked, the decoder held before it reads the prompt until the event returned is set."""
    from attention_explorer.engine.pretrained.decode import Decoder

    reading, read_on = threading.Event(), threading.Event()
    prefill = Decoder.prefill

    def held_prefill(self, *args, **kwargs):
        reading.set()
        read_on.wait(10)
        return prefill(self, *args, **kwargs)

    monkeypatch.setattr(Decoder, "prefill", held_prefill)
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    assert reading.wait(10)
    return read_on


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-gpt2"])
def test_generate_writes_what_the_engine_writes_and_the_views_follow(real_window, qtbot, name):
    window = real_window(str(DATA / name), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 8)
    expected = generate(c.real_model, PROMPT, GenerationSettings(tokens=8))
    assert written_ids(c) == [s.token_id for s in expected.steps]
    count = len(expected.steps)
    assert c.sentence == PROMPT + expected.written == window.sentence_box.toPlainText()
    # the views on all of it: the prompt's tokens and the written ones, marked; the last row pinned
    prompt = len(expected.prompt_ids)
    assert c.pretrained_trace.n == prompt + count and c.trace.n == prompt + count
    assert all(label.lstrip("·").startswith(WRITTEN_MARK) for label in c.trace.tokens[prompt:])
    assert not any(WRITTEN_MARK in label for label in c.trace.tokens[:prompt])
    assert c.pinned == c.trace.n - 1
    assert c.written_shown == count and panel.slider.value() == count and panel.slider.maximum() == count
    assert f"All {count} written tokens" in panel.position.text()
    assert "written tokens" in c.status
    check_backing_store(window, "a generation written")


def test_the_scrubber_steps_through_the_text_so_far_with_each_steps_candidates(real_window, qtbot):
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 6)
    steps = c.generation.steps
    prompt = len(c.generation.prompt_ids)
    panel.slider.setFocus()
    QTest.keyClick(panel.slider, QtCore.Qt.Key.Key_Left)  # the step timeline's own ← must leave it alone
    QTest.keyClick(panel.slider, QtCore.Qt.Key.Key_Left)
    shown = len(steps) - 2
    assert c.written_shown == shown and c.pretrained_trace.n == prompt + shown
    # the heatmap draws the text so far; its last row is the query that chose the next token
    assert c.trace.n == prompt + shown and c.pinned == prompt + shown - 1
    chosen = steps[shown]
    assert [t.token_id for t in c.pretrained_trace.next_tokens] == [x.token_id for x in chosen.choice.candidates]
    next_tokens = window.pretrained.next_tokens
    label = c.real_model.tokenizer.label_after(c.pretrained_trace.encoded, chosen.token_id)  # "·…" continuing a word
    assert f"Token {shown + 1} written, {label!r}, was chosen from" in next_tokens.title.text()
    bold = [row.text for row in next_tokens.candidates.rows() if row.bold]
    assert bold == [label]
    # its weights are the step's own attention row, kept as it was written
    last_row = c.pretrained_trace.layer_weights(1)[:, -1]
    written = generate(c.real_model, PROMPT, GenerationSettings(tokens=6))  # rows kept as they were made
    assert np.abs(last_row - written.steps[shown].attention[1]).max() <= 1e-5
    # the arrows beside the slider, and ← / → in the text
    qtbot.mouseClick(panel.forth, QtCore.Qt.MouseButton.LeftButton)
    assert c.written_shown == shown + 1
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    assert c.written_shown == shown - 1
    QTest.keyClick(panel.text, QtCore.Qt.Key.Key_Right)
    assert c.written_shown == shown and panel.slider.value() == shown
    panel.slider.setValue(0)  # the prompt alone
    assert c.written_shown == 0 and c.trace.n == prompt
    # the text box keeps all of it
    assert window.sentence_box.toPlainText() == c.generation.prompt + c.generation.written
    check_backing_store(window, "scrubbed to the prompt")


def test_a_held_arrow_s_repeats_waiting_are_shown_as_one_step(real_window, qtbot):
    """A key held down repeats faster than a long text's step is drawn: the repeats that came meanwhile
    are shown as one step, wherever the key is pressed, so the scrubber stops when the key is let go."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 12)
    assert c.written_shown >= 9
    shown = []
    c.written_shown_changed.connect(shown.append)
    expected = []
    for target in (panel, panel.slider, panel.text):
        start = c.written_shown
        for _ in range(3):  # the keyboard's repeats, waiting together
            QtWidgets.QApplication.postEvent(target, QtGui.QKeyEvent(
                QtCore.QEvent.Type.KeyPress, QtCore.Qt.Key.Key_Left, QtCore.Qt.KeyboardModifier.NoModifier, "", True))
        qtbot.waitUntil(lambda start=start: c.written_shown == start - 3)
        expected.append(start - 3)
    settle()
    assert shown == expected  # one step each time, never the ones between
    QTest.keyClick(panel.text, QtCore.Qt.Key.Key_Right)  # a key pressed, not held: a step at once
    assert c.written_shown == expected[-1] + 1 and shown[-1] == expected[-1] + 1
    check_backing_store(window, "a held key's steps")


def test_a_scrubber_step_moves_the_focus_once_straight_to_the_new_last_row(real_window, qtbot):
    """Stepping back, the pinned last row fell outside the shorter text: every view heard the focus
    dropped, then the new last row pinned, and drew both."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 6)
    for button in (panel.back, panel.back, panel.forth):
        focus, pinned = [], []
        c.focus_changed.connect(focus.append)
        c.pinned_changed.connect(pinned.append)
        qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)
        c.focus_changed.disconnect(focus.append)
        c.pinned_changed.disconnect(pinned.append)
        assert focus == pinned == [c.trace.n - 1] and c.focus == c.pinned == c.trace.n - 1
    # a word pinned as the one looked at: a step pins the new last row as the one looking
    c.set_pinned(c.trace.n - 1, LOOKED_AT)
    roles = []
    c.pinned_changed.connect(lambda index: roles.append((index, c.focus_role)))
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    assert roles == [(c.trace.n - 1, LOOKING)]
    check_backing_store(window, "stepped back and forth")


def test_the_row_bars_draw_a_scrubber_step_once(real_window, qtbot, monkeypatch):
    """A step announces its text so far and then the last row pinned with it: the bars heard both and drew
    the same row twice."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 6)
    bars = window.row_bars
    drawn = []
    original = bars.bars.setOpts
    monkeypatch.setattr(bars.bars, "setOpts", lambda **opts: drawn.append(opts) or original(**opts))
    for button in (panel.back, panel.back, panel.forth):
        drawn.clear()
        qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)
        assert len(drawn) == 1
        np.testing.assert_array_equal(drawn[0]["height"], c.trace.heads[c.head].weights[c.trace.n - 1])
    c.set_head(1)  # another head of the same text so far is drawn
    assert len(drawn) == 2
    check_backing_store(window, "stepped back and forth")


def test_a_step_back_keeps_the_model_view_s_pictures_and_draws_what_pictures_made_afresh_draw(real_window, qtbot,
                                                                                               monkeypatch):
    """A text so far's thumbnails are the top-left corner of the whole text's: a step back to a shorter one
    draws the pictures already made through the part its tokens cover (a decoder's largest weight is
    always its first token's 1), and the grid is drawn as pictures made from the shorter text itself."""
    from attention_explorer.views import model_view

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c, view = window.controller, window.pretrained.model_view
    window.pretrained.dock.show()
    panel = generate_in(window, qtbot, 6)
    made = []
    original = model_view.weights_images
    monkeypatch.setattr(model_view, "weights_images", lambda cells, *rest: made.append(len(cells))
                        or original(cells, *rest))
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    QtWidgets.QApplication.processEvents()
    assert not view.cells.thumbnails.flags.writeable  # a view into the whole text's
    for _ in range(3):
        made.clear()
        qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
        QtWidgets.QApplication.processEvents()
        assert made == []  # no picture made again
        stepped = view.grid.grab().toImage()
        view.images.clear()
        view.rebuild()  # every picture made from this text so far's own thumbnails
        assert view.images[(0, 0)].width() == c.trace.n
        assert view.grid.grab().toImage() == stepped
    check_backing_store(window, "stepped back with the model view's pictures kept")


def test_a_scrubber_step_redraws_the_next_tokens_in_place(real_window, qtbot):
    """The candidates' column was as wide as its widest token: each step moved and resized every bar,
    and laid the panel out again. The rows are one widget of one size: a step sets and paints them."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    panel = generate_in(window, qtbot, 6)
    rows = window.pretrained.next_tokens.candidates
    kinds = (QtCore.QEvent.Type.Resize, QtCore.QEvent.Type.Move, QtCore.QEvent.Type.LayoutRequest)
    with EventLog(kinds, rows) as moved:
        for button in (panel.back, panel.back, panel.back, panel.forth):
            qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)
            QtWidgets.QApplication.processEvents()
            shown = window.pretrained.next_tokens.shown()
            assert [(row.label, row.percent) for row in rows.rows()] == [(t, f"{p:.1%}") for t, p in shown]
            step = window.controller.generation.steps[window.controller.written_shown]
            assert [row.label for row in rows.rows() if row.bold] == [
                window.controller.real_model.tokenizer.label_after(window.controller.pretrained_trace.encoded,
                                                                   step.token_id)]
    assert moved.seen == []
    check_backing_store(window, "stepped back and forth")


def test_a_scrubber_step_lays_the_written_text_out_without_its_bar_coming_and_going(real_window, qtbot):
    """Each step sets the text again (the token written at that step marked); its scroll bar went and came
    back as the text was set, the text was laid out three times a step and the panel once more."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT * 6)
    panel = generate_in(window, qtbot, 8)
    kinds = (QtCore.QEvent.Type.Resize, QtCore.QEvent.Type.Hide)
    with EventLog(kinds, panel.text.viewport(), panel.text.verticalScrollBar()) as resized:
        for _ in range(3):
            before = panel.text.toPlainText()
            qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
            QtWidgets.QApplication.processEvents()
            assert panel.text.toPlainText() == before  # the whole text, another token marked
    assert resized.seen == [] and panel.text.verticalScrollBar().isVisible()
    check_backing_store(window, "three steps back")


def test_a_scrubber_step_moves_the_frame_without_writing_the_text_again(real_window, qtbot):
    """The written text was set again as HTML at each step, all of it (16 ms of a step at 1,000 tokens) and
    the box scrolled back to the top. Now a step changes the format of the two tokens whose frame moved,
    and scrolls the framed one into sight; the words of the text are left alone."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT + "  and\nthen")
    c, panel = window.controller, window.pretrained.generation
    panel = generate_in(window, qtbot, 40)
    document, tokenizer = panel.text.document(), c.real_model.tokenizer
    text = panel.text.toPlainText()
    assert text.startswith(PROMPT + "  and\nthen")  # as typed: spaces and the line break kept
    assert panel.written.framed() is None  # every token written shown: none framed
    panel.text.setFixedWidth(140)  # narrow: the text runs past the box
    changes = []
    document.contentsChange.connect(lambda at, removed, added: changes.append((at, removed, added)))
    for _ in range(30):
        qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    QtWidgets.QApplication.processEvents()
    shown = c.written_shown
    written = tokenizer.token_text(c.generation.steps[shown].token_id).replace("\n", "↵\n")
    assert panel.text.toPlainText() == text
    start, end = panel.written.token_span(shown)
    assert panel.written.framed() == shown and text[start:end] == written
    assert all(removed == added and removed <= 2 * max(len(written), 8) for _, removed, added in changes)
    framed = QtGui.QTextCursor(document)
    framed.setPosition(start + 1)
    assert framed.charFormat().fontWeight() == QtGui.QFont.Weight.Bold and framed.charFormat().fontUnderline()
    later = QtGui.QTextCursor(document)
    later.setPosition(panel.written.token_span(shown + 1)[0] + 1)
    assert later.charFormat().fontWeight() != QtGui.QFont.Weight.Bold and not later.charFormat().fontUnderline()
    assert panel.text.viewport().rect().contains(panel.text.cursorRect(framed))  # in sight
    bar = panel.text.verticalScrollBar()
    for height in (70, 50, 90, 44):  # the box made shorter (the window's layout) with the token at its foot
        bar.setValue(bar.value() + panel.text.cursorRect(framed).bottom() - panel.text.viewport().height() + 1)
        assert panel.text.viewport().rect().contains(panel.text.cursorRect(framed))
        panel.text.setFixedHeight(height)
        settle()
        assert panel.text.viewport().rect().contains(panel.text.cursorRect(framed)), height
    check_backing_store(window, "thirty steps back")


def test_a_scrubber_step_lays_out_neither_the_dock_nor_the_window(real_window, qtbot):
    """The line under the scrubber and the next tokens' title are wrapped labels with a new text each
    step; each new text asked the panel, the dock and the window to lay out again, and the window's layout
    moved and repainted its docks on a pass of its own. Their lines stay as many: nothing is laid out."""

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    panel = generate_in(window, qtbot, 6)
    next_tokens, dock = window.pretrained.next_tokens, window.pretrained.dock
    settle()
    with EventLog((QtCore.QEvent.Type.LayoutRequest,), window, dock, dock.widget()) as asked:
        for button in (panel.back, panel.back, panel.back, panel.forth):
            qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)
            settle()
            shown = window.controller.written_shown
            assert panel.position.text().startswith(f"Token {shown + 1} of 6:")
            assert next_tokens.title.text().startswith(f"Token {shown + 1} written,")
            for label in (panel.position, next_tokens.title):  # each shown whole, every line
                assert label.height() == label.heightForWidth(label.width())
    assert asked.seen == []
    check_backing_store(window, "four scrubber steps")


def test_a_scrubber_step_leaves_the_token_count_s_greatest_value_alone(real_window, qtbot):
    """Each step set the count's greatest value to the same number, and a spin box given its range asks
    to be laid out again, and with it the panel, the dock and the window."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    panel = generate_in(window, qtbot, 6)
    most = panel.tokens.maximum()
    ranges = []
    panel.tokens.setMaximum = ranges.append  # heard, not done: this instance only
    for button in (panel.back, panel.back, panel.forth):
        qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)
        QtWidgets.QApplication.processEvents()
        assert panel.position.text().startswith(f"Token {window.controller.written_shown + 1} of 6:")
    assert ranges == [] and panel.tokens.maximum() == most
    del panel.tokens.setMaximum
    window.controller.set_sentence(PROMPT + " and")  # another text: the room after it is set again
    qtbot.waitUntil(lambda: not window.controller.busy)
    assert panel.tokens.maximum() == min(window.controller.room_to_write(), most)


def test_stop_keeps_what_was_written(real_window, qtbot, monkeypatch):
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = window.pretrained.generation
    panel.tokens.setValue(400)
    room = c.real_model.max_tokens - c.pretrained_trace.n
    assert panel.tokens.value() == room  # no more than the model's context leaves
    slow = generate.__globals__["choose"]

    def choose_slowly(*args):
        QtCore.QThread.msleep(20)  # time to press Stop: the tiny model writes its 58 tokens in a blink
        return slow(*args)

    monkeypatch.setitem(generate.__globals__, "choose", choose_slowly)
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    assert c.generating and panel.stop_button.isEnabled() and not panel.generate_button.isEnabled()
    qtbot.waitUntil(lambda: c.generation is not None and len(c.generation.steps) >= 3, timeout=30_000)
    qtbot.mouseClick(panel.stop_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not c.generating and not c.busy, timeout=30_000)
    count = len(c.generation.steps)
    assert c.generation.stopped == CANCELLED and 3 <= count < room
    assert c.written_shown == count and c.pretrained_trace.n == len(c.generation.prompt_ids) + count
    assert "(stopped)" in panel.position.text() and panel.generate_button.isEnabled()


def test_a_step_back_while_generate_again_reads_its_prompt_does_nothing(real_window, qtbot, monkeypatch):
    """Generate again, then at once the scrubber's step back (its button, ←) while the new generation has
    not read its prompt: there is no text so far of it to show yet. The step back, still enabled by the
    last generation's count, raised an error."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 3)
    assert panel.back.isEnabled()
    read_on = generate_with_the_prompt_held(panel, qtbot, monkeypatch)
    qtbot.waitUntil(lambda: c.generation is not None and not c.generation.steps)  # the new one, its prompt unread
    shown = c.pretrained_trace
    assert not panel.back.isEnabled() and not panel.forth.isEnabled() and not panel.slider.isEnabled()
    panel.back.click()  # disabled: nothing
    c.show_written(c.written_shown - 1)  # as ← does (the panel's keys call it)
    panel.slider.setFocus()
    QTest.keyClick(panel.slider, QtCore.Qt.Key.Key_Left)
    assert c.pretrained_trace is shown
    read_on.set()
    qtbot.waitUntil(lambda: not c.generating and not c.busy, timeout=30_000)
    assert len(c.generation.steps) == 3 and panel.back.isEnabled()


@pytest.mark.parametrize("again", [True, False])
def test_stop_before_the_new_generation_has_read_its_prompt_keeps_the_one_on_screen(real_window, qtbot,
                                                                                     monkeypatch, again):
    """Generate (again), then Stop before the model has read the prompt: nothing of the new generation can
    be shown, and the views never left what they showed. The panel, the text box and the scrubber go back
    to it with them (they had taken the new, empty generation, under the last one's views)."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 3) if again else window.pretrained.generation
    shown, trace, text = c.generation, c.pretrained_trace, c.sentence
    read_on = generate_with_the_prompt_held(panel, qtbot, monkeypatch)
    qtbot.waitUntil(lambda: c.generation is not shown)  # the new one, its prompt unread
    assert c.generation is not None and not c.generation.steps
    qtbot.mouseClick(panel.stop_button, QtCore.Qt.MouseButton.LeftButton)
    read_on.set()
    qtbot.waitUntil(lambda: not c.generating and not c.busy, timeout=30_000)
    QtWidgets.QApplication.processEvents()
    assert c.generation is shown and c.pretrained_trace is trace
    assert c.sentence == text == window.sentence_box.toPlainText()
    assert panel.generate_button.isEnabled()
    if not again:
        assert not panel.back.isEnabled() and "Generate writes after the text" in panel.position.text()
        return
    assert c.written_shown == 3 and panel.slider.maximum() == 3 and "All 3 written tokens" in panel.position.text()
    panel.back.click()
    assert c.written_shown == 2 and c.pretrained_trace.n == trace.n - 1


def test_the_text_box_decodes_the_written_text_only_when_a_token_was_added(real_window, qtbot, monkeypatch):
    """The window looks for new tokens every 30 ms while a decoder writes; decoding every token written at each
    look (0.4 ms at 64 SmolLM2 tokens) was most of the window's own work between two tokens."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    slow = generate.__globals__["choose"]
    monkeypatch.setitem(generate.__globals__, "choose", lambda *args: QtCore.QThread.msleep(70) or slow(*args))
    tokenizer, decoded = c.real_model.tokenizer, []
    decode = tokenizer.decode

    def counted(ids):
        if threading.current_thread() is threading.main_thread():  # the window's, not the writer's
            decoded.append(len(ids))
        return decode(ids)

    monkeypatch.setattr(tokenizer, "decode", counted)
    generate_in(window, qtbot, 6)
    assert c.sentence == PROMPT + c.generation.written == window.sentence_box.toPlainText()
    assert decoded == sorted(set(decoded))  # each count of tokens written once, not at each look


def wait_for_the_step_made_ahead(controller, qtbot) -> None:
    """Until the window has asked for the scrubber's next step (once it is idle) and the worker made it."""
    qtbot.waitUntil(lambda: not controller._ahead_timer.isActive())
    assert controller._runner.wait(10_000)


def _record_texts_so_far(monkeypatch) -> list:
    """Weak references to every text so far made from now on, in the order they are made."""
    import weakref

    from attention_explorer.engine.pretrained import generation_trace

    made, make = [], generation_trace.trace_so_far

    def recorded(*args, **kwargs):
        trace = make(*args, **kwargs)
        made.append(weakref.ref(trace))
        return trace

    monkeypatch.setattr(generation_trace, "trace_so_far", recorded)
    return made


def test_the_scrubber_s_next_step_is_made_on_the_worker_while_the_window_shows_this_one(real_window, qtbot,
                                                                                         monkeypatch):
    """The end of a generation makes its first step back on the worker, and each step back the one after it
    (scrub_ahead.py), quietly: the window never turns busy, a step back shows that text so far without
    making it again, and it is the text so far the window would have made. A step the other way, or an
    edit, leaves nothing made ahead behind."""
    import threading

    from attention_explorer.engine.pretrained import generation_trace

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    busy = []
    c.busy_changed.connect(busy.append)
    panel = generate_in(window, qtbot, 8)
    wait_for_the_step_made_ahead(c, qtbot)
    first = c._ahead._making
    assert first.written == 7 and first.trace is not None and busy == [True, False]  # busy while it wrote only
    del busy[:]
    threads, make = [], generation_trace.trace_so_far

    def recorded(*args, **kwargs):
        trace = make(*args, **kwargs)
        threads.append((args[2], threading.current_thread() is threading.main_thread(), trace))
        return trace

    monkeypatch.setattr(generation_trace, "trace_so_far", recorded)
    layers_made, make_layer = [], PretrainedTrace._make_layer_trace

    def recorded_layer(trace, layer):
        layers_made.append((trace, threading.current_thread() is threading.main_thread()))
        return make_layer(trace, layer)

    monkeypatch.setattr(PretrainedTrace, "_make_layer_trace", recorded_layer)
    from attention_explorer.views import model_view

    maxima_on_gui, largest = [], model_view.largest_of_each
    monkeypatch.setattr(model_view, "largest_of_each", lambda thumbnails: maxima_on_gui.append(
        threading.current_thread() is threading.main_thread()) or largest(thumbnails))
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    assert c.written_shown == 7 and c.pretrained_trace is first.trace
    status = window.statusBar().findChild(QtWidgets.QLabel, "statusLine").text()
    assert f"made from the kept layer inputs in {first.made_ms:.0f} ms" in status  # its own time, made ahead
    wait_for_the_step_made_ahead(c, qtbot)
    assert [(written, on_gui) for written, on_gui, _ in threads] == [(6, False)]  # none made by the window
    ahead = threads[-1][2]
    del maxima_on_gui[:]  # (the step before came from the writing: its cells' tops are found as they are drawn)
    assert "thumbnail tops" in ahead.memo  # each model-view cell's largest weight, made on the worker too

    def made_of(layer_trace):
        return set(made_fields(layer_trace)), set(made_fields(layer_trace.heads[c.head]))

    read_of_the_one_shown = made_of(c.step_trace)
    made_ahead = made_of(ahead.memo["layer trace"])
    assert "mask" in read_of_the_one_shown[0] and "moved_norm" in read_of_the_one_shown[1]  # (heatmap, matrix box)
    assert all(made >= read for made, read in zip(made_ahead, read_of_the_one_shown, strict=True))
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    settle()
    assert c.written_shown == 6 and c.pretrained_trace is ahead
    assert made_of(ahead.memo["layer trace"]) == made_ahead  # the views read nothing the worker had not made
    assert [(trace, on_gui) for trace, on_gui in layers_made if trace is ahead] == [(ahead, False)]  # the views' too
    assert maxima_on_gui == []  # and not looked for again by the model view
    wait_for_the_step_made_ahead(c, qtbot)
    assert [(written, on_gui) for written, on_gui, _ in threads[1:]] == [(5, False)]  # the next, again ahead
    fresh = make(c.real_model, c.generation, 6, c._shared_projections())
    assert ahead.tokens == fresh.tokens and np.array_equal(ahead.thumbnails, fresh.thumbnails)
    assert np.array_equal(ahead.layer_weights(c.layer), fresh.layer_weights(c.layer))
    assert window.heatmap.shown_matrix().shape == (ahead.n, ahead.n)
    qtbot.mouseClick(panel.forth, QtCore.Qt.MouseButton.LeftButton)  # the other way: 7 and 8 are kept made
    assert c.written_shown == 7
    status = window.statusBar().findChild(QtWidgets.QLabel, "statusLine").text()
    assert f"in {first.made_ms:.0f} ms" in status  # the time of the one shown again, not of the last made
    wait_for_the_step_made_ahead(c, qtbot)
    assert threads[2:] == [] and c._ahead._making is None  # the step back made ahead, dropped
    assert busy == []  # never busy: no cursor, progress or Cancel for work done ahead
    window.sentence_box.setPlainText("the dog")  # an edit ends the generation: nothing ahead is kept
    qtbot.waitUntil(lambda: c.generation is None and not c.busy)
    assert c._ahead._making is None
    check_backing_store(window, "scrubbed with steps made ahead, then edited")


def test_the_texts_so_far_followed_while_writing_are_not_all_kept(real_window, qtbot, monkeypatch):
    """The views follow the newest text so far while it writes; only the last TRACES_KEPT of those are
    kept for scrubbing. Every one was kept until the generation ended: 5 GB at 400 tokens of SmolLM2."""
    import gc

    from attention_explorer import controller_generation

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    made = _record_texts_so_far(monkeypatch)
    monkeypatch.setattr(controller_generation, "FOLLOW_MS", 0)  # follow every token written
    monkeypatch.setattr(controller_generation, "TRACES_KEPT", 3)
    slow = generate.__globals__["choose"]

    def choose_slowly(*args):
        QtCore.QThread.msleep(30)  # the views follow each text so far before the next is written
        return slow(*args)

    monkeypatch.setitem(generate.__globals__, "choose", choose_slowly)
    panel = window.pretrained.generation
    panel.tokens.setValue(50)
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(made) >= 12, timeout=30_000)
    assert c.generating
    gc.collect()
    alive = [ref for ref in made if ref() is not None]
    assert len(alive) <= 3 + 2  # those kept, the one shown and the one the worker is handing over
    qtbot.mouseClick(panel.stop_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not c.generating and not c.busy, timeout=30_000)


def test_scrubbing_a_long_text_keeps_few_texts_so_far_and_no_layer_of_those_not_shown(real_window, qtbot,
                                                                                      monkeypatch):
    """A long text's texts so far each hold 17 MiB of thumbnails (SmolLM2 from about 250 tokens), and each
    kept the layer the views had shown of it, with the matrices the Steps dock read: eight kept for
    scrubbing held 150 MiB more at 1,000 tokens. Past TRACES_KEPT_BYTES two are kept, and one kept but
    no longer shown keeps no layer (made again when it is shown again); the next step, made ahead, holds
    the layer it will show."""
    import gc
    import weakref

    from attention_explorer import controller_generation

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 12)
    wait_for_the_step_made_ahead(c, qtbot)  # the first step back, made as the generation ended
    monkeypatch.setattr(controller_generation, "TRACES_KEPT_BYTES", 0)  # a tiny model's texts stand for long ones
    made = _record_texts_so_far(monkeypatch)
    layers = []
    for _ in range(6):
        layers.append(weakref.ref(c.pretrained_trace.layer_trace(c.layer)))
        qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not c.busy)
        wait_for_the_step_made_ahead(c, qtbot)
    gc.collect()
    shown = c.pretrained_trace
    alive = [ref() for ref in made if ref() is not None]
    # the one shown, the one before it, and the next step back made ahead (scrub_ahead.py)
    # (the first step back was made ahead as the generation ended, before the recording began)
    assert len(made) == 6 and len(alive) == 3 and shown is alive[1] and alive[2].n == shown.n - 1
    before, ahead = alive[0], alive[2]
    assert "layer trace" not in before.memo and "layer trace" in shown.memo
    assert ahead.memo["layer trace"].layer == c.layer  # made ahead for the views with it, to be shown next
    assert sum(ref() is not None for ref in layers) == 0  # the layers shown before the last step are gone
    qtbot.mouseClick(panel.forth, QtCore.Qt.MouseButton.LeftButton)  # the one before, shown again
    qtbot.waitUntil(lambda: not c.busy)
    assert c.pretrained_trace is before and window.heatmap.shown_matrix().shape == (before.n, before.n)


def test_a_head_off_and_generate_again_puts_the_continuations_side_by_side(real_window, qtbot):
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 8)
    first = c.generation
    c.toggle_ablated(0, 0)
    qtbot.waitUntil(lambda: not c.busy)
    assert not c.can_scrub() and not panel.slider.isEnabled() and "changed since" in panel.position.text()
    assert panel.generate_button.text() == "Generate again"
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not c.generating and not c.busy, timeout=30_000)
    second = c.generation
    assert second is not first and c.compared is first and second.prompt == first.prompt == PROMPT
    expected = generate(c.real_model, PROMPT, GenerationSettings(tokens=8, ablate=frozenset({(0, 0)})))
    assert written_ids(c) == [s.token_id for s in expected.steps]
    shown = panel.text.toPlainText()
    assert "Every head on:" in shown and "Heads off: layer 1 head 1:" in shown
    assert shown.count(PROMPT) == 2
    assert c.can_scrub() and panel.slider.isEnabled()


@pytest.mark.parametrize("after_tokens", [0, 3])
def test_a_head_switched_off_while_it_writes_reads_all_that_was_written_with_it_off(real_window, qtbot,
                                                                                    monkeypatch, after_tokens):
    """A head switched off (a right-click on the model view) while the decoder writes: the writing stops,
    what was written stays in the text box, and the views show the model reading that whole text with
    the head off. They had shown the text as it stood at the click (the prompt alone, or a few tokens
    fewer: the writer ends the token it is on), under the text box holding all of it."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    window.pretrained.dock.show()
    panel = window.pretrained.generation
    slow = generate.__globals__["choose"]

    def choose_slowly(*args):
        QtCore.QThread.msleep(20)
        return slow(*args)

    monkeypatch.setitem(generate.__globals__, "choose", choose_slowly)
    panel.tokens.setValue(40)
    qtbot.mouseClick(panel.generate_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: c.generation is not None and len(c.generation.steps) >= after_tokens, timeout=30_000)
    view = window.pretrained.model_view
    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=view.cell_rect(0, 1).center().toPoint())
    qtbot.waitUntil(lambda: not c.generating and not c.busy, timeout=30_000)
    qtbot.wait(100)  # a forward on its way has arrived
    written = c.generation.prompt + c.generation.written
    assert c.ablated == {(0, 1)} and c.sentence == written == window.sentence_box.toPlainText()
    shown = c.pretrained_trace
    assert shown.text == written and shown.ablated == c.ablated
    fresh = c.real_model.run(written, c.ablated)
    np.testing.assert_array_equal(window.heatmap.shown_matrix(), fresh.layer_weights(c.layer)[c.head])


def test_editing_the_text_ends_the_generation_and_reads_the_text(real_window, qtbot):
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 4)
    window.sentence_box.setFocus()
    QTest.keyClicks(window.sentence_box, " again")
    qtbot.waitUntil(lambda: not c.busy and c.pretrained_trace is not None and c.pretrained_trace.text == c.sentence)
    assert c.generation is None and not panel.text.isVisible() and panel.generate_button.text() == "Generate"
    assert not any(WRITTEN_MARK in label for label in c.trace.tokens)


def test_at_1280_by_720_a_decoder_s_panels_fit_the_window_and_no_box_is_squeezed(real_window, qtbot):
    """With the Steps dock, a decoder's model view, next tokens and generation (its wrapping line and
    text box) needed more height than 720 pixels leave: the window ran past the screen's bottom, and
    the splitter squeezed the sampling boxes below their text's height. The docks on the right now run
    the window's height, and the panel asks for what its rows take at its width."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    window.steps_dock.show()
    window.resize(1280, 720)
    panel = generate_in(window, qtbot, 6)
    qtbot.waitUntil(lambda: panel.text.isVisible())
    QtWidgets.QApplication.processEvents()
    assert window.minimumSizeHint().height() <= 720 and window.height() == 720
    boxes = panel.findChildren(QtWidgets.QAbstractSpinBox)
    assert len(boxes) == 5
    for box in boxes:
        assert box.height() >= box.sizeHint().height(), (box.toolTip(), box.height(), box.sizeHint().height())
    assert panel.position.height() >= panel.position.heightForWidth(panel.position.width())


def test_a_refused_model_file_leaves_generate_as_it_was(real_window, qtbot, tmp_path, monkeypatch):
    """Generate is off while another model loads; that model's file refused (File ▸ Open, a message), the
    decoder still open writes again. The button had stayed off until something else changed."""
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    panel = window.pretrained.generation
    assert panel.generate_button.isEnabled()
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(30))
    said = []
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *_a, **_k: (str(damaged), ""))
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda _parent, _title, text, *_a: said.append(text))
    window.open_action.trigger()
    qtbot.waitUntil(lambda: bool(said) and not window.controller.busy, timeout=10_000)
    QtWidgets.QApplication.processEvents()
    assert "The current model is unchanged" in said[0] and window.controller.real_model.name == "tiny-llama"
    assert panel.generate_button.isEnabled()
    generate_in(window, qtbot, 2)
    assert len(window.controller.generation.steps) == 2


def test_an_encoder_has_no_generate(real_window):
    window = real_window(str(DATA / "tiny-bert"), PROMPT)
    assert not window.pretrained.generation.isVisible()


@pytest.mark.parametrize("suffix", [".json", ".csv", ".png", ".svg", ".gif"])
def test_the_generation_is_exported_from_the_window(real_window, qtbot, tmp_path, monkeypatch, suffix):
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 5)
    target = tmp_path / "gen"  # typed without an ending: the chosen type's is added
    filters = {".json": "JSON trace (*.json)", ".csv": "CSV table (*.csv)", ".png": "PNG image (*.png)",
               ".svg": "SVG image (*.svg)", ".gif": "Animated GIF (*.gif)"}
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), filters[suffix]))
    qtbot.mouseClick(panel.export_button, QtCore.Qt.MouseButton.LeftButton)
    written = target.with_suffix(suffix)
    assert written.is_file()
    if suffix == ".json":
        data = json.loads(written.read_text())
        assert [s["token_id"] for s in data["steps"]] == written_ids(c)
        assert len(data["attention_layers"]) == c.real_model.n_layers
    elif suffix == ".csv":
        assert len(written.read_text().splitlines()) == 1 + len(c.generation.steps)
    else:  # the layer and head shown: the figure's own command line names them
        c.set_layer(1)  # (a later change of layer does not touch the file written)
        image = QtGui.QImageReader(str(written))
        assert image.canRead() and image.size().width() > 100
        assert "--layer 1 --head 1" in written.read_bytes().decode("latin-1")
    assert "Exported gen" in window.statusBar().currentMessage()


def test_an_unwritable_export_says_why_and_writes_nothing(real_window, qtbot, tmp_path, monkeypatch):
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    panel = generate_in(window, qtbot, 3)
    messages = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda _p, _t, text: messages.append(text))
    target = tmp_path / "no-such-folder" / "gen.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(panel.export_button, QtCore.Qt.MouseButton.LeftButton)
    assert len(messages) == 1 and "Nothing was written" in messages[0] and not target.exists()


def test_a_figure_of_the_text_so_far_names_that_text(real_window, qtbot, tmp_path):
    """Scrubbed back, the heatmap shows the prompt and the first tokens written: its figure's view state
    names that text, not the whole of what the box holds."""
    from attention_explorer.view_file import read_view

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    panel = generate_in(window, qtbot, 6)
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.back, QtCore.Qt.MouseButton.LeftButton)
    path = tmp_path / "so-far.png"
    assert window.export_to("heatmap", str(path))
    state = read_view(path)
    assert state.sentence == c.pretrained_trace.text != c.sentence
    assert state.sentence == PROMPT + c.real_model.tokenizer.decode([s.token_id for s in c.generation.steps[:4]])


def set_spin(spin, text: str) -> None:
    """Type a value into a spin box as a user does: select what is there, type, press Enter."""
    spin.setFocus()
    spin.selectAll()
    QTest.keyClicks(spin, text)
    QTest.keyClick(spin, QtCore.Qt.Key.Key_Return)


def test_a_draw_set_in_the_window_writes_what_the_engine_writes_with_those_settings(real_window, qtbot):
    from attention_explorer.engine.pretrained.sampling import Sampling

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    controls = window.pretrained.generation.sampling
    assert controls.temperature.text() == "greedy"
    assert not any(w.isEnabled() for w in (controls.top_k, controls.top_p, controls.seed))
    set_spin(controls.temperature, "1.3")
    assert all(w.isEnabled() for w in (controls.top_k, controls.top_p, controls.seed))
    set_spin(controls.top_k, "7")
    set_spin(controls.top_p, "0.9")
    set_spin(controls.seed, "11")
    panel = generate_in(window, qtbot, 10)
    sampling = Sampling(temperature=1.3, top_k=7, top_p=0.9, seed=11)
    assert c.generation.settings.sampling == sampling
    expected = generate(c.real_model, PROMPT, GenerationSettings(tokens=10, sampling=sampling))
    greedy = generate(c.real_model, PROMPT, GenerationSettings(tokens=10))
    assert written_ids(c) == [s.token_id for s in expected.steps]
    assert written_ids(c) != [s.token_id for s in greedy.steps]  # the draw is not the greedy text
    # a second draw with another seed stands beside the first, each headed by how it was drawn
    set_spin(controls.seed, "12")
    first = c.generation
    generate_in(window, qtbot, 10)
    assert c.compared is first and c.generation.settings.sampling.seed == 12
    shown = panel.text.toPlainText()
    assert "sampled at temperature 1.3, top-k 7, top-p 0.9, seed 11:" in shown
    assert "sampled at temperature 1.3, top-k 7, top-p 0.9, seed 12:" in shown
    check_backing_store(window, "two draws side by side")


def test_as_a_chat_is_offered_only_with_a_template_and_reads_the_prompt_in_it(real_window, qtbot, tmp_path):
    import shutil

    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    chat = window.pretrained.generation.sampling.chat
    assert not chat.isEnabled() and "no chat template" in chat.toolTip()

    folder = tmp_path / "tiny-llama-chat"
    shutil.copytree(DATA / "tiny-llama", folder)
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHATML}))
    c = window.controller
    c.open_model(str(folder), PROMPT)
    qtbot.waitUntil(lambda: c.is_real and c.real_model.path == folder and not c.busy, timeout=30_000)
    QtWidgets.QApplication.processEvents()
    assert chat.isEnabled() and "chat template" in chat.toolTip()
    qtbot.mouseClick(chat, QtCore.Qt.MouseButton.LeftButton)
    assert chat.isChecked()
    generate_in(window, qtbot, 6)
    expected = generate(c.real_model, PROMPT, GenerationSettings(tokens=6, chat=True))
    assert c.generation.settings.chat and written_ids(c) == [s.token_id for s in expected.steps]
    assert c.generation.text.startswith("<|im_start|>user\n" + PROMPT)
    # the box keeps what the user typed and the reply; the views read the template's tokens too
    assert window.sentence_box.toPlainText() == PROMPT + expected.written
    assert c.pretrained_trace.n == len(expected.prompt_ids) + len(expected.steps)
    assert "asked as a chat" not in window.pretrained.generation.text.toPlainText()  # nothing compared yet
    check_backing_store(window, "a chat written")


def test_the_whole_text_made_as_the_writing_ends_is_shown_once_when_it_has_ended(real_window, qtbot, monkeypatch):
    """The worker makes the whole text for the views as it ends, then hands the generation over. The
    window's poll could take that text first, while the generation was still being written: the views
    were drawn for it twice, the first time while the user's hover held them (a test on a busy machine
    caught it). Here the poll always runs in between."""
    import threading

    from attention_explorer import controller_generation
    from attention_explorer.engine.pretrained import generate as generate_module

    ended, polled = threading.Event(), threading.Event()
    write, make_newest, take = generate_module.generate, controller_generation._make_newest, \
        controller_generation.GenerationControls._take_written

    def written(*args, **kwargs):
        generation = write(*args, **kwargs)
        ended.set()
        return generation

    def made_newest(model, mailbox):
        make_newest(model, mailbox)
        if ended.is_set():  # the whole text, made as the writing ends: the window polls before it hears
            polled.clear()
            assert polled.wait(5)

    def taken(self):
        take(self)
        polled.set()

    monkeypatch.setattr(generate_module, "generate", written)
    monkeypatch.setattr(controller_generation, "_make_newest", made_newest)
    monkeypatch.setattr(controller_generation.GenerationControls, "_take_written", taken)
    window = real_window(str(DATA / "tiny-llama"), PROMPT)
    c = window.controller
    shown = []
    c.written_shown_changed.connect(lambda count: shown.append((c.generating, count)))
    generate_in(window, qtbot, 6)
    count = len(c.generation.steps)
    assert shown[-1] == (False, count) and (True, count) not in shown  # once, once it has ended
    check_backing_store(window, "the whole text shown as the writing ended")
