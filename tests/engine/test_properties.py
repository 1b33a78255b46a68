"""Properties of attention that must hold for any input (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer import engine
from attention_explorer.engine import Options

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@st.composite
def layers(draw, max_tokens=7):
    """Random inputs X (n × d_model) and weights with a head count that divides d_proj."""
    n = draw(st.integers(1, max_tokens))
    d_model = draw(st.integers(1, 6))
    heads = draw(st.integers(1, 3))
    d_proj = heads * draw(st.integers(1, 3))
    x = draw(arrays(np.float64, (n, d_model), elements=finite))
    w = [draw(arrays(np.float64, (d_model, d_proj), elements=finite)) for _ in range(3)]
    return x, w, heads


@given(layers(), st.booleans(), st.booleans())
def test_weight_rows_are_probabilities(layer, causal, scale):
    x, (w_q, w_k, w_v), heads = layer
    traces, _, _ = engine.multi_head_attention(x, w_q, w_k, w_v, None, Options(scale=scale, causal=causal, heads=heads))
    for head in traces:
        assert np.all(head.weights >= 0)
        np.testing.assert_allclose(head.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        if causal:
            assert np.all(head.weights[np.triu_indices(len(x), k=1)] == 0.0)


@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)),
              elements=st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False)))
def test_huge_scores_give_finite_weights(scores):
    weights = engine.softmax(scores)
    assert np.all(np.isfinite(weights))
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)), elements=finite),
       st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=6, max_size=6))
def test_adding_a_constant_to_a_row_changes_nothing(scores, shifts):
    shifted = scores + np.array(shifts[: scores.shape[0]])[:, None]
    np.testing.assert_allclose(engine.softmax(shifted), engine.softmax(scores), rtol=0, atol=1e-12)


@given(layers(), st.randoms(use_true_random=False))
def test_without_position_a_permutation_permutes_the_outputs(layer, rnd):
    x, (w_q, w_k, w_v), heads = layer
    order = list(range(len(x)))
    rnd.shuffle(order)
    opts = Options(heads=heads)
    _, _, out = engine.multi_head_attention(x, w_q, w_k, w_v, None, opts)
    _, _, out_perm = engine.multi_head_attention(x[order], w_q, w_k, w_v, None, opts)
    np.testing.assert_allclose(out_perm, out[order], rtol=1e-12, atol=1e-9)


@settings(max_examples=60)
@given(layers(max_tokens=6), st.data())
def test_causal_rows_ignore_later_tokens(layer, data):
    x, (w_q, w_k, w_v), heads = layer
    last = len(x) - 1
    changed = x.copy()
    changed[last] = data.draw(arrays(np.float64, x.shape[1], elements=finite))
    opts = Options(causal=True, heads=heads)
    before, _, out_before = engine.multi_head_attention(x, w_q, w_k, w_v, None, opts)
    after, _, out_after = engine.multi_head_attention(changed, w_q, w_k, w_v, None, opts)
    for h_before, h_after in zip(before, after, strict=True):
        np.testing.assert_array_equal(h_after.weights[:last], h_before.weights[:last])
    np.testing.assert_array_equal(out_after[:last], out_before[:last])


def test_positional_encoding_matches_the_formula():
    pe = engine.sinusoidal_encoding(50, 6)
    pos, i = 7, 2
    assert pe[pos, 2 * i] == np.sin(pos / 10000 ** (2 * i / 6))
    assert pe[pos, 2 * i + 1] == np.cos(pos / 10000 ** (2 * i / 6))
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1, 0, 1])
    assert engine.sinusoidal_encoding(3, 3).shape == (3, 3)


def test_heads_must_divide_d_proj():
    model = engine.load_builtin("cat-sat-on-mat")
    try:
        engine.run(model, "the cat", Options(heads=3))
    except engine.OptionsError as exc:
        assert "1, 2, 4, 8" in str(exc)
    else:
        raise AssertionError("3 heads on d_proj = 8 must be refused")
