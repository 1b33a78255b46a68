"""How spread out a head's attention is: the entropy of each row, against uniform attention.

Source: Clark et al. 2019, "What Does BERT Look At?", section 3.3 (`clarkkev/attention-analysis`,
General_Analysis.ipynb): each row is smoothed, A′ = 0.9999 · A + 0.0001 / n, so that log 0 never
occurs; a head's entropy is the mean over its rows of −Σ_j A′[i, j] · ln A′[i, j] (in nats), and the
baseline is the entropy of uniform attention, ln n. Low entropy: the head looks at few tokens; near
the baseline: it spreads its attention over all of them.

In a decoder row i can see only its first i + 1 tokens, so the smoothing spreads over those and the
row's uniform baseline is ln(i + 1) (for an encoder this is the paper's formula exactly). In
cross-attention every target row sees all of the source's tokens: its baseline is ln n_source.
"""

from __future__ import annotations

import numpy as np

SMOOTHING = 1e-4  # the paper's 0.0001


def visible_keys(n: int, causal: bool) -> np.ndarray:
    """How many tokens each row can look at: all n, or i + 1 under the causal mask."""
    return np.arange(1, n + 1, dtype=np.float64) if causal else np.full(n, float(n))


def attention_entropy(weights: np.ndarray, causal: bool = False) -> np.ndarray:
    """The mean row entropy (nats) of every head in `weights` (…, n, n), smoothed as the paper does;
    (…, n, n_keys) for cross-attention, whose rows see every one of the other text's n_keys tokens.

    Worked in float32 in place (it runs on every layer of every text of a census), and summed over
    the whole head at once: the mean of the rows' sums is the head's sum over n. Under the causal
    mask a row's forbidden cells hold exactly 0, so after smoothing each holds the row's share s and
    adds s·ln s to the sum: that is taken away again instead of masking n² cells.
    """
    weights = np.asarray(weights)
    n, keys = weights.shape[-2:]
    share = SMOOTHING / visible_keys(n, causal) if causal else np.full(n, SMOOTHING / keys)  # what each visible
    smoothed = np.multiply(weights, np.float32(1 - SMOOTHING), dtype=np.float32)            # cell gets, per row
    smoothed += share.astype(np.float32)[:, None]
    logs = np.log(smoothed)
    flat = smoothed.reshape(*smoothed.shape[:-2], 1, n * keys)
    total = np.matmul(flat, logs.reshape(*logs.shape[:-2], n * keys, 1))[..., 0, 0].astype(np.float64)
    if causal:
        hidden = n - np.arange(1, n + 1)                              # forbidden cells of each row
        total -= float((hidden * (share * np.log(share))).sum())
    return -total / n


def uniform_entropy(n: int, causal: bool = False) -> float:
    """The baseline: the mean row entropy of uniform attention, ln n (or the mean of ln(i + 1))."""
    return float(np.log(visible_keys(n, causal)).mean())
