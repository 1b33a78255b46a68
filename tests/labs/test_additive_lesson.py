"""Additive attention beside dot-product attention: same axes, same colour scale, its own seed."""

import numpy as np

from attention_explorer.labs.additive_lesson import QtAdditiveLesson


def test_both_heatmaps_share_axes_and_colour_scale(make_panel):
    panel = make_panel(QtAdditiveLesson)
    dot, additive = panel.dot_map, panel.additive_map
    assert dot.row_labels() == additive.row_labels() and dot.column_labels() == additive.column_labels()
    assert dot.levels() == additive.levels() == (0.0, 1.0)
    np.testing.assert_array_equal(dot.shown_matrix(), panel.controller.trace.heads[0].weights)
    np.testing.assert_allclose(additive.shown_matrix().sum(axis=1), 1.0, rtol=0, atol=1e-12)
    panel.shown_box.setCurrentIndex(1)  # scores
    assert dot.levels() == additive.levels()
    low, high = dot.levels()
    assert low <= min(dot.shown_matrix().min(), additive.shown_matrix().min())
    assert high >= max(dot.shown_matrix().max(), additive.shown_matrix().max())


def test_the_seed_changes_only_the_additive_side(make_panel):
    panel = make_panel(QtAdditiveLesson)
    dot, additive = panel.dot_map.shown_matrix().copy(), panel.additive_map.shown_matrix().copy()
    panel.seed_box.setValue(5)
    np.testing.assert_array_equal(panel.dot_map.shown_matrix(), dot)
    assert not np.array_equal(panel.additive_map.shown_matrix(), additive)
    assert "seed 5" in panel.sizes_line.text()


def test_a_causal_mask_stays_a_mask_on_both_sides(make_panel):
    panel = make_panel(QtAdditiveLesson, "cat-ate-fish")
    above = np.triu(np.ones((5, 5), dtype=bool), k=1)
    np.testing.assert_array_equal(panel.dot_map.masked_cells(), above)
    np.testing.assert_array_equal(panel.additive_map.masked_cells(), above)
    assert panel.table.cell_text(0, 1) == "my (100%)" and panel.table.cell_text(0, 2) == "my (100%)"
