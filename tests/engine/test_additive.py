"""Additive (Bahdanau) attention, v_a · tanh(W₁q + W₂k), beside dot-product attention."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer import engine
from attention_explorer.engine import (
    AdditiveParams,
    Options,
    additive_attention,
    compare_with_dot_product,
    cross_attention,
    default_additive_params,
)

ONE = AdditiveParams(w_1=np.array([[1.0]]), w_2=np.array([[1.0]]), v_a=np.array([1.0]))


def test_one_query_two_keys_by_hand():
    # q = 0, keys 0 and 1: scores tanh(0 + 0) = 0 and tanh(0 + 1) = 0.761594...
    parts = additive_attention(np.array([[0.0]]), np.array([[0.0], [1.0]]), np.array([[10.0], [20.0]]), ONE)
    t = math.tanh(1.0)
    np.testing.assert_allclose(parts["scores"], [[0.0, t]], rtol=0, atol=1e-15)
    w1 = math.exp(t) / (1 + math.exp(t))
    np.testing.assert_allclose(parts["weights"], [[1 - w1, w1]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(parts["output"], [[10 * (1 - w1) + 20 * w1]], rtol=0, atol=1e-12)
    assert parts["hidden"].shape == (1, 2, 1)


def test_two_hidden_units_by_hand():
    params = AdditiveParams(w_1=np.array([[1.0, 0.0], [0.0, 2.0]]), w_2=np.array([[0.0, 1.0], [1.0, 0.0]]),
                            v_a=np.array([1.0, -0.5]))
    q, k = np.array([[0.5, 0.25]]), np.array([[1.0, -1.0]])
    # W₁q = [0.5, 0.5]; W₂k = [-1, 1]; tanh([-0.5, 1.5]); score = tanh(-0.5) − 0.5·tanh(1.5)
    score = math.tanh(-0.5) - 0.5 * math.tanh(1.5)
    parts = additive_attention(q, k, np.eye(1), params)
    assert parts["scores"][0, 0] == pytest.approx(score, abs=1e-15)
    assert parts["weights"][0, 0] == 1.0


def test_masked_pairs_get_no_weight():
    q = k = v = np.array([[1.0], [2.0], [3.0]])
    parts = additive_attention(q, k, v, ONE, mask=engine.causal_mask(3))
    assert np.all(parts["weights"][np.triu_indices(3, k=1)] == 0.0)
    assert parts["weights"][0].tolist() == [1.0, 0.0, 0.0]
    assert parts["masked"][0, 1] == -np.inf


def test_default_parameters_are_fixed_by_the_seed():
    a, b, c = default_additive_params(4, seed=1), default_additive_params(4, seed=1), default_additive_params(4)
    assert a.w_1.shape == a.w_2.shape == (4, 4) and a.v_a.shape == (4,) and a.hidden == 4 and a.d_k == 4
    np.testing.assert_array_equal(a.w_1, b.w_1)
    np.testing.assert_array_equal(a.v_a, b.v_a)
    assert not np.array_equal(a.w_1, c.w_1)
    wide = default_additive_params(2, hidden=7)
    assert wide.w_1.shape == (7, 2) and wide.v_a.shape == (7,)
    with pytest.raises(ValueError):
        default_additive_params(0)


def test_mismatched_sizes_are_refused():
    with pytest.raises(ValueError, match="d_k = 1"):
        additive_attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)), ONE)


@pytest.mark.parametrize("name", engine.builtin_model_names())
def test_beside_dot_product_on_the_same_q_k_v(name):
    model = engine.load_builtin(name)
    trace = engine.run(model, model.default_sentence)
    for index, head in enumerate(trace.heads):
        side = compare_with_dot_product(trace, head=index, seed=3)
        assert side.dot_weights is head.weights and side.q is head.q and side.v is head.v
        assert side.additive_weights.shape == head.weights.shape
        np.testing.assert_allclose(side.additive_weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        if trace.mask is not None:  # the same causal mask on both sides
            assert np.all(side.additive_weights[trace.mask] == 0.0)
        np.testing.assert_allclose(side.additive_output, side.additive_weights @ head.v, rtol=0, atol=1e-12)
        assert side.labels == side.key_labels == trace.labels


def test_works_on_cross_attention_too():
    model = engine.load_builtin("cat-sat-on-mat")
    trace = cross_attention(model, "the cat sat", "a dog ran in the park", Options(heads=2))
    side = compare_with_dot_product(trace, head=1)
    assert side.additive_weights.shape == (3, 6)
    assert side.labels == trace.target_labels and side.key_labels == trace.source_labels


finite = st.floats(-20, 20, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**32),
       st.booleans(), st.data())
def test_rows_are_probabilities(n_q, n_k, d_k, hidden, seed, causal, data):
    q = data.draw(arrays(np.float64, (n_q, d_k), elements=finite))
    k = data.draw(arrays(np.float64, (n_k, d_k), elements=finite))
    v = data.draw(arrays(np.float64, (n_k, 3), elements=finite))
    mask = engine.causal_mask(n_q, n_k) if causal else None
    parts = additive_attention(q, k, v, default_additive_params(d_k, hidden, seed), mask=mask)
    assert np.all(parts["weights"] >= 0)
    np.testing.assert_allclose(parts["weights"].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(np.abs(parts["hidden"]) <= 1.0)
