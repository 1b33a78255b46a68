"""An encoder–decoder's target written by the model, in the window: the next tokens listing the decoder's
scores for the target's last token, the scrubber under the Target box stepping through what it wrote
(the views reading it up to one token, the candidates that token was chosen from beside them), and a
Write that fails or is overtaken by typing. Driven through the box's own buttons, slider and keys, on
the tiny BART checkpoint."""

import threading

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer.engine.errors import ModelError  # noqa: E402
from attention_explorer.engine.pretrained import encoder_decoder_write  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder_write import write_target  # noqa: E402
from attention_explorer.engine.pretrained.generate import GenerationSettings  # noqa: E402
from bart_window import SOURCE, settle, type_target  # noqa: E402
from screen_oracle import check_backing_store  # noqa: E402


def press_write(window, qtbot, tokens: int) -> None:
    box = window.pretrained.target_box
    box.tokens.setValue(tokens)
    qtbot.mouseClick(box.write_button, QtCore.Qt.MouseButton.LeftButton)
    settle(qtbot, window.controller)


def top_five(logits: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The five likeliest token ids of one row of scores, and every token's probability."""
    scores = logits.astype(np.float64)
    probabilities = np.exp(scores - scores.max())
    probabilities /= probabilities.sum()
    return [int(i) for i in np.argsort(-probabilities, kind="stable")[:5]], probabilities


def test_a_typed_target_lists_the_decoder_s_guess_at_its_last_token(bart_window, bart):
    """Typed, the target "the cat sat on the mat" is read as <s> the … mat and its last row scores the
    token that ends it: the list is those scores' five likeliest, the title names that token."""
    window, c = bart_window, bart_window.controller
    panel = window.pretrained.next_tokens
    result = bart.run(SOURCE, SOURCE)
    ids, probabilities = top_five(result.logits[-1])
    assert [t.token_id for t in c.pretrained_trace.next_tokens] == ids
    shown = panel.shown()
    assert [label for label, _ in shown] == [bart.tokenizer.token_label(i) for i in ids]
    np.testing.assert_allclose([p for _, p in shown], probabilities[ids], rtol=1e-9)
    last = int(bart.tokenizer.encode(SOURCE).ids[-1])
    assert f"target's last token, {bart.tokenizer.token_label(last)!r}" in panel.title.text()
    assert [row.label for row in panel.candidates.rows()] == [label for label, _ in shown]
    assert panel.candidates.isVisible() and not window.pretrained.target_box.scrubber.isVisible()


def test_the_scrubber_steps_through_the_target_written_with_each_token_s_candidates(bart_window, bart, qtbot):
    window, c = bart_window, bart_window.controller
    box, panel = window.pretrained.target_box, window.pretrained.next_tokens
    press_write(window, qtbot, 6)
    expected = write_target(bart, SOURCE, GenerationSettings(tokens=6))
    steps, count = expected.steps, len(expected.steps)
    assert count >= 4 and box.scrubber.isVisible()
    assert (box.slider.minimum(), box.slider.maximum(), box.slider.value()) == (1, count, count)
    assert c.target_shown == count and not box.forth.isEnabled()

    box.slider.setFocus()
    QTest.keyClick(box.slider, QtCore.Qt.Key.Key_Left)  # ← on the slider, as a user steps back
    QTest.keyClick(box.slider, QtCore.Qt.Key.Key_Left)
    settle(qtbot, c)
    shown = count - 2
    assert c.target_shown == shown and box.slider.value() == shown
    assert box.edit.text() == expected.written == c.target  # the box keeps the whole target
    # the views read the target up to token `shown`: the start token and the shown - 1 written before it,
    # each row the step's own cross-attention; the last row is the one that chose token `shown`
    assert len(window.heatmap.row_labels()) == shown
    np.testing.assert_allclose(window.heatmap.shown_matrix(),
                               np.stack([s.cross_attention[0, 0] for s in steps[:shown]]), atol=1e-5)
    chosen = steps[shown - 1]
    assert [t.token_id for t in c.pretrained_trace.next_tokens] == [x.token_id for x in chosen.choice.candidates]
    np.testing.assert_allclose([t.probability for t in c.pretrained_trace.next_tokens],
                               [x.probability for x in chosen.choice.candidates], atol=1e-5)
    label = bart.tokenizer.token_label(chosen.token_id)
    assert f"Token {shown} written, {label!r}, was chosen from" in panel.title.text()
    position = box.position.text()
    assert position.startswith(f"Token {shown} of {count} written:") and f"›{label}" in position
    assert f"{chosen.choice.probability:.1%}"[:-2] in position  # the same to a tenth of a percent, give or take
    check_backing_store(window, "a written target stepped back")

    qtbot.mouseClick(box.forth, QtCore.Qt.MouseButton.LeftButton)
    settle(qtbot, c)
    assert c.target_shown == shown + 1 and len(window.heatmap.row_labels()) == shown + 1
    qtbot.mouseClick(box.back, QtCore.Qt.MouseButton.LeftButton)
    qtbot.mouseClick(box.back, QtCore.Qt.MouseButton.LeftButton)
    settle(qtbot, c)
    assert c.target_shown == shown - 1 and len(window.heatmap.row_labels()) == shown - 1

    type_target(qtbot, window, "a dog")  # a typed target is read as typed: no scrubber
    assert c.target_written is None and not box.scrubber.isVisible() and c.target_shown == 0
    assert "target's last token" in panel.title.text()


def test_a_forced_token_is_said_to_be_forced(bart_window, bart, qtbot):
    """tiny-bart's config forces the last token a count allows (forced_eos_token_id, as BART's do): shown
    at it, the line says the files force it there, with what the model's own scores gave it."""
    window, c = bart_window, bart_window.controller
    press_write(window, qtbot, 6)
    expected = write_target(bart, SOURCE, GenerationSettings(tokens=6))
    assert len(expected.steps) == 6 and expected.steps[-1].forced and not expected.steps[-2].forced
    position = window.pretrained.target_box.position.text()
    assert position.startswith("Token 6 of 6 written: the model's files force ›") and "its scores gave it" in position
    c.show_target_written(5)
    settle(qtbot, c)
    assert "the last row chose" in window.pretrained.target_box.position.text()


def test_a_write_that_fails_says_why_and_keeps_the_target_and_the_views(bart_window, qtbot, monkeypatch):
    window, c = bart_window, bart_window.controller
    box = window.pretrained.target_box
    rows = window.heatmap.row_labels()

    def overflowing(model, *_args, **_kwargs):
        raise ModelError(f"{model.name}: the decoder's next-token scores overflowed (damaged weights?)")

    monkeypatch.setattr(encoder_decoder_write, "write_target", overflowing)
    press_write(window, qtbot, 6)
    assert box.position.isVisible() and box.position.text().startswith("Nothing was written: ")
    assert "overflowed" in box.position.text() and "overflowed" in c.status
    assert c.target == SOURCE == box.edit.text() and window.heatmap.row_labels() == rows
    assert box.write_button.isEnabled() and not c.busy and c.target_written is None
    type_target(qtbot, window, "a dog")  # the next edit clears the message
    assert not box.position.isVisible()


def test_a_target_typed_while_the_model_writes_wins(bart_window, qtbot, monkeypatch):
    window, c = bart_window, bart_window.controller
    release = threading.Event()

    def held(*args, **kwargs):
        release.wait(10)
        return write_target(*args, **kwargs)

    monkeypatch.setattr(encoder_decoder_write, "write_target", held)
    qtbot.mouseClick(window.pretrained.target_box.write_button, QtCore.Qt.MouseButton.LeftButton)
    assert c.busy
    edit = window.pretrained.target_box.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "a dog")
    release.set()
    settle(qtbot, c)
    QtWidgets.QApplication.processEvents()
    assert c.target == "a dog" == edit.text() and c.target_written is None
    assert c.pretrained_trace.target == "a dog"


def test_the_box_holds_a_target_as_long_as_a_source(bart_window, qtbot):
    """A target starts as the source, and a source may be 40,000 characters: a line edit keeps 32,767
    by default, and the box then showed less than the model read."""
    window, c = bart_window, bart_window.controller
    c.set_target("x" * 40_000)
    settle(qtbot, c)
    assert window.pretrained.target_box.edit.text() == c.target == c.pretrained_trace.target
