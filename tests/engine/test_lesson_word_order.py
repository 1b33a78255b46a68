"""Word order: attention alone is permutation-equivariant; positional encoding breaks that."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer import engine
from attention_explorer.engine import (
    Options,
    SentenceError,
    compare_same_words,
    compare_word_orders,
    order_between,
    shuffle_words,
)

CAT = engine.load_builtin("cat-sat-on-mat")
TIRED = engine.load_builtin("it-was-tired")
SWAP_THE = [4, 1, 2, 3, 0, 5]  # "the cat sat on the mat" with its two "the"s swapped


def test_shuffle_by_order_and_by_seed():
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    moved = shuffle_words(tokens, order=[5, 0, 1, 2, 3, 4])
    assert moved.tokens == ["mat", "the", "cat", "sat", "on", "the"]
    assert moved.sentence == "mat the cat sat on the"
    a, b = shuffle_words(tokens, seed=3), shuffle_words(tokens, seed=3)
    assert a.tokens == b.tokens and np.array_equal(a.order, b.order)
    assert sorted(a.order.tolist()) == list(range(6))


@pytest.mark.parametrize("seed", range(30))
def test_a_random_shuffle_always_moves_something(seed):
    assert shuffle_words(["a", "b"], seed=seed).order.tolist() == [1, 0]


@pytest.mark.parametrize("kwargs", [{}, {"seed": 1, "order": [0]}, {"order": [0, 0]}, {"order": [0, 2]},
                                    {"order": [0]}])
def test_bad_shuffle_requests(kwargs):
    with pytest.raises(ValueError):
        shuffle_words(["a", "b"], **kwargs)


def test_order_between_matches_repeated_words_in_turn():
    a = ["the", "dog", "chased", "the", "cat"]
    b = ["the", "cat", "chased", "the", "dog"]
    assert order_between(a, b).tolist() == [0, 4, 2, 3, 1]
    assert order_between(["maya", "chased", "the", "dog"], ["the", "dog", "chased", "maya"]).tolist() == [2, 3, 1, 0]
    with pytest.raises(SentenceError, match="same words"):
        order_between(["the", "cat"], ["the", "dog"])


def test_without_positions_each_word_keeps_its_output():
    result = compare_same_words(TIRED, "maya chased the dog", "the dog chased maya", Options(positional=False))
    assert result.order.tolist() == [2, 3, 1, 0]
    assert result.max_difference <= 1e-12
    np.testing.assert_allclose(result.reordered.output, result.original.output[result.order], rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.aligned_weights(), result.original.heads[0].weights, rtol=0, atol=1e-12)


def test_with_positions_the_same_words_give_new_outputs():
    result = compare_same_words(TIRED, "maya chased the dog", "the dog chased maya", Options(positional=True))
    assert result.max_difference > 1e-2
    assert np.all(result.difference > 1e-3)  # every word moved, so every word's input changed


def test_repeated_words_are_matched_by_position():
    """Swapping the two "the"s leaves the words' text in place, but each "the" moved."""
    plain = compare_word_orders(CAT, "the cat sat on the mat", SWAP_THE, Options(heads=2))
    assert plain.reordered.tokens == plain.original.tokens
    assert plain.max_difference <= 1e-12
    placed = compare_word_orders(CAT, "the cat sat on the mat", SWAP_THE, Options(heads=2, positional=True))
    # original "the₁" (place 0) is now at place 4: its row is read from there
    np.testing.assert_array_equal(placed.rows_reordered[0], placed.reordered.output[4])
    np.testing.assert_array_equal(placed.rows_reordered[4], placed.reordered.output[0])
    assert placed.difference[0] > 1e-3 and placed.difference[4] > 1e-3
    assert placed.labels == ["the₁", "cat", "sat", "on", "the₂", "mat"]


def test_options_default_to_the_models():
    result = compare_word_orders(CAT, "the cat sat", [2, 0, 1])
    assert result.original.options == CAT.default_options == result.reordered.options


def test_different_words_are_refused():
    with pytest.raises(SentenceError):
        compare_same_words(CAT, "the cat sat", "the dog sat")


WORDS = list(CAT.vocabulary)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(WORDS[:12]), min_size=1, max_size=9), st.integers(0, 2**32), st.booleans(),
       st.sampled_from([1, 2, 4]))
def test_any_shuffle_only_moves_the_rows(words, seed, scale, heads):
    shuffled = shuffle_words(words, seed=seed)
    options = Options(heads=heads, scale=scale)
    result = compare_word_orders(CAT, " ".join(words), shuffled.order, options)
    assert result.max_difference <= 1e-12
    assert result.reordered.tokens == shuffled.tokens
