"""Attention sinks: a token that takes a large share of every later token's attention, usually the
first one, whatever it says.

Source: Gu et al. 2024, "When Attention Sink Emerges in Language Models: An Empirical View"
(`sail-sg/Attention-Sink`). The importance of token k in a head is the mean weight it receives from
the queries that can see it, α_k = 1/(n − k + 1) · Σ_{i ≥ k} A[i, k] (1-based k). The head "sinks"
on the first token when α_1 > ε; the paper takes ε = 0.3, and its model-wide sink rate is the share
of all heads that sink, averaged over texts. For an encoder every query sees the first token, so α_1
is the mean of the first column.
"""

from __future__ import annotations

import numpy as np

DEFAULT_EPSILON = 0.3


def token_importance(weights: np.ndarray, k: int = 0) -> np.ndarray:
    """α of token `k` (0-based here) in every head of `weights` (…, n, n): the mean of column k over
    rows k … n − 1."""
    return np.asarray(weights)[..., k:, k].mean(axis=-1, dtype=np.float64)


def sinks(importance: np.ndarray, epsilon: float = DEFAULT_EPSILON) -> np.ndarray:
    """Which heads sink: importance above ε (a boolean per head)."""
    return np.asarray(importance) > epsilon

