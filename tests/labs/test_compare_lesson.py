"""Compare: two sentences, two heads or two option sets, with a difference heatmap and clear refusals."""

import numpy as np

from attention_explorer.labs.compare_lesson import QtCompareLesson


def test_two_sentences_with_different_word_counts_get_a_clear_message(make_panel):
    panel = make_panel(QtCompareLesson)
    panel.set_mode("sentences")
    panel.sentence_b.setText("the dog sat")
    assert panel.error_line.isVisible()
    assert "cannot compare 6 words with 3" in panel.error_line.text()
    assert panel.map_difference.shown_matrix() is None and panel.map_difference.message.isVisible()


def test_two_sentences_of_equal_length(make_panel):
    panel = make_panel(QtCompareLesson)
    panel.set_mode("sentences")
    panel.sentence_b.setText("my dog chased a ball in")
    assert not panel.error_line.isVisible()
    result = panel.difference
    np.testing.assert_array_equal(panel.map_difference.shown_matrix(), result.weights_b - result.weights_a)
    assert panel.map_b.row_labels() == ["my", "dog", "chased", "a", "ball", "in"]
    low, high = panel.map_difference.levels()
    assert low == -high == -result.max_abs
    assert "Largest change" in panel.summary.text()


def test_two_heads(make_panel):
    panel = make_panel(QtCompareLesson)
    panel.set_mode("heads")
    trace = panel.controller.trace
    np.testing.assert_array_equal(panel.map_difference.shown_matrix(),
                                  trace.heads[1].weights - trace.heads[0].weights)
    assert panel.map_b.title() == "B: head 2"
    panel.head_b.setCurrentIndex(0)
    panel.head_b.activated.emit(0)
    assert np.all(panel.map_difference.shown_matrix() == 0)
    assert "identical" in panel.summary.text()


def test_two_heads_of_a_single_head_model_is_refused_clearly(make_panel):
    panel = make_panel(QtCompareLesson, "it-was-tired")
    panel.set_mode("heads")
    assert panel.error_line.isVisible() and "single head" in panel.error_line.text()


def test_it_opens_on_two_sentences_two_words_apart(make_panel):
    panel = make_panel(QtCompareLesson)  # the main sentence: "the cat sat on the mat"
    assert panel.mode == "sentences"
    assert panel.sentence_b.text() == "the mat sat on the cat"
    assert not panel.error_line.isVisible() and panel.difference.max_abs > 0.05


def test_two_option_sets(make_panel):
    panel = make_panel(QtCompareLesson)
    panel.set_mode("options")
    assert not panel.switches_b["scale"].isChecked()  # B starts with the opposite scaling
    assert panel.difference.max_abs > 0.1
    assert panel.map_b.title().startswith("B: no scale")
    panel.switches_b["scale"].setChecked(True)
    assert panel.difference.max_abs == 0
    panel.switches_b["causal"].setChecked(True)
    above = np.triu(np.ones((6, 6), dtype=bool), k=1)
    np.testing.assert_array_equal(panel.map_b.masked_cells(), above)
    assert np.all(panel.map_difference.shown_matrix()[above] <= 0)  # B may not look ahead
