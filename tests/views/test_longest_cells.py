"""A step table's columns are as wide as their longest texts, found from the numbers without formatting
each cell (views/matrix_table.longest_cells): for any float32 values, the cells it picks hold a text as
long as the longest the column writes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer.engine.cell_arithmetic import fmt
from attention_explorer.views.matrix_table import longest_cells

VALUES = st.one_of(st.floats(width=32, allow_nan=True, allow_infinity=True),
                   st.floats(min_value=-10, max_value=10, width=32),
                   st.sampled_from([0.005, -0.005, 0.995, 9.995, 99.995, -0.001, 0.1, 0.25, 10.0, -0.0]))


@settings(max_examples=300, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(1, 12), st.integers(1, 6)), elements=VALUES))
def test_the_cells_picked_hold_each_column_s_longest_text(values):
    picked = longest_cells(values)
    assert picked.shape == (min(3, values.shape[0]), values.shape[1])
    for col in range(values.shape[1]):
        longest = max(len(fmt(x)) for x in values[:, col])
        assert max(len(fmt(values[row, col])) for row in picked[:, col]) == longest


def test_lengths_by_hand():
    values = np.array([[0.5], [-12.25], [3.0], [-0.001], [100.1]], dtype=np.float32)
    assert [fmt(values[r, 0]) for r in longest_cells(values)[:, 0]] == ["−12.25", "100.1", "0.5"]


def test_an_infinity_is_one_character_and_a_ten_two():
    """Found by the property above: three ∞ (one character each) were picked over a 10 (two)."""
    values = np.array([[np.inf], [np.inf], [np.inf], [10.0]], dtype=np.float32)
    assert 3 in longest_cells(values)[:, 0]
