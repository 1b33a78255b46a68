"""Duplicate-token heads: a token looks back at earlier copies of itself.

Source: TransformerLens, `transformer_lens/head_detector.py`,
`get_duplicate_token_head_detection_pattern`: P[i, j] = 1 when token j is the same token as token i
(the same id) and j < i; the diagonal (a token is always a copy of itself) and everything above it
are 0. Scored with the "mul" score (detection.mul_score). A text without a repeated token has an
empty pattern: it says nothing about this kind of head, and the census leaves it out of the mean.
"""

from __future__ import annotations

import numpy as np

from .detection import Pattern, mul_score


def duplicate_token_pattern(ids: np.ndarray) -> Pattern:
    """The pairs (i, j), j < i, of equal token ids."""
    ids = np.asarray(ids)
    same = np.tril(ids[:, None] == ids[None, :], k=-1)
    rows, cols = np.nonzero(same)
    return Pattern(rows.astype(np.intp), cols.astype(np.intp))


def duplicate_token_scores(weights: np.ndarray, ids: np.ndarray, *, exclude_first: bool = False,
                           exclude_diagonal: bool = False) -> np.ndarray:
    """The duplicate-token score of every head in `weights` (…, n, n) on tokens `ids`."""
    return mul_score(weights, duplicate_token_pattern(ids), exclude_first=exclude_first,
                     exclude_diagonal=exclude_diagonal)
