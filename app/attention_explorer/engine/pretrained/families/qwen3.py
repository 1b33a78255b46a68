"""Qwen3: Llama (llama.py) with each head's query and key RMS-normalised before RoPE.

    q_h = RMS_q(x·W_Q)_h,  k_h = RMS_k(x·W_K)_h      over each head's own d_head numbers, one weight
    vector of d_head shared by every query head (RMS_q) and every key/value head (RMS_k); then RoPE.

The normalised q and k are what RoPE turns and what the trace shows as q and k before their turn.
A head's width is its own (`head_dim`, often more than hidden size ÷ heads). Biases as Llama
(`attention_bias`); the sliding window as Qwen2 (qwen2.py).
Tensors: Llama's names, plus self_attn.q_norm.weight and self_attn.k_norm.weight (d_head each).
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from . import llama, qwen2
from .shared import Family


def architecture(fields: Fields) -> Architecture:
    return llama.architecture(fields, "qwen3", qk_norm="head", windows=qwen2.windows(fields))


def head_norms(arch: Architecture, src: TensorSource, i: int) -> dict:
    """Layer i's per-head q and k RMSNorm weights (self_attn.q_norm, k_norm: d_head each)."""
    p = f"layers.{i}.self_attn."
    return {"q_norm": src.get(p + "q_norm.weight", (arch.d_head,)),
            "k_norm": src.get(p + "k_norm.weight", (arch.d_head,))}


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    return llama.layer(arch, src, i, **head_norms(arch, src, i))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return llama.model_weights(arch, src, progress, layer)


FAMILY = Family(
    name="qwen3", title="Qwen3", decoder=True, architectures=("Qwen3ForCausalLM", "Qwen3Model"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=weights,
    tied_by_default=False,
)
