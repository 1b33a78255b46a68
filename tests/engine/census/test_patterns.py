"""The three TransformerLens detectors (previous-token, duplicate-token, induction) and their "mul"
score, on hand-built matrices whose scores are worked out by hand, and against TransformerLens's own
construction of the patterns (written out here in NumPy) on random inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer.engine.census.detection import mul_score, pattern_from_matrix
from attention_explorer.engine.census.duplicate_token import duplicate_token_pattern, duplicate_token_scores
from attention_explorer.engine.census.induction import (
    induction_pattern,
    induction_scores,
    induction_stripe_scores,
    repeated_span,
)
from attention_explorer.engine.census.previous_token import previous_token_pattern, previous_token_scores

CAUSAL_UNIFORM_3 = np.array([[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]])


def perfect_previous(n: int) -> np.ndarray:
    """Row 0 on itself (nothing before it), every other row on the token before."""
    weights = np.zeros((n, n))
    weights[0, 0] = 1
    weights[np.arange(1, n), np.arange(n - 1)] = 1
    return weights


def test_a_perfect_previous_token_head_scores_all_rows_but_the_first():
    assert previous_token_scores(perfect_previous(4)) == pytest.approx(3 / 4)


def test_excluding_the_first_token_drops_its_column_from_both_sums():
    # Σ A = 4 minus column 0 (rows 0 and 1 put 1 there) = 2; the pattern's pairs off column 0: (2, 1), (3, 2)
    assert previous_token_scores(perfect_previous(4), exclude_first=True) == pytest.approx(1.0)


def test_uniform_causal_attention_gives_the_hand_worked_previous_token_score():
    # (A[1, 0] + A[2, 1]) / Σ A = (1/2 + 1/3) / 3 = 5/18
    assert previous_token_scores(CAUSAL_UNIFORM_3) == pytest.approx(5 / 18)


def test_excluding_the_diagonal_takes_it_out_of_the_total():
    # Σ A without the diagonal: 3 − (1 + 1/2 + 1/3) = 7/6; matched 5/6 → 5/7
    assert previous_token_scores(CAUSAL_UNIFORM_3, exclude_diagonal=True) == pytest.approx(5 / 7)


def test_excluding_both_counts_the_corner_cell_once():
    # the total loses column 0 (1 + 1/2 + 1/3) and the diagonal (1 + 1/2 + 1/3), with A[0, 0] = 1 in both:
    # 3 − 11/6 − 11/6 + 1 = 1/3; the only pattern pair left is (2, 1) = 1/3 → 1
    assert previous_token_scores(CAUSAL_UNIFORM_3, exclude_first=True, exclude_diagonal=True) == pytest.approx(1.0)


def test_nothing_left_to_divide_by_is_nan():
    assert np.isnan(previous_token_scores(np.eye(3), exclude_diagonal=True))


def test_scores_are_per_head():
    heads = np.stack([perfect_previous(4), np.eye(4)])
    assert previous_token_scores(heads) == pytest.approx([3 / 4, 0.0])


def test_duplicate_pattern_marks_earlier_copies_only():
    # tokens: a b a a → row 2 looks back at 0; row 3 at 0 and 2
    pattern = duplicate_token_pattern(np.array([7, 8, 7, 7]))
    assert sorted(zip(pattern.rows.tolist(), pattern.cols.tolist(), strict=True)) == [(2, 0), (3, 0), (3, 2)]


def test_induction_pattern_is_the_duplicate_pattern_one_column_right():
    # a b c a b c: the second a (3) should look at the first b (1), the second b (4) at c (2), c (5) at a (3)
    pattern = induction_pattern(np.array([1, 2, 3, 1, 2, 3]))
    assert sorted(zip(pattern.rows.tolist(), pattern.cols.tolist(), strict=True)) == [(3, 1), (4, 2), (5, 3)]


def test_a_perfect_induction_head_on_a_repeat_has_the_stripe_score_one():
    ids = np.array([101, 5, 6, 7, 5, 6, 7, 102])   # [CLS] a b c a b c [SEP]
    start = repeated_span(ids, 3)
    assert start == 1
    weights = np.zeros((8, 8))
    weights[:, 0] = 1                                # everything else looks at [CLS]
    for i in range(4, 7):                            # the second copy looks at the token after its earlier copy
        weights[i] = 0
        weights[i, i - 2] = 1
    assert induction_stripe_scores(weights, start, 3) == pytest.approx(1.0)
    # TransformerLens's mul score: the three stripe rows of eight rows' weight
    assert induction_scores(weights, ids) == pytest.approx(3 / 8)


def test_no_repeat_no_span():
    assert repeated_span(np.array([1, 2, 3, 4]), 2) is None


def tl_duplicate(ids: np.ndarray) -> np.ndarray:
    """TransformerLens's construction: equal tokens, diagonal zeroed, lower triangle."""
    same = np.equal(ids[None, :].repeat(len(ids), 0), ids[None, :].repeat(len(ids), 0).T).astype(float)
    np.fill_diagonal(same, 0)
    return np.tril(same)


def tl_induction(ids: np.ndarray) -> np.ndarray:
    """TransformerLens's construction: the duplicate pattern rolled one column right, first column zeroed."""
    rolled = np.roll(tl_duplicate(ids), 1, axis=1)
    rolled[:, 0] = 0
    return np.tril(rolled)


def tl_mul(weights: np.ndarray, pattern: np.ndarray, exclude_bos: bool, exclude_current: bool) -> float:
    """compute_head_attention_similarity_score(error_measure="mul"), in NumPy."""
    weights = weights.copy()
    if exclude_bos:
        weights[:, 0] = 0
    if exclude_current:
        np.fill_diagonal(weights, 0)
    return float((weights * pattern).sum() / weights.sum())


@st.composite
def causal_weights_and_tokens(draw):
    n = draw(st.integers(2, 9))
    ids = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    raw = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=n * n, max_size=n * n))).reshape(n, n)
    raw = np.tril(raw)
    return raw / raw.sum(axis=1, keepdims=True), ids


@settings(max_examples=150, deadline=None)
@given(causal_weights_and_tokens(), st.booleans(), st.booleans())
def test_patterns_and_score_agree_with_transformerlens(data, exclude_first, exclude_diagonal):
    weights, ids = data
    n = len(ids)
    references = {
        "previous": (previous_token_pattern(n), np.tril(np.eye(n, k=-1))),
        "duplicate": (duplicate_token_pattern(ids), tl_duplicate(ids)),
        "induction": (induction_pattern(ids), tl_induction(ids)),
    }
    for pattern, dense in references.values():
        np.testing.assert_array_equal(pattern.matrix(n), dense)
        if weights.sum() - (weights[:, 0].sum() if exclude_first else 0) - (np.trace(weights) if exclude_diagonal
                                                                            else 0) > 1e-9:
            expected = tl_mul(weights, dense, exclude_first, exclude_diagonal)
            ours = mul_score(weights, pattern, exclude_first=exclude_first, exclude_diagonal=exclude_diagonal)
            assert ours == pytest.approx(expected, abs=1e-12)
    assert duplicate_token_scores(weights, ids) == pytest.approx(
        mul_score(weights, pattern_from_matrix(tl_duplicate(ids))), nan_ok=True)


@settings(max_examples=100, deadline=None)
@given(causal_weights_and_tokens())
def test_every_mul_score_lies_between_zero_and_one(data):
    weights, ids = data
    for score in (previous_token_scores(weights), duplicate_token_scores(weights, ids),
                  induction_scores(weights, ids)):
        assert 0.0 <= float(score) <= 1.0 + 1e-12
