"""Previous-token heads: each token looks at the one just before it.

Source: TransformerLens, `transformer_lens/head_detector.py`,
`get_previous_token_head_detection_pattern`: P[i, i − 1] = 1 for every i ≥ 1, 0 elsewhere; scored
with the "mul" score (detection.mul_score). A perfect previous-token head scores (n − 1) / n: the
first token has no token before it, and its row still counts in Σ A.
"""

from __future__ import annotations

import numpy as np

from .detection import Pattern, mul_score


def previous_token_pattern(n: int) -> Pattern:
    rows = np.arange(1, n, dtype=np.intp)
    return Pattern(rows, rows - 1)


def previous_token_scores(weights: np.ndarray, *, exclude_first: bool = False,
                          exclude_diagonal: bool = False) -> np.ndarray:
    """The previous-token score of every head in `weights` (…, n, n)."""
    n = np.asarray(weights).shape[-1]
    return mul_score(weights, previous_token_pattern(n), exclude_first=exclude_first,
                     exclude_diagonal=exclude_diagonal)
