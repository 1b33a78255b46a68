"""Cross-attention: queries from sentence A, keys and values from sentence B (n_A × n_B)."""

import math

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine import HEAD_MATRICES, Options, SentenceError, cross_attention

CAT = engine.load_builtin("cat-sat-on-mat")
MICE = engine.load_builtin("cats-chase-mice")


def test_shapes_are_target_words_by_source_words():
    trace = cross_attention(CAT, "the cat sat", "my dog chased a ball in the park", Options(heads=2))
    assert trace.shape == (3, 8)
    assert len(trace.heads) == 2
    for head in trace.heads:
        assert head.q.shape == (3, 4) and head.k.shape == (8, 4) and head.v.shape == (8, 4)
        for name in ("scores", "scaled", "masked", "weights"):
            assert getattr(head, name).shape == (3, 8)
        assert head.output.shape == (3, 4)
        np.testing.assert_allclose(head.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert trace.concat.shape == (3, 8) and trace.output.shape == (3, CAT.d_model)


def test_one_target_word_by_hand():
    """q_cats = [0, 2]; k_chase = [0, 1], k_mice = [1, 0]; v_chase = [0, 1], v_mice = [1, 1]."""
    trace = cross_attention(MICE, "cats", "chase mice")
    head = trace.heads[0]
    np.testing.assert_array_equal(head.scores, [[2.0, 0.0]])
    np.testing.assert_allclose(head.scaled, [[math.sqrt(2), 0.0]], rtol=0, atol=1e-15)
    w_chase = math.exp(math.sqrt(2)) / (math.exp(math.sqrt(2)) + 1)
    w_mice = 1 - w_chase
    np.testing.assert_allclose(head.weights, [[w_chase, w_mice]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(trace.output, [[w_mice, 1.0]], rtol=0, atol=1e-15)  # w·[0,1] + (1−w)·[1,1]


@pytest.mark.parametrize("positional", [False, True])
def test_a_sentence_attending_to_itself_is_self_attention(positional):
    options = Options(heads=2, positional=positional)
    sentence = "the cat sat on the mat"
    cross = cross_attention(CAT, sentence, sentence, options)
    plain = engine.run(CAT, sentence, options)
    for a, b in zip(cross.heads, plain.heads, strict=True):
        for name in HEAD_MATRICES:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(cross.output, plain.output)


def test_the_causal_mask_is_left_out_and_recorded_as_off():
    trace = cross_attention(CAT, "the cat sat", "the cat sat", Options(causal=True, heads=2))
    assert trace.options.causal is False
    assert np.all(trace.heads[0].weights > 0)
    np.testing.assert_array_equal(trace.heads[0].masked, trace.heads[0].scaled)


def test_labels_tell_which_sentence_a_matrix_belongs_to():
    trace = cross_attention(CAT, "the cat sat on the mat", "a dog", Options(heads=2))
    assert trace.row_labels("weights") == ["the₁", "cat", "sat", "on", "the₂", "mat"]
    assert trace.column_labels("weights") == ["a", "dog"]
    assert trace.row_labels("k") == ["a", "dog"] and trace.row_labels("q") == trace.target_labels
    assert trace.column_labels("q", head=1) == ["q5", "q6", "q7", "q8"]
    assert trace.matrix("weights", 1) is trace.heads[1].weights
    with pytest.raises(ValueError):
        trace.matrix("nonsense")


def test_unknown_words_are_kept_aside_and_empty_sentences_refused():
    trace = cross_attention(CAT, "the zebra sat", "a dog", Options(heads=2))
    assert trace.target_tokens == ["the", "sat"] and trace.target_unknown == ["zebra"]
    with pytest.raises(SentenceError):
        cross_attention(CAT, "the cat", "", Options(heads=2))


def test_cross_attention_is_the_self_attention_function_with_keys_and_values_from_elsewhere(monkeypatch):
    from attention_explorer.engine import attention, cross

    calls = []
    original = attention.multi_head_attention

    def spy(x, *args, **kwargs):
        calls.append((x.shape[0], kwargs["x_kv"].shape[0]))
        return original(x, *args, **kwargs)

    monkeypatch.setattr(cross, "multi_head_attention", spy)
    model = engine.load_builtin("cats-chase-mice")
    result = cross.cross_attention(model, "cats chase", "mice chase cats")
    assert calls == [(2, 3)] and result.shape == (2, 3)


def test_the_shared_function_refuses_a_causal_mask_between_two_sentences():
    x = np.eye(3)
    with pytest.raises(engine.OptionsError, match="switch it off for cross-attention"):
        engine.multi_head_attention(x[:2], x, x, x, None, engine.Options(causal=True), x_kv=x)
