"""Cross-attention: queries from the main sentence, keys and values from a second: an n_A × n_B heatmap."""

import numpy as np

from attention_explorer.labs.cross_lesson import QtCrossLesson


def test_the_heatmap_is_target_words_by_source_words(make_panel):
    panel = make_panel(QtCrossLesson)
    assert panel.source_box.text() == "the quick brown fox jumped over the lazy dog"
    weights = panel.weights_map.shown_matrix()
    assert weights.shape == (6, 9)
    assert panel.weights_map.row_labels() == ["the₁", "cat", "sat", "on", "the₂", "mat"]
    assert panel.weights_map.column_labels()[:3] == ["the₁", "quick", "brown"]
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert "6 × 9" in panel.shape_line.text()


def test_typing_a_source_sentence_reshapes_the_heatmap(make_panel):
    panel = make_panel(QtCrossLesson)
    panel.source_box.setText("my dog chased a zebra")
    assert panel.weights_map.shown_matrix().shape == (6, 4)
    assert panel.weights_map.column_labels() == ["my", "dog", "chased", "a"]
    assert "zebra" in panel.shape_line.text()
    np.testing.assert_array_equal(panel.weights_map.shown_matrix(), panel.cross.heads[0].weights)
    panel.source_box.setText("zebra")
    assert panel.error_line.isVisible() and "zebra" in panel.error_line.text()


def test_the_main_sentence_is_the_target(make_panel):
    panel = make_panel(QtCrossLesson)
    panel.controller.set_sentence("the dog sat")
    assert panel.weights_map.shown_matrix().shape == (3, 9)
    panel.controller.set_head(1)
    np.testing.assert_array_equal(panel.weights_map.shown_matrix(), panel.cross.heads[1].weights)
