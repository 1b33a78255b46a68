"""The model view's cells: which thumbnails changed, found without comparing every cell whole."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attention_explorer.views.model_view import changed_cells


@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 6), st.integers(1, 6), st.data())
def test_the_cells_found_changed_are_those_whose_thumbnails_differ_anywhere(layers, heads, rows, cols, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    old = rng.random((layers, heads, rows, cols), dtype=np.float32)
    new = old.copy()
    for layer, head in data.draw(st.lists(st.tuples(st.integers(0, layers - 1), st.integers(0, heads - 1)))):
        if rows:  # one number changed, in the first row or any other
            new[layer, head, data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1))] += 1
    whole = (old != new).reshape(layers, heads, -1).any(axis=2)
    np.testing.assert_array_equal(changed_cells(old, new), whole)


def test_a_change_below_a_cell_s_first_row_is_found():
    old = np.zeros((2, 3, 4, 4), dtype=np.float32)
    new = old.copy()
    new[1, 2, 3, 3] = 0.5   # past the first row: found by the whole comparison
    new[0, 1, 0, 2] = 0.25  # in the first row: found at once
    expected = np.zeros((2, 3), dtype=bool)
    expected[1, 2] = expected[0, 1] = True
    np.testing.assert_array_equal(changed_cells(old, new), expected)
