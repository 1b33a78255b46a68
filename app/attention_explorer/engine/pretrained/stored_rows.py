"""The token embedding (and an output matrix of its own) kept in the file when the weights are stored.

A vocabulary of 128,256 tokens × 2,048 is a billion-parameter model's largest matrix: 1 GiB as
float32, more than its whole Q8_0 GGUF file holds for it four times over. Kept stored, a text's
tokens read only their own rows, and the next-token scores after the last token convert the matrix
a block of rows at a time (ROWS_AT_ONCE, 32 MiB as float32 for Llama-3.2-1B) and multiply each block
as it comes: each score is one row's product with one vector, the same numbers bit for bit as from
the whole matrix (test_stored_weights.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ROWS_AT_ONCE = 4096


class StoredRows:
    """A (rows, columns) float32 matrix whose rows `read(start, stop)` converts from the file, each
    block handed to `check(block)` (finite numbers, or the reader's ModelError) before it is used."""

    def __init__(self, shape: tuple[int, int], read: Callable[[int, int], np.ndarray],
                 check: Callable[[np.ndarray], None]):
        self.shape = shape
        self._read, self._check = read, check

    def __getitem__(self, ids: np.ndarray) -> np.ndarray:
        """The rows of `ids` (token ids), as float32, in their order."""
        ids = np.asarray(ids)
        wanted, where = np.unique(ids, return_inverse=True)
        rows = np.empty((len(wanted), self.shape[1]), dtype=np.float32)
        for at, row in enumerate(wanted):
            rows[at] = self._rows(int(row), int(row) + 1)[0]
        return rows[where.reshape(ids.shape)]

    def times(self, vector: np.ndarray) -> np.ndarray:
        """This matrix · `vector` (columns,): (rows,)."""
        out = np.empty(self.shape[0], dtype=np.float32)
        for start in range(0, self.shape[0], ROWS_AT_ONCE):
            block = self._rows(start, min(start + ROWS_AT_ONCE, self.shape[0]))
            out[start:start + len(block)] = block @ vector
        return out

    def check_every_row(self) -> None:
        """Read every row once, a block at a time, so that a damaged one is refused now."""
        for start in range(0, self.shape[0], ROWS_AT_ONCE):
            self._rows(start, min(start + ROWS_AT_ONCE, self.shape[0]))

    def scores(self, stream: np.ndarray) -> np.ndarray:
        """`stream` (n, columns) · this matrix transposed: (n, rows). Made whole for the product and let
        go after: a product of several rows of the stream by blocks of the matrix rounds some scores
        otherwise than by the whole (BLAS's kernels at a block's edge), and only the census asks."""
        whole = np.empty(self.shape, dtype=np.float32)
        for start in range(0, self.shape[0], ROWS_AT_ONCE):
            stop = min(start + ROWS_AT_ONCE, self.shape[0])
            whole[start:stop] = self._rows(start, stop)
        return stream @ whole.T

    def _rows(self, start: int, stop: int) -> np.ndarray:
        block = self._read(start, stop)
        self._check(block)
        return block
