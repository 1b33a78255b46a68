"""Masking: encoder against decoder on the main sentence; −∞ in the masked scores, exact zeros after softmax."""

import numpy as np

from attention_explorer.labs.masking_lesson import QtMaskingLesson


def test_decoder_scores_are_minus_infinity_and_weights_exact_zeros_above_the_diagonal(make_panel):
    panel = make_panel(QtMaskingLesson)
    above = np.triu(np.ones((6, 6), dtype=bool), k=1)
    scores = panel.decoder_scores.shown_matrix()
    assert np.all(np.isneginf(scores[above])) and np.all(np.isfinite(scores[~above]))
    assert panel.decoder_scores.written_text(0, 1) == "−∞"
    weights = panel.decoder_weights.shown_matrix()
    assert np.all(weights[above] == 0.0)
    np.testing.assert_array_equal(panel.decoder_weights.masked_cells(), above)
    assert panel.decoder_weights.written_text(0, 3) == "0"
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # the encoder sees everything: nothing masked, no zero forced
    assert not panel.encoder_weights.masked_cells().any() and np.all(panel.encoder_weights.shown_matrix() > 0)
    assert "exactly zero" in panel.zeros_line.text() and "0.0" in panel.zeros_line.text()


def test_the_first_word_can_only_look_at_itself(make_panel):
    panel = make_panel(QtMaskingLesson)
    assert panel.decoder_weights.shown_matrix()[0, 0] == 1.0
    text = panel.first_word_line.text()
    assert "“the₁”" in text and "only look at itself" in text and "100%" in text


def test_follows_the_main_sentence_and_head(make_panel):
    panel = make_panel(QtMaskingLesson)
    first_head = panel.decoder_weights.shown_matrix().copy()
    panel.controller.set_head(1)
    assert not np.array_equal(panel.decoder_weights.shown_matrix(), first_head)
    panel.controller.set_sentence("my dog chased a ball")
    assert panel.decoder_scores.row_labels() == ["my", "dog", "chased", "a", "ball"]
    assert "“my”" in panel.first_word_line.text()
    panel.controller.set_sentence("")
    assert panel.error_line.isVisible() and "empty" in panel.error_line.text()
