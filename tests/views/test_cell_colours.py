"""A heatmap's "each row" colours divide by each row's largest shown value (views/cell_colours.py):
for any float32 matrix, with −∞, +∞ and NaN among its values and any mask, that is the largest of the
finite, unmasked cells, and NaN for a row with none."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer.views import cell_colours
from attention_explorer.views.cell_colours import MatrixColours

VALUES = st.one_of(st.floats(width=32, allow_nan=True, allow_infinity=True), st.floats(0, 1, width=32))


@settings(max_examples=200, deadline=None)
@given(st.data(), st.integers(1, 9), st.integers(1, 9), st.booleans(), st.integers(1, 40))
def test_each_row_s_top_is_the_largest_of_its_shown_cells(data, rows, cols, masked, chunk):
    matrix = data.draw(arrays(np.float32, (rows, cols), elements=VALUES))
    mask = data.draw(arrays(np.bool_, (rows, cols))) if masked else None
    original = cell_colours.CHUNK_CELLS
    cell_colours.CHUNK_CELLS = chunk  # rows looked at a few at a time, as a large matrix's are
    try:
        top = MatrixColours(matrix, mask, by_row=True).row_top()
    finally:
        cell_colours.CHUNK_CELLS = original
    for r in range(rows):
        shown = [float(v) for c, v in enumerate(matrix[r]) if np.isfinite(v) and (mask is None or not mask[r, c])]
        if shown:
            assert top[r] == max(shown)
        else:
            assert np.isnan(top[r])
