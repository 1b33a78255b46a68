"""Word order: a shuffle leaves every output unchanged without positions (≤ 1e-12) and changes it with them."""

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.labs.word_order_lesson import QtWordOrderLesson

DIFFERENCE = 3  # table column: largest change in the word's output


def _shown_differences(panel) -> list[float]:
    return [float(text.split(" ")[0]) for text in panel.table.column_texts(DIFFERENCE)]


def test_shuffle_without_positions_changes_no_output(make_panel):
    panel = make_panel(QtWordOrderLesson)
    assert not panel.positional.isChecked()
    first_b = panel.sentence_b.text()
    panel.shuffle_button.click()
    assert panel.sentence_b.text() != first_b
    assert sorted(panel.sentence_b.text().split()) == sorted(["the", "cat", "sat", "on", "the", "mat"])
    assert panel.table.rowCount() == 6
    assert max(_shown_differences(panel)) <= 1e-12
    assert panel.comparison.max_difference <= 1e-12
    assert "only moved" in panel.summary.text()
    # B's heatmap is drawn in B's own order, with B's weights
    assert panel.weights_b.row_labels() == panel.comparison.reordered.labels
    np.testing.assert_array_equal(panel.weights_b.shown_matrix(), panel.comparison.reordered.heads[0].weights)


def test_positional_encoding_makes_the_shuffle_matter(make_panel):
    panel = make_panel(QtWordOrderLesson)
    panel.positional.setChecked(True)
    assert max(_shown_differences(panel)) > 1e-3
    assert panel.comparison.original.positional is not None
    assert "different output" in panel.summary.text()
    np.testing.assert_array_equal(panel.encoding_map.shown_matrix(), engine.sinusoidal_encoding(6, 8))
    assert panel.encoding_map.column_labels()[:3] == ["sin0", "cos0", "sin1"]
    assert "added to the embeddings" in panel.encoding_map.title()
    panel.positional.setChecked(False)
    assert max(_shown_differences(panel)) <= 1e-12
    assert "not added" in panel.encoding_map.title()


def test_a_typed_second_order_and_a_mismatch(make_panel):
    panel = make_panel(QtWordOrderLesson)
    panel.sentence_b.setText("mat the on sat cat the")
    assert panel.table.column_texts(2) == ["2", "5", "4", "3", "6", "1"]  # where each word of A went
    panel.sentence_b.setText("the dog sat on the mat")
    assert panel.error_line.isVisible() and "same words" in panel.error_line.text()


def test_it_was_tired_offers_its_example_pair(make_panel):
    panel = make_panel(QtWordOrderLesson, "it-was-tired")
    assert panel.example_button.isVisible() and "maya chased the dog" in panel.example_button.text()
    panel.example_button.click()
    assert panel.controller.sentence == "maya chased the dog"
    assert panel.sentence_b.text() == "the dog chased maya"
    assert panel.comparison.order.tolist() == [2, 3, 1, 0]
    assert max(_shown_differences(panel)) <= 1e-12
    panel.positional.setChecked(True)
    assert panel.comparison.max_difference > 1e-3


def test_a_new_main_sentence_gets_a_new_order(make_panel):
    panel = make_panel(QtWordOrderLesson)
    panel.controller.set_sentence("my dog chased a ball")
    assert sorted(panel.sentence_b.text().split()) == sorted(["my", "dog", "chased", "a", "ball"])
    assert panel.sentence_a.text() == "my dog chased a ball"
    assert panel.table.rowCount() == 5
    assert not panel.example_button.isVisible()  # cat-sat-on-mat has no example pair


@pytest.mark.parametrize("model", ["cats-chase-mice", "cat-ate-fish"])
def test_shuffle_on_other_models(make_panel, model):
    panel = make_panel(QtWordOrderLesson, model)
    panel.shuffle_button.click()
    assert panel.comparison.max_difference <= 1e-12


def test_the_causal_mask_stays_off_in_this_lesson(make_panel):
    panel = make_panel(QtWordOrderLesson, "cat-ate-fish")
    assert panel.controller.options.causal  # the main window keeps its mask
    assert panel.comparison.original.mask is None
    assert not panel.weights_a.masked_cells().any()
