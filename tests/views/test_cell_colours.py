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
@given(st.data(), st.integers(1, 9), st.integers(0, 9), st.booleans(), st.integers(1, 40))
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


def _causal_weights(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    return np.where(mask, 0.0, rng.random((n, n))).astype(np.float32), mask


def _kept(matrix, mask, by_row) -> cell_colours.WidestColours:
    """A WidestColours that has kept `matrix`'s colours, as a plot keeps those it made."""
    widest = cell_colours.WidestColours()
    colours = MatrixColours(matrix, mask, by_row).whole()
    widest.keep(matrix, mask, by_row, cell_colours.hidden_cells(matrix, mask), colours)
    return widest


def _same_colours(found, matrix, mask, by_row) -> None:
    hidden, colours = found
    np.testing.assert_array_equal(hidden, cell_colours.hidden_cells(matrix, mask))
    np.testing.assert_array_equal(colours, MatrixColours(matrix, mask, by_row).whole())  # NaN where hidden


@settings(max_examples=100, deadline=None)
@given(st.data(), st.integers(1, 12), st.booleans(), st.booleans())
def test_a_corner_s_colours_kept_from_the_widest_are_those_made_fresh(data, n, by_row, causal):
    """Whenever WidestColours answers for a corner, it answers what colouring the corner fresh gives;
    for a causal mask (a decoder's shorter text so far) it always answers."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    matrix, mask = _causal_weights(rng, n) if causal else (
        data.draw(arrays(np.float32, (n, n), elements=VALUES)), data.draw(arrays(np.bool_, (n, n))))
    widest = _kept(matrix, mask, by_row)
    rows, cols = data.draw(st.integers(1, n)), data.draw(st.integers(1, n))
    if causal:
        cols = rows  # a text so far: as many columns as rows
    part, part_mask = matrix[:rows, :cols].copy(), mask[:rows, :cols].copy()  # the same numbers, made again
    found = widest.corner(part, part_mask, by_row)
    if causal and not np.isnan(matrix).any():
        assert found is not None
    if found is not None:
        _same_colours(found, part, part_mask, by_row)


def test_a_corner_that_differs_in_one_bit_or_its_mask_or_reading_is_coloured_anew():
    matrix, mask = _causal_weights(np.random.default_rng(1), 8)
    widest = _kept(matrix, mask, True)
    part, part_mask = matrix[:5, :5].copy(), mask[:5, :5].copy()
    _same_colours(widest.corner(part, part_mask, True), part, part_mask, True)
    nudged = part.copy()
    nudged[4, 2] = np.nextafter(nudged[4, 2], np.float32(1))
    assert widest.corner(nudged, part_mask, True) is None
    assert widest.corner(part, None, True) is None
    other_mask = part_mask.copy()
    other_mask[4, 0] = True
    assert widest.corner(part, other_mask, True) is None
    assert widest.corner(part, part_mask, False) is None  # kept each row over its largest, asked for 0–1
    assert widest.corner(matrix[:5, :4].copy(), mask[:5, :4].copy(), True) is None  # row 4 shows column 4
    on_one_scale = _kept(matrix, mask, False)
    _same_colours(on_one_scale.corner(matrix[:5, :4].copy(), mask[:5, :4].copy(), False),  # on 0–1 it may
                  matrix[:5, :4], mask[:5, :4], False)


def test_the_widest_is_kept_as_it_was_coloured_though_the_caller_writes_to_its_matrix():
    matrix, mask = _causal_weights(np.random.default_rng(2), 6)
    widest = _kept(matrix, mask, True)
    matrix[3, 1] = 0.5  # written after it was coloured
    assert widest.corner(matrix[:4, :4].copy(), mask[:4, :4].copy(), True) is None
    widest.clear()
    assert widest.corner(matrix[:2, :2].copy(), mask[:2, :2].copy(), True) is None
