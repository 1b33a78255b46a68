"""cats-chase-mice worked by hand, as a reader would with a pencil.

X rows: cats = [1,0,0], chase = [0,1,0], mice = [1,0,1]
Q = X·W_Q: q_cats = [0,2], q_chase = [2,0], q_mice = [0,2]
K = X·W_K: k_cats = [1,0], k_chase = [0,1], k_mice = [1,0]
V = X·W_V: v_cats = [1,0], v_chase = [0,1], v_mice = [1,1]
scores = Q·Kᵀ: cats [0,2,0]; chase [2,0,2]; mice [0,2,0]
scaled = scores ÷ √2: the 2s become √2 = 1.41421...
softmax of [0, √2, 0]: e^√2 = 4.11325, sum 6.11325 → [0.1636, 0.6728, 0.1636]
softmax of [√2, 0, √2]: sum 9.22650 → [0.4458, 0.1084, 0.4458]
output cats = 0.1636·[1,0] + 0.6728·[0,1] + 0.1636·[1,1] = [0.3272, 0.8364]
output chase = 0.4458·[1,0] + 0.1084·[0,1] + 0.4458·[1,1] = [0.8916, 0.5542]
"""

import math

import numpy as np
import pytest

from attention_explorer import engine

E_ROOT2 = math.exp(math.sqrt(2))


@pytest.fixture
def trace():
    model = engine.load_builtin("cats-chase-mice")
    return engine.run(model, "cats chase mice")


def test_projections_match_hand_work(trace):
    head = trace.heads[0]
    np.testing.assert_array_equal(head.q, [[0, 2], [2, 0], [0, 2]])
    np.testing.assert_array_equal(head.k, [[1, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(head.v, [[1, 0], [0, 1], [1, 1]])


def test_scores_and_scaled_scores(trace):
    head = trace.heads[0]
    np.testing.assert_array_equal(head.scores, [[0, 2, 0], [2, 0, 2], [0, 2, 0]])
    r2 = math.sqrt(2)
    np.testing.assert_allclose(head.scaled, [[0, r2, 0], [r2, 0, r2], [0, r2, 0]], rtol=0, atol=1e-15)


def test_weights_to_four_decimals(trace):
    weights = np.round(trace.heads[0].weights, 4)
    np.testing.assert_array_equal(weights, [[0.1636, 0.6728, 0.1636],
                                            [0.4458, 0.1084, 0.4458],
                                            [0.1636, 0.6728, 0.1636]])
    # and exactly, from the closed form
    assert trace.heads[0].weights[0, 1] == pytest.approx(E_ROOT2 / (E_ROOT2 + 2), abs=1e-15)


def test_outputs(trace):
    a = 1 / (E_ROOT2 + 2)           # weight on cats or mice, seen from cats
    b = E_ROOT2 / (2 * E_ROOT2 + 1)  # weight on cats or mice, seen from chase
    expected = [[2 * a, E_ROOT2 * a + a], [2 * b, (1 - 2 * b) + b], [2 * a, E_ROOT2 * a + a]]
    np.testing.assert_allclose(trace.output, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(np.round(trace.output, 4), [[0.3272, 0.8364], [0.8916, 0.5542], [0.3272, 0.8364]])


def test_without_scaling_scaled_equals_scores(trace):
    model = engine.load_builtin("cats-chase-mice")
    unscaled = engine.run(model, "cats chase mice", engine.Options(scale=False))
    np.testing.assert_array_equal(unscaled.heads[0].scaled, unscaled.heads[0].scores)
    e2 = math.exp(2)
    assert unscaled.heads[0].weights[0, 1] == pytest.approx(e2 / (e2 + 2), abs=1e-15)


def test_causal_mask_hides_later_words():
    model = engine.load_builtin("cats-chase-mice")
    trace = engine.run(model, "cats chase mice", engine.Options(causal=True))
    head = trace.heads[0]
    assert head.masked[0, 1] == -math.inf and head.masked[0, 2] == -math.inf and head.masked[1, 2] == -math.inf
    np.testing.assert_array_equal(head.weights[0], [1, 0, 0])
    # chase sees cats (score √2) and itself (0)
    assert head.weights[1, 0] == pytest.approx(E_ROOT2 / (E_ROOT2 + 1), abs=1e-15)
