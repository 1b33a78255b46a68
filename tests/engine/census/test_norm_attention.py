"""Kobayashi et al.'s norm-based attention: α_ij · ‖f(x_j)‖ per head and ‖Σ_h α^h_ij f_h(x_j)‖ over
a layer, by hand, against explicit sums, and against the real forward's own output."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer import engine
from attention_explorer.engine.census import norm_attention as norm_module
from attention_explorer.engine.census.norm_attention import (
    moved_by_heads,
    norm_attention,
    pretrained_norm_attention,
    trace_norm_attention,
)


def test_one_head_by_hand():
    weights = np.array([[[1.0, 0.0], [0.5, 0.5]]])
    values = np.array([[[3.0, 4.0], [0.0, 1.0]]])          # ‖v_0‖ = 5, ‖v_1‖ = 1
    reading = norm_attention(weights, moved_by_heads(values, np.eye(2)))
    np.testing.assert_allclose(reading.moved, [[5.0, 1.0]])
    np.testing.assert_allclose(reading.per_head, [[[5.0, 0.0], [2.5, 0.5]]])
    np.testing.assert_allclose(reading.summed, [[5.0, 0.0], [2.5, 0.5]])


def test_concatenated_heads_add_in_quadrature():
    # no W_O: each head's vector lives in its own columns, so the lengths add as a right angle's sides
    weights = np.array([[[1.0]], [[1.0]]])
    values = np.array([[[3.0]], [[4.0]]])
    reading = norm_attention(weights, moved_by_heads(values, None))
    assert reading.summed[0, 0] == pytest.approx(5.0)


def test_heads_that_move_opposite_vectors_cancel_in_the_sum():
    weights = np.array([[[1.0]], [[1.0]]])
    values = np.array([[[2.0]], [[2.0]]])
    w_o = np.array([[1.0], [-1.0]])                          # head 2 writes minus what head 1 writes
    reading = norm_attention(weights, moved_by_heads(values, w_o))
    np.testing.assert_allclose(reading.per_head[:, 0, 0], [2.0, 2.0])
    assert reading.summed[0, 0] == pytest.approx(0.0, abs=1e-12)


@st.composite
def layers(draw):
    heads, n, d_head, d_model = draw(st.integers(1, 3)), draw(st.integers(1, 5)), 2, 3
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    weights = rng.random((heads, n, n))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights, rng.normal(size=(heads, n, d_head)), rng.normal(size=(heads * d_head, d_model))


@settings(max_examples=60, deadline=None)
@given(layers())
def test_the_summed_reading_is_the_length_of_the_vector_sum(layer):
    weights, values, w_o = layer
    moved = moved_by_heads(values, w_o)
    reading = norm_attention(weights, moved)
    heads, n, _ = weights.shape
    for i in range(n):
        for j in range(n):
            vector = sum(weights[h, i, j] * moved[h, j] for h in range(heads))
            assert reading.summed[i, j] == pytest.approx(np.linalg.norm(vector), abs=1e-9)
            for h in range(heads):
                assert reading.per_head[h, i, j] == pytest.approx(np.linalg.norm(weights[h, i, j] * moved[h, j]))


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-gpt2", "tiny-llama.gguf"])
def test_the_moved_vectors_rebuild_the_layers_attention_output(tiny, name):
    """Σ_h Σ_j α^h_ij f_h(x_j) + b_O is the layer's output, as the forward computed it (grouped
    key/value heads included: tiny-llama has 4 query heads on 2)."""
    model = tiny(name)
    ptrace = model.run("the cat sat on the mat because it was tired")
    for layer in range(model.n_layers):
        trace = ptrace.layer_trace(layer)
        weights = np.stack([h.weights for h in trace.heads]).astype(np.float64)
        moved = moved_by_heads(np.stack([h.v for h in trace.heads]), trace.w_o)
        rebuilt = np.einsum("hij,hjd->id", weights, moved) + (0 if trace.b_o is None else trace.b_o)
        np.testing.assert_allclose(rebuilt, trace.output, atol=1e-4)
        direct = pretrained_norm_attention(ptrace, layer)
        via_trace = trace_norm_attention(trace)
        np.testing.assert_allclose(direct.per_head, via_trace.per_head, atol=1e-4)
        np.testing.assert_allclose(direct.summed, via_trace.summed, atol=1e-4)


def test_a_switched_off_head_moves_nothing(tiny):
    model = tiny("tiny-gpt2")
    ptrace = model.run("the cat sat on the mat", ablate={(0, 1)})
    reading = pretrained_norm_attention(ptrace, 0)
    assert not reading.per_head[1].any()
    assert reading.per_head[0].any()


def test_a_toy_trace_reads_with_its_w_o():
    model = engine.load_builtin("cat-ate-fish")
    trace = engine.run(model, "my cat ate its fish", model.default_options.with_changes(heads=2))
    reading = trace_norm_attention(trace)
    # W_O is the identity: head h moves v_h(x_j) in its own columns, so its length is ‖v_h(x_j)‖
    for h, head in enumerate(trace.heads):
        np.testing.assert_allclose(reading.moved[h], np.linalg.norm(head.v, axis=1))
        np.testing.assert_allclose(reading.per_head[h], head.weights * np.linalg.norm(head.v, axis=1)[None, :])


def test_the_moved_lengths_from_each_heads_gram_matrix_are_the_lengths_of_what_it_moves():
    rng = np.random.default_rng(3)
    heads, d_head, d_out, n = 3, 4, 10, 6
    w_o = rng.normal(size=(heads * d_head, d_out)).astype(np.float32)
    values = rng.normal(size=(n, d_head)).astype(np.float32)
    grams = norm_module.w_o_grams(w_o, heads)
    assert norm_module.w_o_grams(w_o, heads) is grams  # made once per W_O
    for h in range(heads):
        rows = w_o[h * d_head:(h + 1) * d_head].astype(np.float64)
        expected = np.linalg.norm(values.astype(np.float64) @ rows, axis=1)  # ‖v_j W_O,h‖, the long way
        assert np.allclose(norm_module.moved_lengths(values, None, grams[h]), expected, rtol=1e-12)
        assert np.allclose(norm_module.moved_lengths(values, rows), expected, rtol=1e-12)
