"""A large matrix made a block of rows at a time, when those rows are read.

A real model's scores, scaled and masked scores at 8,192 tokens are 268 MB each, and the step tables
and the heatmap that show them read a screenful of cells, each row's colour range or one row's
arithmetic. A RowMatrix answers those reads by making the blocks of rows they touch (keeping the
last few), so it never holds the whole. Anything that needs it whole (NumPy's own functions, a
file) gets it through `np.asarray`, made block by block, the same numbers.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np

KEPT_BLOCKS = 4


class RowMatrix:
    """rows × cols of `dtype`; `make(start, stop)` makes rows [start, stop) of one of `blocks`.

    `memo` keeps what a pass over the whole found (a step table's range of values), for any RowMatrix
    made with the same dict: its maker gives one to every matrix of the same numbers (a head's scores
    asked for again when the head is shown again), whose pass is then not made again."""

    ndim = 2

    def __init__(self, shape: tuple[int, int], dtype, make: Callable[[int, int], np.ndarray],
                 blocks: list[tuple[int, int]], memo: dict | None = None):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.memo = {} if memo is None else memo
        self._make, self._blocks = make, blocks
        self._starts = np.array([start for start, _stop in blocks], dtype=np.intp)
        self._kept: OrderedDict[int, np.ndarray] = OrderedDict()

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    def __len__(self) -> int:
        return self.shape[0]

    def _block(self, index: int) -> np.ndarray:
        if index in self._kept:
            self._kept.move_to_end(index)
        else:
            made = self._make(*self._blocks[index])
            made.flags.writeable = False
            self._kept[index] = made
            while len(self._kept) > KEPT_BLOCKS:
                self._kept.popitem(last=False)
        return self._kept[index]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows [start, stop) as an array (a view of one block, or the blocks joined)."""
        start, stop = max(0, start), min(self.shape[0], stop)
        if stop <= start:
            return np.zeros((0, self.shape[1]), dtype=self.dtype)
        first = int(np.searchsorted(self._starts, start, side="right")) - 1
        last = int(np.searchsorted(self._starts, stop - 1, side="right")) - 1
        if first == last:
            offset = self._blocks[first][0]
            return self._block(first)[start - offset:stop - offset]
        parts = [self._block(i) for i in range(first, last + 1)]
        offset = self._blocks[first][0]
        return np.concatenate(parts)[start - offset:stop - offset]

    def __getitem__(self, key):
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        if isinstance(rows, (int, np.integer)):
            row = int(rows) + (self.shape[0] if rows < 0 else 0)
            if not 0 <= row < self.shape[0]:
                raise IndexError(f"row {rows} of {self.shape[0]}")
            return self.rows(row, row + 1)[0][cols]
        if isinstance(rows, slice):
            start, stop, step = rows.indices(self.shape[0])
            if step == 1:
                return self.rows(start, stop)[:, cols]
        return np.asarray(self)[key]

    def window(self, rows: slice, cols: slice) -> RowMatrix:
        """Rows and columns [start, stop) of this matrix, itself made by the rows read (a reading that
        hides the first token, say, shows all but a row and a column of a head's scores)."""
        r0, r1, _ = rows.indices(self.shape[0])
        c0, c1, _ = cols.indices(self.shape[1])
        blocks = [(max(start, r0) - r0, min(stop, r1) - r0) for start, stop in self._blocks if start < r1 and stop > r0]
        return RowMatrix((r1 - r0, c1 - c0), self.dtype, lambda start, stop: self.rows(r0 + start, r0 + stop)[:, c0:c1],
                         blocks)

    def blocks(self):
        """Each block of rows in turn, made when not kept and let go: a pass over the whole (its range)
        that reads each block while it is fresh in the caches."""
        for index, (start, stop) in enumerate(self._blocks):
            kept = self._kept.get(index)
            yield kept if kept is not None else self._make(start, stop)

    def __iter__(self):
        """Row by row, a block made at a time (a file written from it holds one block)."""
        for start, stop in self._blocks:
            yield from self._make(start, stop)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        whole = np.concatenate([self._make(start, stop) for start, stop in self._blocks]) if self._blocks else \
            np.zeros(self.shape, dtype=self.dtype)
        return whole if dtype is None else whole.astype(dtype)

    def __repr__(self) -> str:
        return f"RowMatrix(shape={self.shape}, dtype={self.dtype})"
