"""Attention in blocks of queries: softmax(q·Kᵀ) a few rows at a time, so that no step holds a layer's
heads × n × n weights (at 8,192 tokens one layer of SmolLM2 would be 2.4 GB).

Every weight the app shows or writes is made here, by the forward and again on demand for a view,
a file or the census. The blocks depend only on the number of tokens, and each head's product of a
block is the same BLAS call whichever heads are asked for, so a weight recomputed later is the
forward's own to the bit. A decoder's block reads only the keys up to its last query (the rest are
masked): half the work of the full square, and its weights beyond are exact zeros.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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


def keys_for(stop: int, n: int, causal: bool) -> int:
    """How many keys a block ending at query `stop` reads: all, or (causal) those up to its last query."""
    return stop if causal else n


def block_weights(arch: Architecture, q_scaled: np.ndarray, k_t: np.ndarray, start: int, stop: int,
                  heads: Sequence[int] | None = None) -> np.ndarray:
    """softmax(q·kᵀ) of query rows [start, stop) for `heads` (all when None): (heads, rows, keys),
    keys = keys_for(stop, n, causal). `q_scaled` is (heads, n, d_head) already divided by √d_head,
    `k_t` the keys transposed, (kv_heads, d_head, n); query head h reads key head h // group."""
    n, causal = q_scaled.shape[1], arch.is_decoder
    keys = keys_for(stop, n, causal)
    if heads is None:  # one batched call: a BLAS product per head, as below
        grouped = q_scaled.reshape(arch.n_kv_heads, arch.group, n, arch.d_head)[:, :, start:stop]
        scores = np.matmul(grouped, k_t[:, None, :, :keys])  # (kv, group, rows, keys)
        scores = scores.reshape(arch.n_heads, stop - start, keys)
    else:
        scores = np.empty((len(heads), stop - start, keys), dtype=np.float32)
        for i, h in enumerate(heads):
            np.matmul(q_scaled[h:h + 1, start:stop], k_t[h // arch.group, None, :, :keys], out=scores[i:i + 1])
    softmax_rows(scores, start, causal)
    return scores


def softmax_rows(scores: np.ndarray, start: int, causal: bool) -> None:
    """Each row's softmax in place, the keys after a decoder's query first set to −∞. Rows are queries
    start, start + 1, …; a causal block's keys end at its last query."""
    rows = scores.shape[-2]
    if causal:
        keys = scores.shape[-1]
        later = np.triu(np.ones((rows, rows), dtype=bool), k=1)   # key j > query i, within the block
        scores[..., keys - rows:][..., later] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    scores *= np.reciprocal(total, out=total)  # as PyTorch's softmax: one division a row, then products


def block_outputs(arch: Architecture, weights: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A block's weights (heads, rows, keys) times V: (heads, rows, d_head), V shared within each group."""
    heads, rows, keys = weights.shape
    grouped = weights.reshape(arch.n_kv_heads, arch.group, rows, keys)
    return np.matmul(grouped, v[:, None, :keys]).reshape(heads, rows, arch.d_head)


def head_weights(arch: Architecture, q_scaled: np.ndarray, k_t: np.ndarray, heads: Sequence[int] | None = None
                 ) -> np.ndarray:
    """The whole n × n weights of `heads` (all when None), block by block: (heads, n, n) float32."""
    n = q_scaled.shape[1]
    count = arch.n_heads if heads is None else len(heads)
    weights = np.zeros((count, n, n), dtype=np.float32)
    for start, stop in row_blocks(n):
        block = block_weights(arch, q_scaled, k_t, start, stop, heads)
        weights[:, start:stop, :block.shape[-1]] = block
    return weights
