"""Multi-head: one heatmap per head, the split of the columns, concatenation and W_O."""

import numpy as np

from attention_explorer.controller import LOOKED_AT
from attention_explorer.labs.heads_lesson import QtHeadsLesson


def test_one_heatmap_per_head_showing_that_heads_weights(make_panel):
    panel = make_panel(QtHeadsLesson)
    trace = panel.controller.trace
    assert len(panel.head_maps) == 2
    for head, heatmap in zip(trace.heads, panel.head_maps, strict=True):
        np.testing.assert_array_equal(heatmap.shown_matrix(), head.weights)
    assert "columns 5–8" in panel.head_maps[1].title()
    np.testing.assert_array_equal(panel.concat_map.shown_matrix(), trace.concat)
    np.testing.assert_array_equal(panel.output_map.shown_matrix(), trace.output)
    assert "split into h = 2 heads of d_k = 8 / 2 = 4" in panel.split_line.text()
    assert "W_O (8 × 8)" in panel.split_line.text()


def test_choosing_more_heads_goes_through_the_controller_and_redraws(make_panel):
    panel = make_panel(QtHeadsLesson)
    panel.heads_box.setCurrentIndex(panel.heads_box.findData(4))
    panel.heads_box.activated.emit(panel.heads_box.currentIndex())
    assert panel.controller.options.heads == 4
    assert len(panel.head_maps) == 4
    for head, heatmap in zip(panel.controller.trace.heads, panel.head_maps, strict=True):
        np.testing.assert_array_equal(heatmap.shown_matrix(), head.weights)
    assert "d_k = 8 / 4 = 2" in panel.split_line.text()
    assert panel.concat_map.column_labels()[:3] == ["h1.1", "h1.2", "h2.1"]


def test_without_w_o_the_output_is_the_concatenation(make_panel):
    panel = make_panel(QtHeadsLesson, "it-was-tired")
    assert len(panel.head_maps) == 1
    assert panel.output_map.shown_matrix() is None and "no W_O" in panel.output_map.message.text()


def test_the_papers_sizes_are_noted(make_panel):
    panel = make_panel(QtHeadsLesson)
    texts = " ".join(label.text() for label in panel.findChildren(type(panel.split_line)))
    assert "h = 8" in texts and "d_model = 512" in texts and "64" in texts


def test_the_focused_word_is_drawn_as_focused_on_every_side_that_lists_the_sentence(make_panel):
    panel = make_panel(QtHeadsLesson)
    panel.controller.set_hovered(2, LOOKED_AT)
    for heatmap in panel.head_maps:
        assert (heatmap.left_axis.focus(), heatmap.top_axis.focus()) == (2, 2)
        assert heatmap.col_highlight.isVisible() and not heatmap.row_highlight.isVisible()
    assert (panel.concat_map.left_axis.focus(), panel.concat_map.top_axis.focus()) == (2, None)  # columns: h1.1 ...
    assert panel.concat_map.row_highlight.isVisible()
