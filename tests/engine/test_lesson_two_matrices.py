"""Why two matrices: tying W_K to W_Q makes the scores symmetric, so attention is no longer one-sided."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer import engine
from attention_explorer.engine import Options, asymmetry, compare_tied, most_one_sided_pair, tie_keys_to_queries

CAT = engine.load_builtin("cat-sat-on-mat")


def test_tying_copies_w_q_into_w_k_and_leaves_the_model_alone():
    w_k_before = CAT.w_k.copy()
    tied = tie_keys_to_queries(CAT)
    np.testing.assert_array_equal(tied.w_k, CAT.w_q)
    assert tied.w_k is not tied.w_q and tied.w_k is not CAT.w_q
    np.testing.assert_array_equal(CAT.w_k, w_k_before)
    assert tied.name == CAT.name and "W_K tied to W_Q" in tied.description


@pytest.mark.parametrize("name", engine.builtin_model_names())
def test_tied_scores_are_symmetric_for_every_model_and_head(name):
    model = engine.load_builtin(name)
    trace = engine.run(tie_keys_to_queries(model), model.default_sentence)
    for head in trace.heads:
        np.testing.assert_allclose(head.scores, head.scores.T, rtol=0, atol=1e-12)
        np.testing.assert_allclose(head.scores, head.q @ head.q.T, rtol=0, atol=1e-12)


def test_most_one_sided_pair_by_hand():
    weights = np.array([[0.5, 0.4, 0.1],
                        [0.1, 0.8, 0.1],
                        [0.3, 0.3, 0.4]])
    # gaps: 0→1: 0.4 − 0.1 = 0.3; 2→0: 0.3 − 0.1 = 0.2; 2→1: 0.3 − 0.1 = 0.2
    pair = most_one_sided_pair(weights)
    assert (pair.looker, pair.looked_at, pair.forward, pair.backward) == (0, 1, 0.4, 0.1)
    assert pair.gap == pytest.approx(0.3, abs=1e-15)
    np.testing.assert_allclose(asymmetry(weights), [[0, 0.3, 0.2], [0.3, 0, 0.2], [0.2, 0.2, 0]], atol=1e-15)


def test_one_word_has_no_pair_and_a_symmetric_matrix_has_no_gap():
    assert most_one_sided_pair(np.ones((1, 1))) is None
    pair = most_one_sided_pair(np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert pair.gap == 0.0


def test_sat_looks_at_cat_but_not_back_until_tied():
    result = compare_tied(CAT, "the cat sat on the mat", Options(heads=2), head=0)
    labels = result.untied.labels
    pair = result.pair
    assert (labels[pair.looker], labels[pair.looked_at]) == ("sat", "cat")
    assert pair.forward > 0.7 and pair.backward < 0.1
    assert result.score_asymmetry_before > 1
    assert result.score_asymmetry_after <= 1e-12
    forward, backward = pair.in_matrix(result.tied.heads[0].weights)
    assert abs(forward - backward) < 0.01  # no longer one-sided


@given(arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 6)), elements=st.floats(-5, 5)))
def test_the_pair_found_has_the_largest_gap(matrix):
    square = matrix[: min(matrix.shape), : min(matrix.shape)]
    pair = most_one_sided_pair(square)
    assert pair.looker != pair.looked_at
    assert pair.gap >= 0
    assert pair.gap == pytest.approx(asymmetry(square).max(), abs=1e-12)
