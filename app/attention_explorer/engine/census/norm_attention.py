"""Norm-based attention: weight × the length of the vector a head actually moves.

Source: Kobayashi, Kuribayashi, Yokoi & Inui 2020, "Attention is Not Only a Weight: Analyzing
Transformers with Vector Norms" (EMNLP). A head's output for token i is Σ_j α_ij f(x_j), with
f(x) = (x W_V + b_V) W_O restricted to the head (its columns of W_V, its rows of W_O). What it moves
from token j to token i is the vector α_ij f(x_j); its length ‖α_ij f(x_j)‖ = α_ij ‖f(x_j)‖ can tell
a different story than α_ij alone: [CLS], [SEP] and a decoder's first token often get large weights
and small vectors. Over a layer's heads the paper takes the length of the sum,
‖Σ_h α^h_ij f^h(x_j)‖ (W_O's bias is added once to the whole output and moves nothing).

Two calls, one for each kind of model (both pure NumPy):

    reading = pretrained_norm_attention(ptrace, layer)   # a real model's layer (0-based)
    reading = trace_norm_attention(trace)                # a toy model's Trace (or a real layer_trace)
    trace = with_norm_attention(trace)                   # the same, kept in each HeadTrace for the views
    reading.per_head    # (heads, n, n): α_ij · ‖f_h(x_j)‖, rows are the tokens looking
    reading.summed      # (n, n): ‖Σ_h α^h_ij f_h(x_j)‖
    reading.moved       # (heads, n): ‖f_h(x_j)‖, the length of what token j offers each head
    FORMULA             # the formula to show beside the reading

The vectors are the attention's own output, before anything after it: in a family with a norm after
attention (Gemma 2, OLMo 2: h + RMS(Attn(·))) that norm rescales the sum, which this reading leaves
out, as the paper's first form does for BERT's post-LN.

A switched-off (ablated) head moves nothing, so its rows of `per_head` and its part of `summed`
are 0, as in the forward pass. A toy model without W_O concatenates its heads: f_h(x_j) is then
v_h(x_j) placed in the head's own columns.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

import numpy as np

from ..weight_memo import per_weight

FORMULA = "‖α_ij · f(x_j)‖,  f(x) = (x·W_V + b_V)·W_O"
FORMULA_SUMMED = "‖Σ_h α^h_ij · f_h(x_j)‖"


@dataclass(frozen=True)
class NormAttention:
    per_head: np.ndarray   # (heads, n, n)
    summed: np.ndarray     # (n, n)
    moved: np.ndarray      # (heads, n)


def norm_attention(weights: np.ndarray, moved_vectors: np.ndarray) -> NormAttention:
    """The reading from each head's weights (heads, n, n) and the vectors f_h(x_j) it moves
    (heads, n, d_model).

    The sum over heads is computed from each token's Gram matrix G_j[h, h′] = f_h(x_j) · f_h′(x_j):
    ‖Σ_h α^h_ij f_h(x_j)‖² = Σ_hh′ α^h_ij G_j[h, h′] α^h′_ij, which is heads² · n² work instead of
    heads · n² · d_model (and no n × n × d_model array).
    """
    weights = np.asarray(weights, dtype=np.float64)
    moved_vectors = np.asarray(moved_vectors, dtype=np.float64)
    lengths = np.linalg.norm(moved_vectors, axis=-1)                  # (heads, n)
    per_head = weights * lengths[:, None, :]
    gram = np.einsum("hjd,kjd->jhk", moved_vectors, moved_vectors)    # (n, heads, heads)
    mixed = np.einsum("hij,jhk->kij", weights, gram)                  # (heads, n, n): Σ_h α^h_ij G_j[h, k]
    squared = np.einsum("kij,kij->ij", mixed, weights)
    return NormAttention(per_head, np.sqrt(np.maximum(squared, 0.0)), lengths)


def moved_by_heads(values: np.ndarray, w_o: np.ndarray | None, group: int = 1) -> np.ndarray:
    """f_h(x_j) for every query head h and token j: (heads, n, d_out).

    `values` are the value vectors (x W_V + b_V) per key/value head, (kv_heads, n, d_head); with
    shared key/value heads query head h reads kv head h // group. `w_o` is (heads · d_head, d_out);
    None means the heads are concatenated, so f_h(x_j) is v_h(x_j) in the head's own columns.
    """
    values = np.asarray(values, dtype=np.float64)
    kv_heads, n, d_head = values.shape
    heads = kv_heads * group
    per_query = np.repeat(values, group, axis=0)                      # (heads, n, d_head)
    if w_o is None:
        moved = np.zeros((heads, n, heads * d_head))
        for h in range(heads):
            moved[h, :, h * d_head:(h + 1) * d_head] = per_query[h]
        return moved
    w_o = np.asarray(w_o, dtype=np.float64).reshape(heads, d_head, -1)  # each head's rows of W_O
    return np.matmul(per_query, w_o)


def moved_lengths(values: np.ndarray, w_o_rows: np.ndarray | None, gram: np.ndarray | None = None) -> np.ndarray:
    """‖f_h(x_j)‖ for one head h and every token j, (n,): the length of what each token's value vector
    (n, d_head) becomes through the head's rows of W_O (d_head, d_out), or itself when there is no W_O.
    Worked out from those rows' Gram matrix (`gram`, when it is known: w_o_grams), n · d_head² work
    and no (n, d_out) array: a real model's layer reads it for every head of a long text."""
    values = np.asarray(values, dtype=np.float64)
    if w_o_rows is None and gram is None:
        return np.linalg.norm(values, axis=1)
    if gram is None:
        rows = np.asarray(w_o_rows, dtype=np.float64)
        gram = rows @ rows.T
    squared = np.einsum("nd,nd->n", values @ gram, values)
    return np.sqrt(np.maximum(squared, 0.0))


@per_weight
def w_o_grams(w_o: np.ndarray, heads: int) -> np.ndarray:
    """Each head's rows of W_O times their transpose, (heads, d_head, d_head) float64: the same for every
    text, so made once per layer of a model (a layer's trace made them again each time it was shown:
    100 ms per layer of SmolLM2 on a busy machine)."""
    rows = np.asarray(w_o, dtype=np.float64).reshape(heads, -1, w_o.shape[1])
    return np.matmul(rows, rows.transpose(0, 2, 1))


def _without(weights: np.ndarray, off: Collection[int]) -> np.ndarray:
    if not off:
        return weights
    weights = np.array(weights, dtype=np.float64)
    weights[sorted(off)] = 0.0
    return weights


def _layer_values(ptrace, layer: int) -> np.ndarray:
    """The value vectors x W_V + b_V of a real model's layer, (kv_heads, n, d_head)."""
    arch, weights = ptrace.model.arch, ptrace.model.layers[layer]
    x = ptrace.attention_input(layer)
    values = x @ weights.w_v  # float32 by float32: BLAS (a float64 × float32 product is NumPy's slow loop)
    if weights.b_v is not None:
        values += weights.b_v
    return values.reshape(x.shape[0], arch.n_kv_heads, arch.d_head).transpose(1, 0, 2)


def _switched_off(ptrace, layer: int) -> set[int]:
    return {head for lay, head in ptrace.ablated if lay == layer}


def pretrained_norm_attention(ptrace, layer: int) -> NormAttention:
    """The reading of layer `layer` (0-based) of a real model's forward (a PretrainedTrace)."""
    arch, weights = ptrace.model.arch, ptrace.model.layers[layer]
    values = _layer_values(ptrace, layer)
    return norm_attention(_without(ptrace.layer_weights(layer), _switched_off(ptrace, layer)),
                          moved_by_heads(values, weights.w_o, arch.group))


def pretrained_moved_lengths(ptrace, layer: int) -> np.ndarray:
    """‖f_h(x_j)‖ of every head h and token j of a real model's layer, (heads, n) float32, 0 for a
    head switched off (it moves nothing): weights × these are the layer's norm-based attention,
    without the summed reading's n × n × heads² work."""
    arch, weights = ptrace.model.arch, ptrace.model.layers[layer]
    values = _layer_values(ptrace, layer)
    off = _switched_off(ptrace, layer)
    lengths = np.zeros((arch.n_heads, values.shape[1]), dtype=np.float32)
    grams = w_o_grams(weights.w_o, arch.n_heads)
    for h in range(arch.n_heads):
        if h not in off:
            lengths[h] = moved_lengths(values[h // arch.group], None, grams[h])
    return lengths


def with_norm_attention(trace):
    """`trace` with each head's norm-based attention and moved-vector lengths filled in (HeadTrace.norm,
    .moved_norm), so the views draw it as one more matrix of the trace."""
    reading = trace_norm_attention(trace)
    heads = tuple(replace(head, norm=reading.per_head[h], moved_norm=reading.moved[h])
                  for h, head in enumerate(trace.heads))
    return replace(trace, heads=heads)


def trace_norm_attention(trace) -> NormAttention:
    """The reading of a Trace: a toy model's, or one layer of a real model (`ptrace.layer_trace(layer)`), its
    heads' v and weights and W_O when there is one. Read it before words are merged or tokens hidden:
    the vectors belong to tokens."""
    weights = np.stack([head.weights for head in trace.heads])
    values = np.stack([head.v for head in trace.heads])
    return norm_attention(_without(weights, trace.ablated_heads), moved_by_heads(values, trace.w_o))
