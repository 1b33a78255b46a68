"""Comparing two results cell by cell: two sentences, two heads, two option sets."""

import math

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine import (
    ComparisonError,
    EngineError,
    Options,
    compare_heads,
    compare_options,
    compare_sentences,
    weights_difference,
)

CAT = engine.load_builtin("cat-sat-on-mat")
MICE = engine.load_builtin("cats-chase-mice")


def test_switching_scaling_off_by_hand():
    """Row "cats" scores [0, 2, 0]: ÷√2 gives e^√2/(e^√2 + 2), raw gives e²/(e² + 2) on "chase"."""
    diff = compare_options(MICE, "cats chase mice", Options(scale=True), Options(scale=False))
    scaled = math.exp(math.sqrt(2)) / (math.exp(math.sqrt(2)) + 2)
    raw = math.exp(2) / (math.exp(2) + 2)
    assert diff.difference[0, 1] == pytest.approx(raw - scaled, abs=1e-15)
    np.testing.assert_allclose(diff.difference.sum(axis=1), 0.0, atol=1e-15)  # rows still sum to 1
    assert diff.labels_a == diff.labels_b == ["cats", "chase", "mice"]
    assert diff.max_abs == pytest.approx(np.abs(diff.difference).max())


def test_two_heads_of_one_trace():
    trace = engine.run(CAT, "the cat sat on the mat", Options(heads=2))
    same = compare_heads(trace, 0, 0)
    assert same.max_abs == 0.0
    other = compare_heads(trace, 0, 1)
    np.testing.assert_array_equal(other.difference, trace.heads[1].weights - trace.heads[0].weights)
    i, j = other.largest_change
    assert abs(other.difference[i, j]) == other.max_abs


def test_two_sentences_of_the_same_length():
    diff = compare_sentences(CAT, "the cat sat on the mat", "the dog sat on the mat", Options(heads=2))
    assert diff.labels_b[1] == "dog" and diff.difference.shape == (6, 6)


def test_different_lengths_are_refused_clearly():
    with pytest.raises(ComparisonError, match="cannot compare 2 words with 3") as info:
        compare_sentences(CAT, "the cat", "the cat sat")
    assert isinstance(info.value, EngineError)


def test_a_missing_head_is_refused_clearly():
    one = engine.run(CAT, "the cat", Options(heads=1))
    two = engine.run(CAT, "the cat", Options(heads=2))
    with pytest.raises(ComparisonError, match="head 2 does not exist"):
        weights_difference(two, one, head_a=0, head_b=1)
    with pytest.raises(ComparisonError):
        compare_heads(one, 0, -1)
