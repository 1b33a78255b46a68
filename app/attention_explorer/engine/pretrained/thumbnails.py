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


def largest_of_each(thumbnails: np.ndarray) -> np.ndarray:
    """Each thumbnail's largest weight (0 for one of no tokens): the cells' shape, from (..., m, m)."""
    if not (thumbnails.shape[-2] and thumbnails.shape[-1]):
        return np.zeros(thumbnails.shape[:-2], dtype=thumbnails.dtype)
    return thumbnails.max(axis=(-2, -1))


def pool_rows_into(thumb: np.ndarray, rows: np.ndarray, start: int, step: int) -> None:
    """Fold weights rows (…, r, keys), for queries start … start + r − 1, into `thumb` (…, m, m) by
    the largest weight of each step × step block; `start` is a multiple of `step`. `thumb` starts at
    0: weights are never negative, and the keys a causal block leaves out are exact zeros. Rows are
    folded first (elementwise maxima along whole rows, the fast way), then the step-fold smaller
    result's columns."""
    count, keys = rows.shape[-2:]
    top = start // step
    if step == 1:
        thumb[..., top:top + count, :keys] = rows
        return
    whole = count // step * step
    folded = [rows[..., :whole, :].reshape(*rows.shape[:-2], whole // step, step, keys).max(axis=-2)]
    if whole < count:
        folded.append(rows[..., whole:, :].max(axis=-2, keepdims=True))
    by_rows = np.concatenate(folded, axis=-2) if len(folded) > 1 else folded[0]
    groups = -(-keys // step)
    if groups * step != keys:  # the last block of columns is short: padded with zeros, which change no maximum
        padded = np.zeros((*by_rows.shape[:-1], groups * step), dtype=by_rows.dtype)
        padded[..., :keys] = by_rows
        by_rows = padded
    # every step-th column at once, step times: a maximum over a last axis of a few was 30 times slower
    pooled_rows = by_rows[..., 0::step].copy()
    for offset in range(1, step):
        np.maximum(pooled_rows, by_rows[..., offset::step], out=pooled_rows)
    target = thumb[..., top:top + pooled_rows.shape[-2], :groups]
    np.maximum(target, pooled_rows, out=target)


def pooled(weights: np.ndarray) -> np.ndarray:
    """The thumbnails of whole matrices (…, n, n) at once, as pool_rows_into makes them block by block;
    of (…, n, m) ones too (cross-attention), with the longer side's step on both sides."""
    rows, keys = weights.shape[-2:]
    step = thumb_step(max(rows, keys))
    thumb = np.zeros((*weights.shape[:-2], -(-rows // step), -(-keys // step)), dtype=weights.dtype)
    pool_rows_into(thumb, weights, 0, step)
    return thumb
