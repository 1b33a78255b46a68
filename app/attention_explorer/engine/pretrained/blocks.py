"""Attention in blocks of queries: softmax(q·Kᵀ) a few rows at a time, so that no step holds a layer's
heads × n × n weights (at 8,192 tokens one layer of SmolLM2 would be 2.4 GB).

Every weight the app shows or writes is made here, by the forward and again on demand for a view,
a file or the census. The blocks depend only on the number of tokens, and each head's product of a
block is the same BLAS call whichever heads are asked for, so a weight recomputed later is the
forward's own to the bit. A decoder's block reads only the keys up to its last query (the rest are
masked): half the work of the full square, and its weights beyond are exact zeros. A layer with a
sliding window (Architecture.windows) also gives −∞ to the keys outside it (a decoder's before its
window, an encoder's on either side), and a model with soft-capped scores (Gemma 2) caps them before
the mask.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from .ops import soft_cap
from .thumbnails import thumb_step
from .weights import Architecture

# Weights of one head in one block: 64 K float32 (256 kB), so the softmax's passes over a block of
# every head (2.3 MB for SmolLM2's nine) run in the core's caches rather than in main memory.
BLOCK_CELLS = 1 << 16
MIN_BLOCK_ROWS = 16


def row_blocks(n: int) -> list[tuple[int, int]]:
    """The query rows of each block, [start, stop): fixed by n alone. Each block starts on a row
    where a thumbnail's block of rows starts (thumbnails.py), so it pools without a seam."""
    step = thumb_step(n)
    rows = max(MIN_BLOCK_ROWS, BLOCK_CELLS // max(n, 1))
    rows = max(step, rows // step * step)
    return [(start, min(start + rows, n)) for start in range(0, n, rows)]


def block_of(n: int, row: int) -> tuple[int, int]:
    """The block of `row_blocks(n)` that holds query `row`."""
    return next(block for block in row_blocks(n) if block[0] <= row < block[1])


def keys_for(stop: int, n: int, causal: bool) -> int:
    """How many keys a block ending at query `stop` reads: all, or (causal) those up to its last query."""
    return stop if causal else n


def block_weights(arch: Architecture, q_scaled: np.ndarray, k_t: np.ndarray, start: int, stop: int,
                  heads: Sequence[int] | None = None, out: np.ndarray | None = None, window: int = 0) -> np.ndarray:
    """softmax(q·kᵀ) of query rows [start, stop) for `heads` (all when None): (heads, rows, keys),
    keys = keys_for(stop, n, causal), made in `out` when given (e.g. those rows of a whole matrix).
    `q_scaled` is (heads, n, d_head) already divided by the score divisor, `k_t` the keys transposed,
    (kv_heads, d_head, n); query head h reads key head h // group. `window`: the layer's sliding
    window (0: none)."""
    scores = block_scores(arch, q_scaled, k_t, start, stop, heads, out)
    if arch.attn_softcap:
        soft_cap(scores, arch.attn_softcap)
    softmax_rows(scores, start, arch.is_decoder, window)
    return scores


def block_scores(arch: Architecture, q: np.ndarray, k_t: np.ndarray, start: int, stop: int,
                 heads: Sequence[int] | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """q·kᵀ of query rows [start, stop) against the keys the block reads: (heads, rows, keys). The keys
    are k_t's: the queries' own (self-attention), or another text's (an encoder–decoder's cross-attention,
    never causal), so a block may be rows × any number of keys."""
    n = q.shape[1]
    keys = keys_for(stop, k_t.shape[-1], arch.is_decoder)
    if heads is None and out is None:  # one batched call: a BLAS product per head, as below
        grouped = q.reshape(arch.n_kv_heads, arch.group, n, arch.d_head)[:, :, start:stop]
        scores = np.matmul(grouped, k_t[:, None, :, :keys])  # (kv, group, rows, keys)
        return scores.reshape(arch.n_heads, stop - start, keys)
    heads = range(arch.n_heads) if heads is None else heads
    scores = np.empty((len(heads), stop - start, keys), dtype=np.float32) if out is None else out
    for i, h in enumerate(heads):  # two-dimensional: NumPy hands it to BLAS even into rows of a larger matrix
        np.matmul(q[h, start:stop], k_t[h // arch.group, :, :keys], out=scores[i])
    return scores


@functools.lru_cache(maxsize=8)
def _later(rows: int) -> np.ndarray:
    """rows × rows, True where the key comes after the query (a block's own square)."""
    later = np.triu(np.ones((rows, rows), dtype=bool), k=1)
    later.flags.writeable = False
    return later


def mask_later_keys(scores: np.ndarray, start: int) -> None:
    """−∞ where a causal block's key comes after its query: the block's keys end at its last query."""
    rows, keys = scores.shape[-2:]
    scores[..., keys - rows:][..., _later(rows)] = -np.inf


def outside_window(start: int, rows: int, keys: int, window: int, both: bool = False) -> np.ndarray | None:
    """rows × keys, True where key j is too far from query i = start + row to be seen: j ≤ i − window
    (a decoder's sliding window keeps key j > i − window, as transformers), and with `both` (an
    encoder's window, on either side of its query) j ≥ i + window too. None when no key of the block is."""
    behind = window > 0 and start + rows - 1 - window >= 0
    ahead = both and window > 0 and start + window < keys
    if not (behind or ahead):
        return None
    distance = np.arange(keys)[None, :] - np.arange(start, start + rows)[:, None]
    return np.abs(distance) >= window if both else distance <= -window


def softmax_rows(scores: np.ndarray, start: int, causal: bool, window: int = 0) -> None:
    """Each row's softmax in place, the keys after a decoder's query (and, with a sliding `window`, those
    too far from it: before a decoder's query, on either side of an encoder's) first set to −∞. Rows
    are queries start, start + 1, …; a causal block's keys end at its last query."""
    if causal:
        mask_later_keys(scores, start)
    far = outside_window(start, scores.shape[-2], scores.shape[-1], window, both=not causal)
    if far is not None:
        scores[..., far] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    scores *= np.reciprocal(total, out=total)  # as PyTorch's softmax: one division a row, then products


def block_outputs(arch: Architecture, weights: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A block's weights (heads, rows, keys) times V: (heads, rows, d_head), V shared within each group."""
    heads, rows, keys = weights.shape
    grouped = weights.reshape(arch.n_kv_heads, arch.group, rows, keys)
    return np.matmul(grouped, v[:, None, :keys]).reshape(heads, rows, arch.d_head)


def head_weights(arch: Architecture, q_scaled: np.ndarray, k_t: np.ndarray, heads: Sequence[int] | None = None,
                 window: int = 0) -> np.ndarray:
    """The whole weights of `heads` (all when None), block by block: (heads, n, n) float32, or against
    another text's m keys (cross-attention), (heads, n, m)."""
    n, n_keys = q_scaled.shape[1], k_t.shape[-1]
    count = arch.n_heads if heads is None else len(heads)
    weights = np.zeros((count, n, n_keys), dtype=np.float32)
    for start, stop in row_blocks(n):  # each block made in place: no copy of it
        keys = keys_for(stop, n_keys, arch.is_decoder)
        block_weights(arch, q_scaled, k_t, start, stop, heads, weights[:, start:stop, :keys], window)
    return weights


def score_rows(arch: Architecture, q: np.ndarray, k_t: np.ndarray, head: int, start: int, stop: int,
               divisor: float = 1.0, masked: bool = False, out: np.ndarray | None = None, window: int = 0,
               cap: float = 0.0) -> np.ndarray:
    """Rows [start, stop) (a block of row_blocks) of one head's q·kᵀ ÷ `divisor`, against every key,
    soft-capped at `cap` when given; with `masked`, −∞ where a decoder's key comes after its query, and
    where a key lies outside the layer's sliding `window` (before a decoder's query, either side of an
    encoder's). Every way of asking for a head's scores comes here, so scores ÷ the
    divisor made later equal these scaled ones to the bit. Masked, a decoder's keys after the block's
    last query are −∞ without being multiplied out (half of a long text's products), as its weights
    are made (keys_for)."""
    n_keys = k_t.shape[-1]
    keys = keys_for(stop, n_keys, masked and arch.is_decoder)
    block = np.empty((stop - start, n_keys), dtype=np.float32) if out is None else out
    made = block[:, :keys]
    np.matmul(q[head, start:stop], k_t[head // arch.group][:, :keys], out=made)
    if divisor != 1.0:
        made /= np.float32(divisor)
    if cap:
        soft_cap(made, cap)
    if masked and arch.is_decoder:
        block[:, keys:] = -np.inf
        mask_later_keys(block[None, :, :stop], start)
    far = outside_window(start, stop - start, block.shape[-1], window, both=not arch.is_decoder) if masked else None
    if far is not None:
        block[far] = -np.inf
    return block


def head_scores(arch: Architecture, q: np.ndarray, k_t: np.ndarray, head: int, divisor: float = 1.0,
                masked: bool = False, window: int = 0, cap: float = 0.0) -> np.ndarray:
    """One head's q·kᵀ ÷ `divisor`, n × n float32, block by block of rows (see score_rows)."""
    n = q.shape[1]
    scores = np.empty((n, n), dtype=np.float32)
    for start, stop in row_blocks(n):
        score_rows(arch, q, k_t, head, start, stop, divisor, masked, out=scores[start:stop], window=window, cap=cap)
    return scores
