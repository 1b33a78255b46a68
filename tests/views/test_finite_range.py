"""A step table's range (views/matrix_table.finite_range): the smallest and largest finite value and
whether any is infinite, the same for an array and for the matrix made by rows that a long text's
scores are (engine/row_matrix.py), whatever −∞, +∞ and NaN it holds."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer.engine.row_matrix import RowMatrix
from attention_explorer.views.matrix_table import finite_range

VALUES = st.one_of(st.floats(width=32, allow_nan=True, allow_infinity=True),
                   st.floats(min_value=-10, max_value=10, width=32),
                   st.sampled_from([-np.inf, np.inf, np.nan]))


def _expected(values: np.ndarray) -> tuple[float, float, bool]:
    finite = values[np.isfinite(values)]
    return ((float(finite.min()), float(finite.max())) if finite.size else (np.inf, -np.inf)) + (
        bool(np.isinf(values).any()),)


def _by_rows(values: np.ndarray, rows: int) -> RowMatrix:
    blocks = [(start, min(start + rows, len(values))) for start in range(0, len(values), rows)]
    return RowMatrix(values.shape, values.dtype, lambda start, stop: values[start:stop].copy(), blocks)


@settings(max_examples=300, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(1, 12), st.integers(1, 7)), elements=VALUES), st.integers(1, 5))
def test_an_array_and_the_same_made_by_rows_give_its_finite_range(values, rows):
    expected = _expected(values)
    assert finite_range(values) == expected
    assert finite_range(_by_rows(values, rows)) == expected


def test_a_causal_table_by_hand():
    scores = np.array([[0.5, -np.inf, -np.inf], [-2.0, 3.0, -np.inf], [1.0, np.nan, 0.0]], dtype=np.float32)
    assert finite_range(scores) == (-2.0, 3.0, True)
    assert finite_range(_by_rows(scores, 2)) == (-2.0, 3.0, True)
    assert finite_range(np.full((2, 2), -np.inf, dtype=np.float32)) == (np.inf, -np.inf, True)
    assert finite_range(np.ones((2, 3), dtype=np.float32)) == (1.0, 1.0, False)


def test_a_range_found_once_is_kept_for_the_same_numbers_made_again():
    """A head shown again makes its scores again by rows; their range (a pass over all of them, 100 ms
    at 8,192 tokens) is the one found before, read from the memo its maker gives both."""
    values = np.array([[0.5, -np.inf], [-2.0, 3.0], [1.0, np.nan]], dtype=np.float32)
    memo, made = {}, []

    def rows(start: int, stop: int) -> np.ndarray:
        made.append(start)
        return values[start:stop].copy()

    def matrix() -> RowMatrix:
        return RowMatrix(values.shape, values.dtype, rows, [(0, 2), (2, 3)], memo)

    assert finite_range(matrix()) == (-2.0, 3.0, True) and made == [0, 2]
    made.clear()
    assert finite_range(matrix()) == (-2.0, 3.0, True) and made == []
    assert finite_range(matrix().window(slice(1, 3), slice(0, 1))) == (-2.0, 1.0, False)  # other numbers: read
    assert made == [0, 2]
