"""Gu et al.'s sink importance, Clark et al.'s six averages and their entropy, on matrices worked out
by hand, with the properties that hold for any attention."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer.engine.census.clark import clark_averages
from attention_explorer.engine.census.entropy import SMOOTHING, attention_entropy, uniform_entropy
from attention_explorer.engine.census.sink import sinks, token_importance

# [CLS] the cat . [SEP]; rows: where each token looks
LABELS = ["[CLS]", "the", "cat", ".", "[SEP]"]
SPECIAL = np.array([True, False, False, False, True])
WEIGHTS = np.array([
    [1.0, 0.0, 0.0, 0.0, 0.0],
    [0.5, 0.0, 0.5, 0.0, 0.0],
    [0.2, 0.3, 0.0, 0.0, 0.5],
    [0.0, 0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 0.5, 0.5],
])


def test_sink_importance_is_the_mean_weight_the_token_gets_from_those_that_see_it():
    assert token_importance(WEIGHTS, 0) == pytest.approx((1.0 + 0.5 + 0.2) / 5)
    assert token_importance(WEIGHTS, 3) == pytest.approx((1.0 + 0.5) / 2)  # rows 3 and 4 only
    assert sinks(np.array([0.34, 0.3, 0.1])).tolist() == [True, False, False]
    assert sinks(np.array([0.34]), epsilon=0.5).tolist() == [False]


def test_clark_averages_by_hand():
    averages = clark_averages(WEIGHTS, LABELS, SPECIAL)
    expected = {"first": 1.7 / 5, "sep": 1.0 / 5, "punct": 1.5 / 5, "self": (1.0 + 1.0 + 0.5) / 5,
                "next": 0.5 / 5, "prev": (0.5 + 0.3 + 0.5) / 5}
    assert averages == pytest.approx(expected)


def test_byte_level_punctuation_counts_once_its_marker_is_dropped():
    # a decoder's tidy labels: no specials, "," stands alone
    weights = np.array([[1.0, 0.0], [0.25, 0.75]])
    averages = clark_averages(weights, ["hello", ","], np.array([False, False]))
    assert averages["punct"] == pytest.approx(0.75 / 2)
    assert averages["sep"] == 0.0


def test_uniform_attention_has_the_uniform_entropy_exactly():
    n = 6
    assert attention_entropy(np.full((n, n), 1 / n)) == pytest.approx(np.log(n))
    assert uniform_entropy(n) == pytest.approx(np.log(n))


def test_causal_uniform_attention_has_the_causal_baseline():
    n = 5
    weights = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    assert attention_entropy(weights, causal=True) == pytest.approx(np.mean(np.log(np.arange(1, n + 1))), abs=1e-6)
    assert uniform_entropy(n, causal=True) == pytest.approx(np.mean(np.log(np.arange(1, n + 1))))


def test_one_hot_rows_have_the_smoothed_entropy_of_the_paper():
    n = 4
    on, off = (1 - SMOOTHING) + SMOOTHING / n, SMOOTHING / n
    expected = -(on * np.log(on) + (n - 1) * off * np.log(off))
    assert attention_entropy(np.eye(n)) == pytest.approx(expected, abs=1e-6)  # worked in float32


@st.composite
def weights(draw, causal: bool):
    n = draw(st.integers(1, 8))
    raw = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=n * n, max_size=n * n))).reshape(n, n) + 1e-3
    if causal:
        raw = np.tril(raw)
    return raw / raw.sum(axis=1, keepdims=True)


@settings(max_examples=100, deadline=None)
@given(st.data(), st.booleans())
def test_entropy_lies_between_zero_and_the_uniform_baseline(data, causal):
    matrix = data.draw(weights(causal))
    n = matrix.shape[0]
    assert -1e-6 <= attention_entropy(matrix, causal) <= uniform_entropy(n, causal) + 1e-5


@settings(max_examples=100, deadline=None)
@given(weights(False))
def test_the_six_averages_are_shares_of_attention(matrix):
    n = matrix.shape[0]
    averages = clark_averages(matrix, ["."] * n, np.zeros(n, dtype=bool))
    for value in averages.values():
        assert -1e-12 <= value <= 1 + 1e-12
    assert averages["punct"] == pytest.approx(1.0)  # every token is a full stop
    assert averages["self"] + averages["next"] + averages["prev"] <= 1 + 1e-9
