"""Norm-based attention (Kobayashi et al. 2020) as a choice of the heatmap, arcs and bars: each weight
times the length of what the head moves, ‖α_ij · f(x_j)‖, with its formula on screen; in the toy models
and in a real model's own tokens (not with words merged or rollout, which have no such vectors)."""

import math
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore
from PySide6.QtTest import QTest

from screen_oracle import settle

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"


def choose_norm(window) -> None:
    box = window.options_bar.matrix
    index = box.findData("norm")
    box.setCurrentIndex(index)
    box.activated.emit(index)  # as a user's pick
    settle()


def test_cats_chase_mice_by_hand(make_window):
    """One head, no W_O: what a word moves is its value vector, v = x·W_V: cats [1, 0], chase [0, 1],
    mice [1, 1], of lengths 1, 1 and √2; so each weight is multiplied by 1, 1 and √2."""
    window = make_window("cats-chase-mice")
    choose_norm(window)
    trace = window.controller.trace
    head = trace.heads[0]
    np.testing.assert_allclose(head.moved_norm, [1.0, 1.0, math.sqrt(2)], atol=1e-12)
    np.testing.assert_allclose(window.heatmap.shown_matrix(), head.weights * [1.0, 1.0, math.sqrt(2)], atol=1e-12)
    assert "‖α_ij · f(x_j)‖,  f(x) = (x·W_V + b_V)·W_O" in window.heatmap.title()
    window.heatmap.show_readout((0, 2))
    assert window.heatmap.hover_text == (f"cats → mice: ‖α·f(x)‖ = {head.weights[0, 2]:.3g} × {math.sqrt(2):.3g} = "
                                         f"{head.weights[0, 2] * math.sqrt(2):.3g} (its weight × the length of what "
                                         "mice moves)")


def test_the_arcs_and_bars_follow_the_choice(make_window):
    window = make_window("cat-sat-on-mat")
    choose_norm(window)
    c = window.controller
    c.set_hovered(2)  # sat
    settle()
    head = c.trace.heads[0]
    np.testing.assert_array_equal(window.row_bars.shown_row(), head.norm[2])
    assert window.row_bars.title() == "where “sat” looks (head 1, weight × moved norm)"
    most = max(float(h.norm.max()) for h in c.trace.heads)
    drawn = {(h, i, j): w for h, i, j, w in window.arcs.drawn_arcs()}
    assert drawn[(0, 2, 1)] == pytest.approx(head.norm[2, 1] / most)
    # "the" moves nothing in head 1 (its value there is zero): its weight 0.04 draws no line's worth
    assert head.moved_norm[0] == 0 and head.weights[2, 0] > 0.03 and drawn.get((0, 2, 0), 0.0) == 0.0


def test_a_real_layer_has_norms_until_words_or_rollout_take_them_away(real_window, qtbot):
    window = real_window(str(DATA / "tiny-bert"))
    c = window.controller
    choose_norm(window)
    assert c.matrix == "norm"
    full = c.trace.heads[0].norm
    window.pretrained.bar.hide_specials.click()
    qtbot.waitUntil(lambda: not c.busy)
    settle()
    assert c.matrix == "norm"
    np.testing.assert_array_equal(c.trace.heads[0].norm, full[1:-1, 1:-1])  # the same lengths, fewer tokens
    window.pretrained.bar.rollout.click()
    qtbot.waitUntil(lambda: not c.busy)
    settle()
    box = window.options_bar.matrix
    assert c.matrix == "weights" and box.currentData() == "weights"
    assert not box.model().item(box.findData("norm")).isEnabled()
    assert "switch Words and Rollout off" in box.model().item(box.findData("norm")).toolTip()
    assert not window.matrix_actions["norm"].isEnabled()


def test_the_model_view_follows_the_choice_cell_by_cell(real_window, qtbot):
    """Chosen in the matrix box, norm-based attention colours the model view too: each cell is the
    heatmap of that layer and head (the census's reading of it), its readout and title say so, a head
    switched off is 0, and hiding the specials drops their rows and columns without renormalising."""
    from attention_explorer.engine.census import pretrained_norm_attention

    window = real_window(str(DATA / "tiny-bert"))
    c, view = window.controller, window.pretrained.model_view
    choose_norm(window)
    ptrace = c.pretrained_trace
    for layer in range(2):
        reading = pretrained_norm_attention(ptrace, layer)
        np.testing.assert_allclose(view.cells.thumbnails[layer], reading.per_head, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(view.cells.thumbnails[c.layer, c.head], window.heatmap.shown_matrix(), rtol=1e-6)
    assert "norm-based attention" in view.title() and "‖α·f(x)‖" in view.caption.full_text()
    rect = view.cell_rect(1, 2)
    n = c.trace.n
    view.hover_at(QtCore.QPointF(rect.left() + 3.5 * rect.width() / n, rect.top() + 2.5 * rect.height() / n))
    expected = pretrained_norm_attention(ptrace, 1).per_head[2, 2, 3]
    assert view.readout.text().endswith(f"‖α·f(x)‖ {expected:.3f}")

    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=view.cell_rect(0, 1).center().toPoint())
    qtbot.waitUntil(lambda: not c.busy and c.pretrained_trace is not ptrace)
    settle()
    assert not view.cells.thumbnails[0, 1].any() and view.cells.thumbnails[0, 0].any()

    window.pretrained.bar.hide_specials.click()
    qtbot.waitUntil(lambda: not c.busy)
    settle()
    whole = pretrained_norm_attention(c.pretrained_trace, 1).per_head[0]
    np.testing.assert_allclose(view.cells.thumbnails[1, 0], whole[1:-1, 1:-1], rtol=1e-5, atol=1e-7)

    box = window.options_bar.matrix
    box.setCurrentIndex(box.findData("weights"))
    box.activated.emit(box.findData("weights"))
    settle()
    assert "norm-based" not in view.title() and "‖α·f(x)‖" not in view.caption.full_text()
