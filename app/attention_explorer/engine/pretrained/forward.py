"""One float32 forward pass of a BERT, GPT-2 or Llama model, keeping every layer's attention weights.

BERT:  h = LN(e);  per layer h = LN(h + Attn(h));  h = LN(h + FFN(h))           (post-LN, GELU erf)
GPT-2: h = e;      per layer h = h + Attn(LN(h));  h = h + FFN(LN(h));  LN(h)   (pre-LN, GELU tanh)
Llama: h = e;      per layer h = h + Attn(RMS(h)); h = h + SwiGLU(RMS(h)); RMS(h) (RoPE on q and k)
Attn splits q, k, v into heads; with grouped key/value heads query head h reads kv head h // group.
An ablated head's output is zeroed before W_O, so every later layer (and the next token) changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ops import ACTIVATIONS, apply_rope, layer_norm, masked_softmax, rms_norm, rope_tables
from .progress import Progress, report
from .weights import Architecture, LayerWeights, ModelWeights


@dataclass(frozen=True)
class Projections:
    """One layer's queries, keys and values split into heads: (heads, n, d_head)."""

    q: np.ndarray         # after RoPE for Llama
    k: np.ndarray         # (kv_heads, n, d_head), after RoPE for Llama
    v: np.ndarray
    q_raw: np.ndarray     # before RoPE (the same arrays as q and k without it)
    k_raw: np.ndarray


@dataclass(frozen=True)
class ForwardResult:
    weights: np.ndarray            # (layers, heads, n, n) float32, rows sum to 1
    layer_inputs: list[np.ndarray]  # the residual stream entering each layer, n × d_model
    attn_inputs: list[np.ndarray]   # what each layer's W_Q, W_K, W_V read (normalised first when pre-LN)
    next_logits: np.ndarray | None  # decoders: the logits after the last token, vocab


def norm(arch: Architecture, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    return (rms_norm if arch.family == "llama" else layer_norm)(x, weight, bias, arch.norm_eps)


def _linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    y = x @ w
    if b is not None:
        y += b
    return y


def _split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(n, heads·d) → (heads, n, d), contiguous: NumPy hands stacked products of contiguous
    arrays to BLAS, and strided ones to a slower loop of its own."""
    n = x.shape[0]
    return np.ascontiguousarray(x.reshape(n, heads, -1).transpose(1, 0, 2))


def project(arch: Architecture, layer: LayerWeights, x: np.ndarray, rope: tuple | None) -> Projections:
    """Q, K, V of every head of `layer` on its input `x` (n × d_model)."""
    qkv = _linear(x, layer.w_qkv, layer.b_qkv)                  # (n, q | k | v)
    q_end, k_end = layer.w_q.shape[1], layer.w_q.shape[1] + layer.w_k.shape[1]
    q_raw = _split_heads(qkv[:, :q_end], arch.n_heads)
    k_raw = _split_heads(qkv[:, q_end:k_end], arch.n_kv_heads)
    v = _split_heads(qkv[:, k_end:], arch.n_kv_heads)
    if rope is None:
        return Projections(q_raw, k_raw, v, q_raw, k_raw)
    return Projections(apply_rope(q_raw, *rope), apply_rope(k_raw, *rope), v, q_raw, k_raw)


def head_scores(arch: Architecture, q: np.ndarray, k: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Q·Kᵀ of every query head (heads, n, n), each against its shared key head."""
    n = q.shape[1]
    grouped_q = q.reshape(arch.n_kv_heads, arch.group, n, arch.d_head)
    keys_t = k.transpose(0, 2, 1)[:, None]                   # (kv_heads, 1, d_head, n)
    target = None if out is None else out.reshape(arch.n_kv_heads, arch.group, n, n)
    return np.matmul(grouped_q, keys_t, out=target).reshape(arch.n_heads, n, n)


def head_outputs(arch: Architecture, weights: np.ndarray, v: np.ndarray) -> np.ndarray:
    """weights · V per query head (heads, n, d_head), V shared within each group."""
    n = weights.shape[-1]
    grouped = weights.reshape(arch.n_kv_heads, arch.group, n, n)
    return np.matmul(grouped, v[:, None]).reshape(arch.n_heads, n, arch.d_head)


def merge_heads(outputs: np.ndarray) -> np.ndarray:
    heads, n, d = outputs.shape
    return outputs.transpose(1, 0, 2).reshape(n, heads * d)


def rope_for(arch: Architecture, n: int) -> tuple | None:
    return rope_tables(n, arch.d_head, arch.rope_theta) if arch.family == "llama" else None


def embed(model: ModelWeights, ids: np.ndarray) -> np.ndarray:
    h = model.token_embedding[ids].astype(np.float32)
    if model.position_embedding is not None:
        h += model.position_embedding[:len(ids)]
    if model.type_embedding is not None:
        h += model.type_embedding
    if model.embedding_norm is not None:
        h = layer_norm(h, model.embedding_norm, model.embedding_norm_bias, model.arch.norm_eps)
    return h


def _feed_forward(arch: Architecture, layer: LayerWeights, x: np.ndarray) -> np.ndarray:
    hidden = _linear(x, layer.w_up, layer.b_up)
    if layer.w_gate is not None:                      # SwiGLU: silu(x·W_gate) ⊙ (x·W_up)
        hidden *= ACTIVATIONS[arch.activation](x @ layer.w_gate)
    else:
        hidden = ACTIVATIONS[arch.activation](hidden)
    return _linear(hidden, layer.w_down, layer.b_down)


def forward(model: ModelWeights, ids: np.ndarray, ablate: frozenset[tuple[int, int]] = frozenset(),
            progress: Progress | None = None) -> ForwardResult:
    """Run `ids` through `model`; `ablate` holds (layer, head) pairs whose attention output is zeroed.

    `progress` hears of every layer and may cancel between layers (see progress.py).
    """
    arch = model.arch
    n = len(ids)
    rope = rope_for(arch, n)
    scale = np.float32(1 / np.sqrt(arch.d_head))
    weights = np.empty((arch.n_layers, arch.n_heads, n, n), dtype=np.float32)
    layer_inputs, attn_inputs = [], []
    h = embed(model, ids)
    for index, layer in enumerate(model.layers):
        report(progress, index / arch.n_layers, f"layer {index + 1} of {arch.n_layers}")
        layer_inputs.append(h)
        x = norm(arch, h, layer.attn_norm, layer.attn_norm_bias) if arch.pre_norm else h
        attn_inputs.append(x)
        p = project(arch, layer, x, rope)
        # Q scaled before the product: n × d values to scale instead of n × n.
        scores = head_scores(arch, p.q * scale, p.k, out=weights[index])
        masked_softmax(scores, arch.is_decoder)
        outputs = head_outputs(arch, scores, p.v)
        for layer_index, head in ablate:
            if layer_index == index:
                outputs[head] = 0
        attended = _linear(merge_heads(outputs), layer.w_o, layer.b_o)
        if arch.pre_norm:
            h = h + attended
            h = h + _feed_forward(arch, layer, norm(arch, h, layer.mlp_norm, layer.mlp_norm_bias))
        else:
            h = norm(arch, h + attended, layer.attn_norm, layer.attn_norm_bias)
            h = norm(arch, h + _feed_forward(arch, layer, h), layer.mlp_norm, layer.mlp_norm_bias)
    next_logits = None
    if arch.is_decoder:
        last = norm(arch, h[-1:], model.final_norm, model.final_norm_bias)[0]
        head = model.lm_head if model.lm_head is not None else model.token_embedding
        next_logits = head @ last
    return ForwardResult(weights, layer_inputs, attn_inputs, next_logits)
