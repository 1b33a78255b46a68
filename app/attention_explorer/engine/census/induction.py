"""Induction heads: on "… A B … A", the second A looks at the B that followed the first A (and so
helps the model predict B again).

Two scores, both from TransformerLens:

- The detection pattern (`transformer_lens/head_detector.py`, `get_induction_head_detection_pattern`):
  the duplicate-token pattern shifted one column to the right, P[i, j] = 1 when token j − 1 is the
  same token as token i, 1 ≤ j ≤ i. Scored with the "mul" score (detection.mul_score), on any text
  that repeats a token.
- The stripe on a repeated random sequence (`demos/Main_Demo.ipynb`): L random tokens written twice,
  no BOS; the score is the mean of the attention diagonal at offset 1 − L, A[i, i − L + 1], the
  token after the earlier copy. TransformerLens takes the whole diagonal, which also holds the last
  token of the first copy (looking at the very first token, which it has never seen follow it);
  here the mean is over the L queries of the second copy only, and the copies may start after a
  [CLS] or BOS token (`start`). A perfect induction head scores 1.
"""

from __future__ import annotations

import numpy as np

from .detection import Pattern, mul_score
from .duplicate_token import duplicate_token_pattern


def induction_pattern(ids: np.ndarray) -> Pattern:
    """The pairs (i, j + 1) for every earlier copy j of token i."""
    duplicates = duplicate_token_pattern(ids)
    return Pattern(duplicates.rows, duplicates.cols + 1)


def induction_scores(weights: np.ndarray, ids: np.ndarray, *, exclude_first: bool = False,
                     exclude_diagonal: bool = False) -> np.ndarray:
    """The induction detection score of every head in `weights` (…, n, n) on tokens `ids`."""
    return mul_score(weights, induction_pattern(ids), exclude_first=exclude_first,
                     exclude_diagonal=exclude_diagonal)


def induction_stripe(start: int, period: int) -> Pattern:
    """The second copy's queries i and the keys i − period + 1 they should look at, for two copies of
    `period` tokens beginning at token `start`."""
    rows = np.arange(start + period, start + 2 * period, dtype=np.intp)
    return Pattern(rows, rows - period + 1)


def induction_stripe_scores(weights: np.ndarray, start: int, period: int) -> np.ndarray:
    """The mean weight on the induction stripe of every head in `weights` (…, n, n)."""
    stripe = induction_stripe(start, period)
    return np.asarray(weights)[..., stripe.rows, stripe.cols].mean(axis=-1, dtype=np.float64)


def repeated_span(ids: np.ndarray, period: int) -> int | None:
    """Where two back-to-back copies of `period` tokens begin in `ids` (after any leading special
    token), or None when the tokens hold no such repeat."""
    ids = np.asarray(ids)
    for start in range(len(ids) - 2 * period + 1):
        if np.array_equal(ids[start:start + period], ids[start + period:start + 2 * period]):
            return start
    return None
