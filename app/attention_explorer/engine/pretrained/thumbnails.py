"""Every head's weights made small enough to draw as one cell of the model view, as they are made.

A thumbnail has at most THUMB_PX pixels a side: past that, each square block of `step` × `step`
weights keeps its strongest (a 500-token head is 125 pixels wide, with step 4). The forward pools
each block of query rows into it and lets the rows go, so the model view of a 8,192-token text
costs 270 thumbnails of 128 × 128, not 270 matrices of 8,192 × 8,192.
"""

from __future__ import annotations

import numpy as np

THUMB_PX = 128


def thumb_step(n: int) -> int:
    """Tokens per thumbnail pixel, a side: 1 up to THUMB_PX tokens."""
    return max(1, -(-n // THUMB_PX))


def thumb_size(n: int) -> int:
    return -(-n // thumb_step(n))


def pool_rows_into(thumb: np.ndarray, rows: np.ndarray, start: int, step: int) -> None:
    """Fold weights rows (…, r, keys), for queries start … start + r − 1, into `thumb` (…, m, m) by
    the largest weight of each step × step block. `thumb` starts at 0: weights are never negative,
    and the keys a causal block leaves out are exact zeros."""
    if step == 1:
        thumb[..., start:start + rows.shape[-2], :rows.shape[-1]] = rows
        return
    cols = np.maximum.reduceat(rows, np.arange(0, rows.shape[-1], step), axis=-1)
    first = -(-start // step) * step - start     # the first row that starts a block of thumbnail rows
    starts = np.arange(first, rows.shape[-2], step)
    if first:
        starts = np.concatenate(([0], starts))
    pooled = np.maximum.reduceat(cols, starts, axis=-2)
    top = start // step
    target = thumb[..., top:top + pooled.shape[-2], :pooled.shape[-1]]
    np.maximum(target, pooled, out=target)


def pooled(weights: np.ndarray) -> np.ndarray:
    """The thumbnails of whole matrices (…, n, n) at once, as pool_rows_into makes them block by block."""
    n = weights.shape[-1]
    size = thumb_size(n)
    thumb = np.zeros((*weights.shape[:-2], size, size), dtype=weights.dtype)
    pool_rows_into(thumb, weights, 0, thumb_step(n))
    return thumb
