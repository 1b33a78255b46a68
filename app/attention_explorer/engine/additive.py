"""Additive (Bahdanau) attention, to set beside the paper's dot-product attention.

Additive attention scores a query q against a key k with a small one-hidden-layer network,
score(q, k) = v_a · tanh(W₁q + W₂k), then takes softmax over the keys and weights the values, just
as dot-product attention does. The paper notes the two are similar in theory, but the dot product
is one matrix multiplication, much faster in practice. No √d_k here: tanh keeps every hidden unit
between −1 and 1, so a score can never pass Σ|v_a|, however large q and k grow.

Here W₁, W₂ and v_a are not trained but drawn from a seed, so additive attention shows its
mechanics, not a learned story: its weights usually come out flatter than those of the hand-wired
W_Q and W_K, which is itself the point that a scoring function is only as good as its parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .softmax import apply_mask, softmax


@dataclass(frozen=True)
class AdditiveParams:
    """W₁ and W₂ (hidden × d_k) map a query and a key into the hidden layer; v_a reads it out."""

    w_1: np.ndarray  # hidden × d_k, applied to queries
    w_2: np.ndarray  # hidden × d_k, applied to keys
    v_a: np.ndarray  # hidden: the "v" of v·tanh(W₁q + W₂k) (not the values V)

    @property
    def hidden(self) -> int:
        return self.v_a.shape[0]

    @property
    def d_k(self) -> int:
        return self.w_1.shape[1]


def default_additive_params(d_k: int, hidden: int | None = None, seed: int = 0) -> AdditiveParams:
    """Fixed parameters from `seed` (numpy default_rng): W₁, W₂ drawn first, then v_a.

    hidden defaults to d_k. W₁ and W₂ have entries of variance 1/d_k (the usual start for a layer),
    so W₁q has about the size of one entry of q and tanh works in its bending range rather than
    pinned at ±1; v_a is standard normal, so each hidden unit casts a vote of about ±1.
    """
    if d_k < 1:
        raise ValueError(f"d_k must be at least 1, got {d_k}")
    hidden = d_k if hidden is None else hidden
    if hidden < 1:
        raise ValueError(f"hidden must be at least 1, got {hidden}")
    rng = np.random.default_rng(seed)
    w_1 = rng.standard_normal((hidden, d_k)) / math.sqrt(d_k)
    w_2 = rng.standard_normal((hidden, d_k)) / math.sqrt(d_k)
    v_a = rng.standard_normal(hidden)
    return AdditiveParams(w_1, w_2, v_a)


def additive_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, params: AdditiveParams, *,
                       mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """softmax_j(v_a · tanh(W₁q_i + W₂k_j)) · V, with intermediates: hidden, scores, masked, weights, output.

    hidden is n_q × n_k × hidden (tanh of the sum for every query–key pair); mask is True where a
    pair is forbidden, as for dot-product attention.
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if q.shape[1] != params.d_k or k.shape[1] != params.d_k:
        raise ValueError(f"the parameters expect d_k = {params.d_k}, got queries of {q.shape[1]} "
                         f"and keys of {k.shape[1]}")
    from_queries = q @ params.w_1.T                       # n_q × hidden
    from_keys = k @ params.w_2.T                          # n_k × hidden
    hidden = np.tanh(from_queries[:, None, :] + from_keys[None, :, :])
    scores = hidden @ params.v_a                          # n_q × n_k
    masked = apply_mask(scores, mask)
    weights = softmax(masked)
    return {"hidden": hidden, "scores": scores, "masked": masked, "weights": weights, "output": weights @ v}


@dataclass(frozen=True)
class AdditiveComparison:
    """Dot-product and additive attention on the same Q, K, V (and the same mask)."""

    labels: list[str]           # the query words (rows)
    key_labels: list[str]       # the key words (columns)
    params: AdditiveParams
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    mask: np.ndarray | None
    dot_scores: np.ndarray      # q·k (÷ √d_k when the trace scaled)
    dot_weights: np.ndarray
    dot_output: np.ndarray
    additive_scores: np.ndarray
    additive_weights: np.ndarray
    additive_output: np.ndarray


def compare_with_dot_product(trace, head: int = 0, params: AdditiveParams | None = None,
                             seed: int = 0) -> AdditiveComparison:
    """Additive attention on the Q, K, V of one head of `trace` (a Trace or a CrossTrace).

    The dot-product side is read from the trace, never recomputed; the mask is the trace's own
    (a causal mask stays a causal mask). Without `params`, default_additive_params(d_k, seed=seed).
    """
    h = trace.heads[head]
    params = default_additive_params(h.d_k, seed=seed) if params is None else params
    mask = getattr(trace, "mask", None)  # a CrossTrace has no mask
    additive = additive_attention(h.q, h.k, h.v, params, mask=mask)
    if hasattr(trace, "target_labels"):  # cross-attention: target words look at source words
        rows, columns = trace.target_labels, trace.source_labels
    else:
        rows = columns = trace.labels
    return AdditiveComparison(list(rows), list(columns), params, h.q, h.k, h.v, mask, h.scaled, h.weights,
                              h.output, additive["scores"], additive["weights"], additive["output"])
