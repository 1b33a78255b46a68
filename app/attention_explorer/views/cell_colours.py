"""What a heatmap's cells are coloured by, worked out for the part of the matrix that is drawn.

A cell is coloured by its value, or (a heatmap's "each row" span) by its value over its row's largest;
a masked cell (True in the mask, or not finite: a −∞ score) is not coloured. For a small matrix that
is one array the size of the matrix, as before. A large one (a real model's 8,192 × 8,192 weights,
268 MB in float32) is never copied: its colours are made for the part in view, block by block of
rows, and pooled to the screen's pixels (each pixel the largest of its cells), and what needs the
whole matrix (each row's largest, the span of its values) is worked out once, a block at a time.
"""

from __future__ import annotations

import numpy as np

from .array_corners import equals_corner

CHUNK_CELLS = 1 << 22  # cells looked at in one go: 16 MB of float32


def hidden_cells(matrix: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """The cells drawn as masked: not finite (a −∞ score), or True in `mask` (a forbidden pair's 0)."""
    masked = ~np.isfinite(matrix)
    if mask is not None:
        masked |= np.asarray(mask, dtype=bool)
    return masked


def value_span(values: np.ndarray) -> tuple[float, float]:
    """The range of the finite values, widened when they are all equal (a colour bar needs a span)."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return 0.0, 1.0
    return _widened(float(finite.min()), float(finite.max()))


def _widened(low: float, high: float) -> tuple[float, float]:
    return (low - 0.5, high + 0.5) if high - low < 1e-12 else (low, high)


class MatrixColours:
    """The colours of `matrix` (rows × columns) with `mask`, each row over its largest when `by_row`."""

    def __init__(self, matrix: np.ndarray, mask: np.ndarray | None, by_row: bool):
        self.matrix, self.mask, self.by_row = matrix, mask, by_row
        self._row_top: np.ndarray | None = None
        self._span: tuple[float, float] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.matrix.shape

    def rows(self, start: int, stop: int, cols: slice = slice(None)) -> np.ndarray:
        """The colours of rows [start, stop) (and `cols`): NaN where masked."""
        values = self.matrix[start:stop, cols]
        hidden = hidden_cells(values, None if self.mask is None else self.mask[start:stop, cols])
        colours = np.where(hidden, np.nan, values)
        if self.by_row:
            top = self.row_top()[start:stop, None]
            colours /= np.where(top > 0, top, 1.0).astype(colours.dtype)
        return colours

    def whole(self) -> np.ndarray:
        return self.rows(0, self.shape[0])

    def row_top(self) -> np.ndarray:
        """Each row's largest shown value (NaN for a row with none), made once.

        One argmax pass: where a row's largest cell is shown (finite and not masked), it is the largest
        shown one. Only the other rows (none shown, or a masked, infinite or NaN cell on top) are looked
        at again cell by cell. Marking the hidden cells first, for every row, cost twice as long (8,192
        tokens: 65 against 29 ms)."""
        if self._row_top is None:
            tops = []
            for start, stop in self._chunks():
                values = self.matrix[start:stop]
                if not values.shape[1]:  # no cell to show (argmax has none to pick)
                    tops.append(np.full(len(values), np.nan, dtype=values.dtype))
                    continue
                rows = np.arange(len(values))
                best = values.argmax(axis=1)
                top = values[rows, best]
                shown = np.isfinite(top)
                if self.mask is not None:
                    shown &= ~np.asarray(self.mask[start:stop][rows, best], dtype=bool)
                for row in np.flatnonzero(~shown).tolist():
                    row_values = values[row]
                    hidden = hidden_cells(row_values, None if self.mask is None else self.mask[start + row])
                    top[row] = row_values.max(where=~hidden, initial=-np.inf)
                tops.append(np.where(np.isfinite(top), top, np.nan))
            self._row_top = np.concatenate(tops) if tops else np.zeros(0)
        return self._row_top

    def span(self) -> tuple[float, float]:
        """The range of the colours' finite values, as value_span of the whole would give it."""
        if self._span is None:
            low, high = np.inf, -np.inf
            for start, stop in self._chunks():
                colours = self.rows(start, stop)
                finite = colours[np.isfinite(colours)]
                if finite.size:
                    low, high = min(low, float(finite.min())), max(high, float(finite.max()))
            self._span = _widened(low, high) if low <= high else (0.0, 1.0)
        return self._span

    def pooled(self, rows: tuple[int, int], cols: tuple[int, int], step: int) -> np.ndarray:
        """The colours of rows × cols (each a [start, stop) range starting on a multiple of `step`) in
        blocks of step × step cells, each the largest of its cells (NaN where all are masked): one
        pixel per block, a block of rows at a time."""
        (r0, r1), (c0, c1) = rows, cols
        out_rows, out_cols = -(-(r1 - r0) // step), -(-(c1 - c0) // step)
        image = np.empty((out_rows, out_cols), dtype=np.float32)
        band = max(step, (CHUNK_CELLS // max(c1 - c0, 1)) // step * step)
        for start in range(r0, r1, band):
            stop = min(start + band, r1)
            colours = self.rows(start, stop, slice(c0, c1))
            if step > 1:
                colours = _pool(colours, step)
            image[(start - r0) // step:(start - r0) // step + colours.shape[0]] = colours
        return image

    def _chunks(self) -> list[tuple[int, int]]:
        rows, cols = self.shape
        band = max(1, CHUNK_CELLS // max(cols, 1))
        return [(start, min(start + band, rows)) for start in range(0, rows, band)]


def _pool(colours: np.ndarray, step: int) -> np.ndarray:
    """Blocks of step × step cells, each the largest of its non-NaN ones (NaN where all are NaN)."""
    rows, cols = colours.shape
    padded = np.full((-(-rows // step) * step, -(-cols // step) * step), -np.inf, dtype=colours.dtype)
    padded[:rows, :cols] = np.where(np.isnan(colours), -np.inf, colours)
    pooled = padded.reshape(padded.shape[0] // step, step, padded.shape[1] // step, step).max(axis=(1, 3))
    pooled[np.isneginf(pooled)] = np.nan
    return pooled


class WidestColours:
    """The colours made for the widest matrix lately shown whole, kept so that a matrix holding exactly
    the numbers of its top-left corner (a decoder's shorter text so far) is coloured by a view of them:
    a scrubber step back at 1,000 tokens coloured 999 × 999 cells anew (8 ms) where reading them
    through for the comparison takes 0.4. The views are read-only, so that CellImage sees them as
    the corner of the image it drew (array_corners.is_corner_of) and keeps its pixels too."""

    def __init__(self):
        self._kept: tuple[np.ndarray, np.ndarray | None, bool, np.ndarray, np.ndarray] | None = None

    def corner(self, matrix: np.ndarray, mask: np.ndarray | None, by_row: bool
               ) -> tuple[np.ndarray, np.ndarray] | None:
        """(the hidden cells, the colours) of `matrix` with `mask`, as views of the kept ones, when
        `matrix` and `mask` are exactly a corner of the kept matrix and mask; else None. Each row over
        its largest (`by_row`) only where the kept rows show nothing right of the corner: otherwise
        their largest may lie outside it."""
        if self._kept is None:
            return None
        kept_matrix, kept_mask, kept_by_row, hidden, colours = self._kept
        if by_row != kept_by_row or not equals_corner(matrix, kept_matrix):
            return None
        rows, cols = matrix.shape
        if (mask is None) != (kept_mask is None) or (mask is not None and not equals_corner(
                np.asarray(mask, dtype=bool), kept_mask)):
            return None
        if by_row and not hidden[:rows, cols:].all():
            return None
        return hidden[:rows, :cols], colours[:rows, :cols]

    def keep(self, matrix: np.ndarray, mask: np.ndarray | None, by_row: bool, hidden: np.ndarray,
             colours: np.ndarray) -> None:
        """Keep `colours` (made from `matrix` and `mask`, its `hidden` cells) as the widest, read-only.
        The matrix and mask are copied: the caller's may be written to later, the copies stay what the
        colours were made from."""
        for array in (hidden, colours):
            array.flags.writeable = False
        self._kept = (np.array(matrix), None if mask is None else np.array(mask, dtype=bool), by_row, hidden, colours)

    def clear(self) -> None:
        self._kept = None
