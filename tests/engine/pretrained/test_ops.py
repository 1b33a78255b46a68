"""The float32 building blocks against the exact definitions (math.erf, hand-worked norms, rotations)."""

import math
import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer.engine.pretrained.ops import (
    apply_rope,
    gelu_erf,
    gelu_tanh,
    layer_norm,
    masked_softmax,
    rms_norm,
    silu,
)
from attention_explorer.engine.pretrained.rope import rope_tables


def _traced_peak(action) -> tuple[object, int]:
    """What `action` returns and the most memory Python and NumPy held at once while it ran."""
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_gelu_with_the_fast_erf_is_within_2e_7_of_the_exact_one_relative_to_x():
    x = np.linspace(-8, 8, 2001, dtype=np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    assert np.max(np.abs(gelu_erf(x.copy()) - exact) / np.maximum(np.abs(x), 1)) < 2e-7


def test_gelu_tanh_is_gpt2s_formula():
    x = np.array([-2.0, 0.0, 1.0], dtype=np.float32)
    exact = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in (-2.0, 0.0, 1.0)]
    np.testing.assert_allclose(gelu_tanh(x), exact, atol=1e-6)


def test_layer_norm_and_rms_norm_by_hand():
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    # mean 2, biased variance 2/3: (−1, 0, 1)/√(2/3) = (−1.2247, 0, 1.2247); ×2 + 1.
    normed = layer_norm(x, np.float32(2), np.float32(1), 0.0)
    np.testing.assert_allclose(normed, [[-1.4494897, 1, 3.4494897]], atol=1e-6)
    # mean of squares 14/3: x / √(14/3).
    np.testing.assert_allclose(rms_norm(x, np.ones(3, np.float32), None, 0.0), x / math.sqrt(14 / 3), atol=1e-6)


def test_rope_keeps_lengths_leaves_position_zero_alone_and_scores_depend_on_the_distance_only():
    rng = np.random.default_rng(0)
    cos, sin = rope_tables(8, 4, 10000.0)
    q, k = rng.normal(size=(2, 4)).astype(np.float32)
    rotated_q = apply_rope(np.tile(q, (8, 1)), cos, sin)
    rotated_k = apply_rope(np.tile(k, (8, 1)), cos, sin)
    np.testing.assert_allclose(rotated_q[0], q, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(rotated_q, axis=1), np.linalg.norm(q), rtol=1e-5)
    assert math.isclose(rotated_q[5] @ rotated_k[3], rotated_q[2] @ rotated_k[0], rel_tol=1e-4)


def test_rope_pairs_dimension_i_with_i_plus_half_as_hf_does():
    cos, sin = rope_tables(2, 4, 1.0)  # θ = 1: every frequency is 1 radian per position
    x = np.array([[1.0, 0.0, 0.0, 0.0]] * 2, dtype=np.float32)
    # Position 1: (x0, x2) rotate by 1 rad → x0 = cos 1, x2 = sin 1.
    np.testing.assert_allclose(apply_rope(x, cos, sin)[1], [math.cos(1), 0, math.sin(1), 0], atol=1e-7)


def test_causal_softmax_gives_zero_weight_to_later_tokens():
    weights = masked_softmax(np.zeros((1, 3, 3), dtype=np.float32), causal=True)[0]
    np.testing.assert_allclose(weights, [[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]], atol=1e-7)


def test_silu_is_written_into_its_input_with_a_temporary_of_a_few_rows_and_the_same_numbers():
    """The gate of a 2,048-token SmolLM2 feed-forward is 12 MiB: a temporary of all of it was what the
    forward's peak grew by. Made a few rows at a time, each number is the whole formula's to the bit."""
    rng = np.random.default_rng(0)
    whole = rng.standard_normal((512, 3072), dtype=np.float32) * 4
    gate = whole[:, :1536]  # the gated half of a feed-forward's product: rows 3,072 numbers apart
    expected = gate / (np.exp(-gate) + np.float32(1))
    result, peak = _traced_peak(lambda: silu(gate))
    assert result is gate
    np.testing.assert_array_equal(gate, expected)
    assert peak < gate.nbytes // 8
    for shape in ((7,), (3, 5, 4), (1, 1)):  # a single token's gate, a stack of them
        x = rng.standard_normal(shape, dtype=np.float32)
        np.testing.assert_array_equal(silu(x.copy()), x / (np.exp(-x) + np.float32(1)))


def test_rope_and_rms_norm_hold_two_arrays_of_their_input_s_size_at_most_and_give_the_formula_s_bits():
    """At 2,048 SmolLM2 tokens RoPE held four arrays of q's size at once and RMSNorm three of the
    stream's, a forward's largest moment; written in place, they hold two (the result among them) and
    each number is the plain formula's to the bit."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((9, 512, 64), dtype=np.float32) * 3
    cos, sin = rope_tables(512, 64, 10_000.0, 1.0)
    half = 32
    expected = q * cos + np.concatenate([-q[..., half:], q[..., :half]], axis=-1) * sin
    turned, peak = _traced_peak(lambda: apply_rope(q, cos, sin))
    np.testing.assert_array_equal(turned, expected)
    assert peak <= 2 * q.nbytes + q.nbytes // 8  # (a ufunc's buffer of a few kB beside)
    x = rng.standard_normal((512, 576), dtype=np.float32) * 5
    weight = rng.standard_normal(576, dtype=np.float32)
    expected = x * (1 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(1e-5))) * weight
    normed, peak = _traced_peak(lambda: rms_norm(x, weight, None, 1e-5))
    np.testing.assert_array_equal(normed, expected)
    assert peak <= x.nbytes + x.nbytes // 8


@settings(max_examples=300, deadline=None)
@given(heads=st.integers(1, 3), rows=st.sampled_from([1, 2, 3, 57, 300]), width=st.integers(1, 700),
       exponent=st.integers(-20, 20), eps=st.sampled_from([1e-5, 1e-6, 1e-12]), seed=st.integers(0, 2**32 - 1))
def test_rms_norm_gives_np_mean_s_bits_at_any_size_and_scale(heads, rows, width, exponent, eps, seed):
    """rms_norm sums and divides as np.mean does without its Python: the same bits for one row (a
    generation's step) as for many, with heads stacked in front (qk-norm per head) or as a column slice
    of a wider product, for tiny numbers and for ones whose squares overflow."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((heads, rows, width)) * 10.0 ** exponent).astype(np.float32)
    weight = rng.standard_normal(width, dtype=np.float32)
    with np.errstate(over="ignore"):
        expected = x * (1 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(eps))) * weight
        normed = rms_norm(x, weight, None, eps)
    np.testing.assert_array_equal(normed.view(np.uint32), expected.view(np.uint32))
    wider = np.concatenate([x, x], axis=-1)  # a column slice of a wider product, as q of a fused q|k|v one
    with np.errstate(over="ignore"):
        sliced = rms_norm(wider[..., :width], weight, None, eps)
    np.testing.assert_array_equal(sliced.view(np.uint32), expected.view(np.uint32))
