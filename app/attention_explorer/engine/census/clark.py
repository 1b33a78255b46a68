"""Where a head's attention goes on average: Clark et al.'s six averages.

Source: Clark, Khandelwal, Levy & Manning 2019, "What Does BERT Look At? An Analysis of BERT's
Attention", section 3 (`clarkkev/attention-analysis`, General_Analysis.ipynb). For one text of n
tokens and one head, each average is Σ_ij A[i, j] · S[i, j] / n: the share of attention, averaged
over the tokens looking, that lands on the tokens a selector S picks:

- first: the first token ([CLS] in BERT; in a decoder whatever token comes first, often a sink);
- sep: special tokens after the first ([SEP] in BERT; a decoder's end-of-text or chat markers);
- punct: "." and "," (the paper's two punctuation tokens);
- self: the token itself (S = I), next: the token after it, prev: the token before it.

The paper averages each over its texts with equal weight per text, as the census does. For a
decoder "next" is always 0: the causal mask forbids looking ahead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CLARK_KEYS = ("first", "sep", "punct", "self", "next", "prev")
PUNCTUATION = frozenset({".", ","})


def clark_averages(weights: np.ndarray, labels: Sequence[str], special: np.ndarray,
                   column_totals: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The six averages of every head in `weights` (…, n, n); `labels` are the tidy tokens looked at ("."
    for a full stop, with any word-boundary marker dropped) and `special` flags the special tokens among
    them (cross-attention's, (…, n, n_source), are the source's: only first, sep and punct mean anything).
    `column_totals` (…, n), the weight each token receives, may be handed in if already summed."""
    weights = np.asarray(weights)
    n = weights.shape[-2]  # the tokens looking (cross-attention's columns are another text's)
    special = np.asarray(special, dtype=bool)
    later_special = special.copy()
    later_special[:1] = False
    punct = np.array([label.strip() in PUNCTUATION for label in labels], dtype=bool)
    if column_totals is None:
        column_totals = weights.sum(axis=-2, dtype=np.float64)   # (…, n): all the weight each token receives
    return {
        "first": column_totals[..., 0] / n,
        "sep": column_totals[..., later_special].sum(axis=-1) / n,
        "punct": column_totals[..., punct].sum(axis=-1) / n,
        "self": np.trace(weights, axis1=-2, axis2=-1, dtype=np.float64) / n,
        "next": np.trace(weights, offset=1, axis1=-2, axis2=-1, dtype=np.float64) / n,
        "prev": np.trace(weights, offset=-1, axis1=-2, axis2=-1, dtype=np.float64) / n,
    }
