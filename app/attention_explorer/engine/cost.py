"""The cost lesson: the paper's Table 1, as data and as numbers for any sentence length n.

Self-attention compares every word with every word: n² pairs, each a dot product of length d, so
O(n²·d) work, but all at once (O(1) sequential steps) and any two words one step apart. A recurrent
layer does O(n·d²) work, cheaper when n < d, but in n steps one after the other, and a word's
information needs up to n steps to reach another word. The n × n weight matrix is also what fills
memory on long inputs.

Counts here are the formulas of Table 1 with every constant taken as 1: they show how the costs
grow, not how many machine instructions a real layer runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_ITEMSIZE = {"float32": 4, "float64": 8}


@dataclass(frozen=True)
class LayerType:
    """One row of Table 1 ("Attention Is All You Need", section 4)."""

    key: str
    name: str
    complexity: str        # work per layer
    sequential: str        # operations that must run one after another
    path_length: str       # longest path a signal travels between two positions


TABLE_1 = (
    LayerType("self_attention", "Self-attention", "O(n²·d)", "O(1)", "O(1)"),
    LayerType("recurrent", "Recurrent", "O(n·d²)", "O(n)", "O(n)"),
    LayerType("convolutional", "Convolutional", "O(k·n·d²)", "O(1)", "O(log_k(n))"),
    LayerType("restricted_self_attention", "Self-attention (restricted)", "O(r·n·d)", "O(1)", "O(n/r)"),
)
LAYER_KEYS = tuple(row.key for row in TABLE_1)


def operation_counts(n, d: int, k: int = 3, r: int = 16) -> dict[str, np.ndarray]:
    """Work per layer for each row of Table 1, for every length in `n` (a number or an array).

    n²·d, n·d², k·n·d² and r·n·d, as float64 (they grow past what a plot needs exactly). The
    restricted neighbourhood r cannot hold more than the n words there are, so it is min(r, n).
    """
    n = _lengths(n)
    _check_positive(d=d, k=k, r=r)
    return {
        "self_attention": n * n * d,
        "recurrent": n * d * d,
        "convolutional": k * n * d * d,
        "restricted_self_attention": np.minimum(r, n) * n * d,
    }


def sequential_operations(n) -> dict[str, np.ndarray]:
    """Steps that must run one after another: n for the recurrent layer, 1 for the others."""
    n = _lengths(n)
    one = np.ones_like(n)
    return {"self_attention": one, "recurrent": n.copy(), "convolutional": one.copy(),
            "restricted_self_attention": one.copy()}


def maximum_path_length(n, k: int = 3, r: int = 16) -> dict[str, np.ndarray]:
    """Longest path between two of n positions: 1, n, ⌈log_k n⌉ (dilated convolutions), ⌈n/r⌉.

    Every path is at least 1 step long, even for a single word.
    """
    n = _lengths(n)
    _check_positive(k=k, r=r)
    if k < 2:
        raise ValueError(f"the kernel width k must be at least 2 for log_k, got {k}")
    return {"self_attention": np.ones_like(n), "recurrent": n.copy(),
            "convolutional": np.maximum(1.0, _ceil_log(n, k)),
            "restricted_self_attention": np.maximum(1.0, np.ceil(n / r))}


def attention_matrix_bytes(n, dtype: str = "float64", heads: int = 1) -> np.ndarray:
    """Memory of the n × n weight matrix: n² entries of 4 (float32) or 8 (float64) bytes, per head."""
    if dtype not in _ITEMSIZE:
        raise ValueError(f"dtype must be one of {', '.join(_ITEMSIZE)}, got {dtype!r}")
    _check_positive(heads=heads)
    n = _lengths(n)
    return n * n * _ITEMSIZE[dtype] * heads


def _lengths(n) -> np.ndarray:
    n = np.asarray(n, dtype=np.float64)
    if np.any(n < 1) or np.any(n != np.floor(n)):
        raise ValueError("sequence lengths n must be whole numbers ≥ 1")
    return n


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")


def _ceil_log(n: np.ndarray, base: int) -> np.ndarray:
    """Smallest L with base^L ≥ n, exactly (floating log rounds 9 → 2.0000000000000004 for base 3)."""
    steps = np.zeros_like(n)
    reach = np.ones_like(n)
    while np.any(reach < n):
        short = reach < n
        steps[short] += 1
        reach[short] *= base
    return steps
