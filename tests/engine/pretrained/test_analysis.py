"""Rollout, word merging and hiding tokens, against small matrices worked by hand."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer.engine.pretrained.analysis import (
    attention_rollout,
    hide_tokens,
    merge_words,
    sum_runs,
    words_after_hiding,
)

A = np.array([[0.5, 0.5, 0.0],
              [0.2, 0.6, 0.2],
              [0.1, 0.1, 0.8]])


def test_merging_sums_over_the_pieces_looked_at_and_averages_over_the_pieces_looking():
    # Words: {0} and {1, 2} ("play", "·ing").
    merged = merge_words(A, [(0,), (1, 2)])
    # Row "play": looks at word 1 with 0.5 + 0.0. Row "playing": mean of rows 1 and 2 summed per word:
    # row 1 → (0.2, 0.8), row 2 → (0.1, 0.9); mean (0.15, 0.85).
    np.testing.assert_allclose(merged, [[0.5, 0.5], [0.15, 0.85]], atol=1e-15)


def test_hiding_a_token_renormalises_the_rows_and_says_how_much_was_removed():
    hidden = hide_tokens(A, [0])
    np.testing.assert_array_equal(hidden.kept, [1, 2])
    # Row 1 keeps (0.6, 0.2) of 1.0 → (0.75, 0.25); row 2 keeps (0.1, 0.8) → (1/9, 8/9).
    np.testing.assert_allclose(hidden.weights, [[0.75, 0.25], [1 / 9, 8 / 9]], atol=1e-15)
    np.testing.assert_allclose(hidden.removed, [0.2, 0.1], atol=1e-15)


def test_a_row_that_only_looked_at_hidden_tokens_stays_zero():
    weights = np.array([[1.0, 0.0], [0.5, 0.5]])
    hidden = hide_tokens(weights, [0])
    np.testing.assert_allclose(hidden.weights, [[1.0]])
    only_sink = hide_tokens(np.array([[0.0, 1.0], [0.0, 1.0]]), [1])
    np.testing.assert_array_equal(only_sink.weights, [[0.0]])
    np.testing.assert_array_equal(only_sink.removed, [1.0])


def test_hiding_then_merging_uses_the_words_renumbered():
    # [CLS] play ·ing [SEP]: hide both specials, then merge "play·ing" into one word.
    weights = np.array([[0.4, 0.2, 0.2, 0.2], [0.5, 0.25, 0.25, 0.0], [0.0, 0.5, 0.5, 0.0], [0.25] * 4])
    hidden = hide_tokens(weights, [0, 3])
    words = words_after_hiding([(0,), (1, 2), (3,)], hidden.kept)
    assert words == ((0, 1),)
    np.testing.assert_allclose(merge_words(hidden.weights, words), [[1.0]])


def test_rollout_of_one_layer_mixes_the_head_average_with_the_identity():
    heads = np.stack([A, np.eye(3)])[None]  # 1 layer, 2 heads
    # mean = (A + I)/2; + I; rows then sum to 2 → Â = (A + I)/4 + I/2.
    expected = (A + np.eye(3)) / 4 + np.eye(3) / 2
    np.testing.assert_allclose(attention_rollout(heads)[0], expected, atol=1e-15)


def test_rollout_multiplies_the_layers_later_layer_on_the_left():
    first, second = A, A.T / A.T.sum(axis=1, keepdims=True)
    rolled = attention_rollout(np.stack([first[None], second[None]]))
    mix = [(w + np.eye(3)) / 2 for w in (first, second)]
    np.testing.assert_allclose(rolled[1], mix[1] @ mix[0], atol=1e-15)


def _row_stochastic(n):
    return arrays(np.float64, (n, n), elements=st.floats(0.01, 1.0)).map(lambda w: w / w.sum(axis=1, keepdims=True))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(_row_stochastic(n), st.lists(st.integers(1, 3), min_size=1))))
def test_every_view_of_the_weights_keeps_rows_summing_to_one(case):
    weights, sizes = case
    n = weights.shape[0]
    words, start = [], 0
    for size in sizes:
        if start >= n:
            break
        words.append(tuple(range(start, min(start + size, n))))
        start += size
    if start < n:
        words.append(tuple(range(start, n)))
    np.testing.assert_allclose(merge_words(weights, words).sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(attention_rollout(np.stack([weights[None]] * 2))[-1].sum(axis=1), 1.0, atol=1e-12)
    if n > 1:
        np.testing.assert_allclose(hide_tokens(weights, [0]).weights.sum(axis=1), 1.0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(_row_stochastic(n), st.lists(st.integers(1, 3), min_size=1))),
       st.data())
def test_words_in_order_and_words_in_any_order_merge_by_the_same_rule(case, data):
    # pieces in order take the fast path (sums over slices); the same words listed out of order take
    # the general one: both give the same matrix, its rows and columns in the words' new order
    weights, sizes = case
    n = weights.shape[0]
    words, start = [], 0
    for size in sizes + [n]:
        if start < n:
            words.append(tuple(range(start, min(start + size, n))))
            start += size
    order = data.draw(st.permutations(range(len(words))))
    shuffled = [words[i] for i in order]
    np.testing.assert_allclose(merge_words(weights, shuffled), merge_words(weights, words)[np.ix_(order, order)],
                               atol=1e-12)


def test_hiding_the_ends_or_a_middle_token_gives_the_same_rule():
    weights = np.arange(1.0, 17.0).reshape(4, 4)
    weights /= weights.sum(axis=1, keepdims=True)
    ends = hide_tokens(weights, [0, 3])       # one run kept: taken as a slice
    middle = hide_tokens(weights, [1])        # two runs kept: taken by index
    kept = weights[1:3, 1:3]
    np.testing.assert_allclose(ends.weights, kept / kept.sum(axis=1, keepdims=True), atol=1e-15)
    kept = weights[np.ix_([0, 2, 3], [0, 2, 3])]
    np.testing.assert_allclose(middle.weights, kept / kept.sum(axis=1, keepdims=True), atol=1e-15)


# Cross-attention: 3 target tokens (rows) reading 4 source tokens (columns).
C = np.array([[0.1, 0.2, 0.3, 0.4],
              [0.5, 0.0, 0.25, 0.25],
              [0.4, 0.4, 0.1, 0.1]])


def test_a_rectangle_merges_its_rows_by_the_target_s_words_and_its_columns_by_the_source_s():
    # Target words {0}, {1, 2}; source words {0}, {1, 2, 3}.
    merged = merge_words(C, [(0,), (1, 2)], [(0,), (1, 2, 3)])
    # Row 0: (0.1, 0.9). Rows 1 and 2: (0.5, 0.5) and (0.4, 0.6), averaged: (0.45, 0.55).
    np.testing.assert_allclose(merged, [[0.1, 0.9], [0.45, 0.55]], atol=1e-15)
    # the same rule when the words are not runs in order (the loop, not the slices)
    shuffled = merge_words(C, [(1, 2), (0,)], [(1, 2, 3), (0,)])
    np.testing.assert_allclose(shuffled, [[0.55, 0.45], [0.9, 0.1]], atol=1e-15)


def test_a_rectangle_hides_its_rows_and_its_columns_each_by_its_own_text():
    hidden = hide_tokens(C, [1], [0, 3])  # target token 1; source tokens 0 and 3
    np.testing.assert_array_equal(hidden.kept, [0, 2])
    # Row 0 keeps (0.2, 0.3) of 1.0 → (0.4, 0.6); row 2 keeps (0.4, 0.1) → (0.8, 0.2).
    np.testing.assert_allclose(hidden.weights, [[0.4, 0.6], [0.8, 0.2]], atol=1e-15)
    np.testing.assert_allclose(hidden.removed, [0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(hide_tokens(C, [], [1, 2]).weights[1], [2 / 3, 1 / 3], atol=1e-15)  # no row hidden


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=12), st.integers(1, 5), st.booleans(), st.data())
def test_runs_are_summed_left_to_right_along_either_axis(sizes, other, columns, data):
    """Each run of neighbouring rows (columns) is its pieces added in order, to the bit: the first piece,
    plus the second, plus the third (float32, where the order shows)."""
    n = sum(sizes)
    values = data.draw(arrays(np.float32, (other, n) if columns else (n, other),
                              elements=st.floats(-1e3, 1e3, width=32)))
    starts = np.cumsum([0, *sizes[:-1]])
    summed = sum_runs(values, starts, np.array(sizes, dtype=np.float64), axis=1 if columns else 0)
    along = values.T if columns else values
    expected = []
    for start, size in zip(starts, sizes, strict=True):
        total = along[start].copy()
        for piece in range(1, size):
            total += along[start + piece]
        expected.append(total)
    np.testing.assert_array_equal(summed, np.array(expected).T if columns else np.array(expected))
