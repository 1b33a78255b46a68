"""Why two matrices: tying W_K to W_Q makes the shown score matrix symmetric and the pair no longer one-sided."""

import numpy as np

from attention_explorer.labs.two_matrices_lesson import QtTwoMatricesLesson


def test_tying_makes_the_shown_scores_symmetric(make_panel):
    panel = make_panel(QtTwoMatricesLesson)
    before = panel.before_map.shown_matrix()
    assert not np.array_equal(before, before.T)
    assert panel.shown_after() is None and panel.after_map.message.isVisible()
    panel.tie_switch.setChecked(True)
    after = panel.shown_after()
    np.testing.assert_array_equal(after, after.T)
    np.testing.assert_array_equal(before, panel.comparison.untied.heads[0].scores)
    assert "symmetric" in panel.after_map.title()
    assert "0 after tying" in panel.symmetry_line.text()


def test_names_the_pair_that_was_one_sided(make_panel):
    panel = make_panel(QtTwoMatricesLesson)
    assert "“sat” → “cat”" in panel.pair_line.text() and "only" in panel.pair_line.text()
    pair = panel.comparison.pair
    assert panel.before_map.outlined_cells() == [(pair.looker, pair.looked_at), (pair.looked_at, pair.looker)]
    panel.tie_switch.setChecked(True)
    assert "no longer one-sided" in panel.pair_line.text()
    score_1, score_2 = pair.in_matrix(panel.shown_after())
    assert score_1 == score_2
    panel.tie_switch.setChecked(False)
    assert "no longer" not in panel.pair_line.text()


def test_follows_the_main_sentence(make_panel):
    panel = make_panel(QtTwoMatricesLesson)
    panel.tie_switch.setChecked(True)
    panel.controller.set_sentence("my dog chased a ball")
    assert panel.after_map.row_labels() == ["my", "dog", "chased", "a", "ball"]
    after = panel.shown_after()
    np.testing.assert_array_equal(after, after.T)
