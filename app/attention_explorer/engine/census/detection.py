"""How much of a head's attention lands where a detection pattern says it should: TransformerLens's
"mul" score, shared by the previous-token, duplicate-token and induction measures.

Source: TransformerLens, `transformer_lens/head_detector.py`, `compute_head_attention_similarity_score`
with error_measure="mul": score = Σ(A ⊙ P) / Σ A over the whole n × n matrix A, where P is the 0/1
detection pattern (lower triangular). `exclude_bos` sets A's first column to 0 before both sums,
`exclude_current_token` its diagonal; the names here are `exclude_first` and `exclude_diagonal`.
Rows of A sum to 1, so without exclusions Σ A = n and the score is the share of all attention
that the pattern's pairs receive.

A pattern is kept as its (rows, columns) pairs, not as an n × n matrix: it has at most a few ones
per row, and a sum over pairs is far cheaper than a product over every cell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Pattern:
    """The (row, column) pairs where a detection pattern is 1; the row is the token looking."""

    rows: np.ndarray  # intp
    cols: np.ndarray

    @property
    def empty(self) -> bool:
        return self.rows.size == 0

    def matrix(self, n: int) -> np.ndarray:
        """The pattern as TransformerLens writes it: an n × n matrix of 0 and 1."""
        dense = np.zeros((n, n))
        dense[self.rows, self.cols] = 1.0
        return dense


def pattern_from_matrix(matrix: np.ndarray) -> Pattern:
    rows, cols = np.nonzero(np.asarray(matrix))
    return Pattern(rows.astype(np.intp), cols.astype(np.intp))


def attention_total(weights: np.ndarray, *, exclude_first: bool = False, exclude_diagonal: bool = False,
                    column_totals: np.ndarray | None = None) -> np.ndarray:
    """Σ A of every head after the exclusions: the "mul" score's denominator. `column_totals`
    (…, n), the weight each token receives, may be handed in when the caller has it already."""
    weights = np.asarray(weights)
    if column_totals is None:
        column_totals = weights.sum(axis=-2, dtype=np.float64)
    total = column_totals.sum(axis=-1)
    if exclude_first:
        total = total - column_totals[..., 0]
    if exclude_diagonal:
        total = total - np.trace(weights, axis1=-2, axis2=-1, dtype=np.float64)
    if exclude_first and exclude_diagonal:
        total = total + weights[..., 0, 0]  # taken away twice above
    return total


def mul_score(weights: np.ndarray, pattern: Pattern, *, exclude_first: bool = False,
              exclude_diagonal: bool = False, total: np.ndarray | None = None) -> np.ndarray:
    """TransformerLens's "mul" score of every head in `weights` (…, n, n): Σ(A ⊙ P) / Σ A.

    Returns one score per leading index (e.g. per head), in [0, 1]; NaN where nothing is left to
    divide by (every weight excluded), as TransformerLens's own division would give. `total` is
    attention_total(weights, …) with the same exclusions, when the caller scores several patterns.
    """
    weights = np.asarray(weights)
    if total is None:
        total = attention_total(weights, exclude_first=exclude_first, exclude_diagonal=exclude_diagonal)
    keep = np.ones(pattern.rows.shape, dtype=bool)
    if exclude_first:
        keep &= pattern.cols != 0
    if exclude_diagonal:
        keep &= pattern.rows != pattern.cols
    matched = weights[..., pattern.rows[keep], pattern.cols[keep]].sum(axis=-1, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, matched / np.where(total > 0, total, 1.0), np.nan)
