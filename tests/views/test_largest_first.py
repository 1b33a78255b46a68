"""take_largest (views/largest_first.py) picks, along rows or columns, what a stable sort of the
negated values puts first: equal values in their order, a NaN first as argmax has it."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer.views.largest_first import take_largest

# above −∞, as its callers' are (weights, lengths): picks are set to −∞
VALUES = st.one_of(st.sampled_from([0.0, 0.5, 1.0, np.inf]), st.floats(-3, 3, width=32))


@settings(max_examples=200, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(0, 7), st.integers(0, 7)), elements=VALUES),
       st.integers(0, 9), st.sampled_from([0, 1]))
def test_the_largest_of_each_line_are_those_a_stable_sort_puts_first(values, count, axis):
    expected = np.argsort(-values, axis=axis, kind="stable")
    expected = expected[:count] if axis == 0 else expected[:, :count].T
    np.testing.assert_array_equal(take_largest(values.copy(), count, axis), expected)


def test_a_nan_counts_as_largest_as_argmax_has_it():
    values = np.array([[0.2, np.nan, 0.9, np.nan]])
    np.testing.assert_array_equal(take_largest(values, 3, axis=1), [[1], [3], [2]])
