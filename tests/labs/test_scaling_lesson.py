"""Why √d_k: the controls drive the experiment and the table, histograms and bars show its numbers."""

import numpy as np
import pytest

from attention_explorer.labs.scaling_lesson import DK_STEPS, HIST_EDGES, QtScalingLesson

SPREAD, THEORY, TOP_WEIGHT, SLOPE, GRADIENT = 1, 2, 3, 4, 5  # table columns
RAW, SCALED, BY_DK = 0, 1, 2                                 # table rows


def _number(text: str) -> float:
    return float(text.rstrip("×%"))


def _spread_of_drawn(shares: np.ndarray) -> float:
    centres = (HIST_EDGES[:-1] + HIST_EDGES[1:]) / 2
    mean = float(np.sum(centres * shares) / shares.sum())
    return float(np.sqrt(np.sum(shares * (centres - mean) ** 2) / shares.sum()))


def test_opens_on_d_k_64_with_the_papers_numbers(make_panel):
    panel = make_panel(QtScalingLesson)
    assert panel.dk_box.value() == 64 and DK_STEPS[panel.dk_slider.value()] == 64
    assert _number(panel.table.cell_text(RAW, SPREAD)) == pytest.approx(8, rel=0.05)
    assert panel.table.cell_text(RAW, THEORY) == "8.00"
    assert _number(panel.table.cell_text(SCALED, SPREAD)) == pytest.approx(1, rel=0.05)
    assert _number(panel.table.cell_text(BY_DK, SPREAD)) == pytest.approx(1 / 8, rel=0.05)
    assert panel.table.cell_text(RAW, GRADIENT) == "1.00×"
    assert _number(panel.table.cell_text(SCALED, GRADIENT)) > 1.5
    assert "d_k = 64" in panel.summary.text()


def test_moving_the_d_k_slider_changes_the_spread_in_the_table(make_panel):
    panel = make_panel(QtScalingLesson)
    panel.dk_slider.setValue(len(DK_STEPS) - 1)
    assert panel.dk_box.value() == 1024
    assert _number(panel.table.cell_text(RAW, SPREAD)) == pytest.approx(32, rel=0.05)
    assert _number(panel.table.cell_text(SCALED, SPREAD)) == pytest.approx(1, rel=0.05)
    assert _number(panel.table.cell_text(RAW, TOP_WEIGHT)) > 90  # nearly one-hot
    wide = _spread_of_drawn(panel.shares["raw"])
    panel.dk_slider.setValue(0)
    assert panel.dk_box.value() == 1
    assert _number(panel.table.cell_text(RAW, SPREAD)) == pytest.approx(1, rel=0.1)
    assert _spread_of_drawn(panel.shares["raw"]) < wide / 10  # same axis: the raw histogram narrowed


def test_typing_d_k_moves_the_slider(make_panel):
    panel = make_panel(QtScalingLesson)
    panel.dk_box.setValue(256)
    assert DK_STEPS[panel.dk_slider.value()] == 256
    assert panel.experiment.dk == 256


def test_the_scaling_choice_picks_the_lower_histogram_and_bold_row(make_panel):
    panel = make_panel(QtScalingLesson)
    assert _spread_of_drawn(panel.shares["divided"]) == pytest.approx(1, rel=0.1)
    panel.mode_box.setCurrentIndex(2)  # ÷d_k
    assert panel.mode == "divided_by_dk"
    np.testing.assert_array_equal(panel.shares["divided"],
                                  np.histogram(panel.experiment.scores("divided_by_dk"), HIST_EDGES)[0]
                                  / panel.experiment.raw_scores.size)
    assert panel.table.item(BY_DK, 0).font().bold() and not panel.table.item(SCALED, 0).font().bold()
    assert "÷d_k" in panel.mode_plot.titleLabel.text


def test_keys_trials_and_seed_change_what_is_shown(make_panel):
    panel = make_panel(QtScalingLesson)
    panel.keys_box.setValue(4)
    heights = {mode: bars.opts["height"] for mode, bars in panel.bars.items()}
    assert all(len(h) == 4 for h in heights.values())
    np.testing.assert_array_equal(heights["scaled"], panel.experiment.first_weights["scaled"])
    assert _number(panel.table.cell_text(BY_DK, TOP_WEIGHT)) == pytest.approx(25, abs=5)  # flat: near 1/4
    before = panel.table.cell_text(RAW, SPREAD)
    panel.seed_box.setValue(7)
    assert panel.experiment.seed == 7 and panel.table.cell_text(RAW, SPREAD) != before
    panel.trials_box.setValue(50)
    assert panel.experiment.raw_scores.shape == (50, 4)


def test_does_not_recompute_when_the_sentence_changes(make_panel):
    panel = make_panel(QtScalingLesson)
    count = panel.refresh_count
    panel.controller.set_sentence("the dog sat")
    assert panel.refresh_count == count


def test_big_experiments_recompute_when_the_slider_is_let_go(make_panel):
    panel = make_panel(QtScalingLesson)
    assert panel.dk_slider.hasTracking()
    panel.keys_box.setValue(1000)
    panel.trials_box.setValue(1000)
    assert not panel.dk_slider.hasTracking()
    panel.trials_box.setValue(100)
    assert panel.dk_slider.hasTracking()
