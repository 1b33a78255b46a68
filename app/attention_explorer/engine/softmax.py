"""Numerically stable softmax and the causal mask."""

from __future__ import annotations

import numpy as np


def softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax that never overflows.

    Subtracting each row's maximum leaves the result unchanged (softmax ignores a constant added
    to a row) but keeps every exponent ≤ 0, so scores as large as ±1e300 still give finite
    weights. Entries of −∞ (masked) become exactly 0. Every row must have a finite maximum.
    """
    scores = np.asarray(scores, dtype=np.float64)
    shifted = scores - scores.max(axis=-1, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=-1, keepdims=True)


def causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """Boolean matrix, True where attention is forbidden: a word may not look at later words."""
    n_keys = n_queries if n_keys is None else n_keys
    return np.triu(np.ones((n_queries, n_keys), dtype=bool), k=1)


def why_masked(row: int, col: int, looking: str, looked_at: str, causal: bool = True) -> str:
    """Why a masked pair is masked, in words: the word looked at comes after the one looking (the causal
    mask), or lies further back than the layer's sliding window (Mistral, Gemma 2's local layers), or in
    an encoder (not `causal`), whose window reaches both ways (ModernBERT), further back or ahead."""
    if col > row:
        return f"{looked_at} comes after {looking}" if causal else \
            f"{looked_at} is too far ahead for the layer's sliding window"
    return f"{looked_at} is too far back for the layer's sliding window"


def apply_mask(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Copy of `scores` with −∞ where `mask` is True, so softmax gives those entries weight 0."""
    masked = np.array(scores, dtype=np.float64, copy=True)
    if mask is not None:
        masked[mask] = -np.inf
    return masked
