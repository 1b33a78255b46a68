"""What the random walk checks after its actions: the trace is what a fresh engine run of the controller's
state gives, the views show what the controller holds, and (the screen oracles) the window's backing
store equals a full repaint and every view draws what its fresh twin draws."""

from __future__ import annotations

import functools

import numpy as np
from PySide6 import QtGui, QtWidgets

from attention_explorer import engine
from attention_explorer.controller import LOOKED_AT
from attention_explorer.controller_encoder_decoder import EMPTY_TARGET, TARGET_STOPPED
from attention_explorer.controller_pretrained import FORWARD_STOPPED
from attention_explorer.engine.pretrained.encoder_decoder_view import EncoderDecoderTrace
from attention_explorer.engine.pretrained.forward import forward
from attention_explorer.engine.pretrained.generation_trace import written_in
from attention_explorer.engine.pretrained.recompute import LayerMaker
from attention_explorer.pretrained_display import shown_trace
from screen_oracle import check_backing_store
from view_twins import check_twin


def check_state(window) -> None:
    c = window.controller
    if c.is_encoder_decoder:
        _check_encoder_decoder(c)
    elif c.is_real:
        _check_real(c)
    else:
        _check_toy(c)
    shown = [chip for chip in window.chips.chips if not chip.left_out]  # (a reading's hidden tokens: greyed chips)
    assert len(shown) == len(c.words), "one chip per typed word"
    if c.trace is None or c.trace.reading is None:
        assert len(shown) == len(window.chips.chips), "no token left out without a reading"
    known = [chip.token_index for chip in window.chips.chips if chip.token_index is not None]
    assert known == list(range(c.trace.n if c.trace else 0)), "the chips number the known words in order"
    if "\udcff" not in c.sentence:  # Qt cannot hold a lone surrogate: the box shows the text without it
        assert window.sentence_box.toPlainText() == c.sentence
    if c.trace is not None:
        assert window.heatmap.shown_matrix().shape == (c.trace.n, c.trace.n_keys)
        assert 0 <= c.head < c.options.heads
    for index, role in ((c.hovered, c.focus_role), (c.pinned, c.pinned_role)):  # a hover is the focus
        count = (c.trace.n_keys if role == LOOKED_AT else c.trace.n) if c.trace else 0
        assert index is None or 0 <= index < count, "a focus past the last word"
    for bar in (window.options_bar, window.pretrained.bar):
        for box in bar.findChildren(QtWidgets.QComboBox):
            assert not box.isVisible() or combo_text_fits(box), f"{box.currentText()!r} is cut in its box"


def combo_text_fits(box: QtWidgets.QComboBox) -> bool:
    """Whether the chosen item's text fits its combo box ("12 (d_k = 3" was cut)."""
    option = QtWidgets.QStyleOptionComboBox()
    box.initStyleOption(option)
    field = box.style().subControlRect(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option,
                                       QtWidgets.QStyle.SubControl.SC_ComboBoxEditField, box)
    return box.fontMetrics().horizontalAdvance(box.currentText()) <= field.width()


def _check_toy(c) -> None:
    try:
        fresh = engine.run(c.model, c.sentence, c.options)
    except engine.EngineError as exc:
        assert c.trace is None and c.error == str(exc), "the window shows a trace the engine refuses"
        return
    assert c.trace is not None, f"no trace shown, but the engine computes one ({c.error})"
    assert c.trace.tokens == fresh.tokens and c.trace.options == fresh.options
    for shown, expected in zip(c.trace.heads, fresh.heads, strict=True):
        np.testing.assert_array_equal(shown.weights, expected.weights)
    np.testing.assert_array_equal(c.trace.output, fresh.output)


def _check_real(c) -> None:
    try:
        fresh = c.real_model.run(c.sentence, c.ablated)
    except engine.EngineError as exc:
        assert c.trace is None and c.error == str(exc), "the window shows a trace the model refuses"
        return
    ptrace = c.pretrained_trace
    if ptrace is None:  # a forward stopped with Cancel: nothing drawn, and the window says why
        assert c.trace is None and c.error == FORWARD_STOPPED, f"a real model's trace is missing: {c.error!r}"
        return
    if written_in(ptrace) is not None:
        _check_text_so_far(c, ptrace)
        return
    assert ptrace.text == c.sentence, \
        f"the forward shown read {ptrace.text[:60]!r}…, the window holds {c.sentence[:60]!r}…"
    assert ptrace.ablated == c.ablated, \
        f"the forward shown had {set(ptrace.ablated)} off, the window says {set(c.ablated)}"
    # a decoder's edit reads from its first new token (model.run's `previous`), and a head switched off
    # after it resumes from that: the whole forward's to the rounding of products of another length
    same = np.testing.assert_array_equal if ptrace.forward_result.to_the_bit else \
        functools.partial(np.testing.assert_allclose, rtol=5e-5, atol=1e-5)
    for layer in range(c.real_model.n_layers):
        same(ptrace.layer_weights(layer), fresh.layer_weights(layer))
    expected, _note = shown_trace(fresh, c.layer, c.real_view)
    assert c.trace.tokens == expected.tokens
    same(c.trace.heads[c.head].weights, expected.heads[c.head].weights)


def _check_encoder_decoder(c) -> None:
    """The run shown is the engine's run of the source and target the window holds, seen through the part
    chosen (or the window says why there is none); a target the model wrote (Write) is read as it wrote it,
    its own tokens, as the window reads it (its text read again could split otherwise, or be empty), up to
    the token its scrubber shows."""
    written, target = c.target_ids_read, c.target_read
    if c.sentence.strip() and not target.strip() and written is None:
        assert c.trace is None and c.error == EMPTY_TARGET, f"an empty target, but: {c.error!r}"
        return
    try:
        fresh = c.real_model.model.run(c.sentence, target, c.heads_off, written)
    except engine.EngineError as exc:
        assert c.trace is None and c.error == str(exc), "the window shows a run the model refuses"
        return
    ptrace = c.pretrained_trace
    if ptrace is None:  # a run stopped with Cancel
        assert c.trace is None and c.error in (FORWARD_STOPPED, TARGET_STOPPED), f"a run is missing: {c.error!r}"
        return
    assert (ptrace.text, ptrace.target, ptrace.part, ptrace.off) == (c.sentence, target, c.part, c.heads_off), \
        "another run is shown"
    assert ptrace.ablated == c.ablated, "the heads off shown are not the run's"
    expected = {"encoder": fresh.encoder_attention, "decoder": fresh.decoder_attention,
                "cross": fresh.cross_attention}[c.part]
    np.testing.assert_array_equal(ptrace.all_weights(), expected)
    seen = EncoderDecoderTrace(c.real_model.name, c.sentence, c.target, fresh, c.real_model, c.heads_off)
    read, _note = shown_trace(seen, c.layer, c.real_view)  # under the reading the window shows
    assert c.trace.tokens == read.tokens and c.trace.key_tokens == read.key_tokens
    np.testing.assert_array_equal(c.trace.heads[c.head].weights, read.heads[c.head].weights)
    assert c.options.heads == expected.shape[1] and c.real_model.n_layers == expected.shape[0]


def _covered(window) -> bool:
    """Whether another window of the app lies over part of `window` on an X server's screen, whose
    picture of a window holds what overlaps it (offscreen, every window has its own backing store)."""
    if QtGui.QGuiApplication.platformName() != "xcb":
        return False
    return any(other is not window and other.isVisible() and other.objectName() != "qtooltip_label"
               and other.frameGeometry().intersects(window.frameGeometry())
               for other in QtWidgets.QApplication.topLevelWidgets())


def check_screen(window, where: str, twins: bool = True) -> None:
    """The backing store against a full repaint of the whole window, and of the census and lessons
    windows while they are open; with `twins`, each of the main window's views against the same view
    built fresh."""
    check_backing_store(window, where)
    others = ((window.pretrained.census.window, "the census window"), (window.lessons_window, "the lessons"))
    for other, name in others:
        if other is not None and other.isVisible() and not _covered(other):
            check_backing_store(other, f"{where}, {name}")
    if not twins:
        return
    for view in (window.heatmap, window.arcs, window.row_bars, window.timeline, window.chips,
                 window.pretrained.model_view, window.pretrained.next_tokens):
        check_twin(view, where)


def _check_text_so_far(c, ptrace) -> None:
    """A generation's text so far is made from its decoder's kept inputs, one token at a time: the
    forward's over the same tokens to 1e-5, or 5e-5 of the weight (not to the bit: float32 sums taken
    in another order through SmolLM2's 30 layers once differed by 1.07e-5 on a weight of 0.55), in tokens
    the model wrote (the text read again could split otherwise)."""
    generation = c.generation
    assert generation is not None, "a text so far is shown without its generation"
    ids = generation.ids[:len(generation.prompt_ids) + written_in(ptrace)]
    np.testing.assert_array_equal(ptrace.encoded.ids, ids)
    assert ptrace.ablated == generation.settings.ablate == c.ablated, "a text so far shown with other heads off"
    fresh = forward(c.real_model.weights, ids, ptrace.ablated, special=ptrace.special)
    maker = LayerMaker(c.real_model.weights, fresh, ptrace.ablated)
    for layer in range(c.real_model.n_layers):
        np.testing.assert_allclose(ptrace.layer_weights(layer), maker.layer_weights(layer), rtol=5e-5, atol=1e-5)
