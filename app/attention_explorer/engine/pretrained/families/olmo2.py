"""OLMo 2: Llama (llama.py) with its norms moved: none before a sub-layer, one after each, and q and k
RMS-normalised over the whole projection before RoPE.

    per layer:  h = h + RMS_attn(Attn(h))            the sub-layer reads h itself, not a norm of it
                h = h + RMS_mlp(SwiGLU(h))
    in Attn:    q = RMS_q(x·W_Q),  k = RMS_k(x·W_K)  over all heads' numbers at once (n_heads·d_head,
                n_kv_heads·d_head), before the split into heads and RoPE

Architecture: Llama's, with qk_norm "whole"; the layers have no attn_norm or mlp_norm, and
post_attn_norm and post_mlp_norm instead. Biases as Llama (`attention_bias`).
Tensors: Llama's names without input_layernorm; post_attention_layernorm is the norm after
attention, post_feedforward_layernorm the one after the feed-forward, self_attn.{q,k}_norm the
whole-projection norms.
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from . import llama
from .shared import Family


def architecture(fields: Fields) -> Architecture:
    return llama.architecture(fields, "olmo2", qk_norm="whole")


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    d, p = arch.d_model, f"layers.{i}."
    return LayerWeights(
        **llama.attention(arch, src, p), **llama.feed_forward(arch, src, p),
        q_norm=src.get(p + "self_attn.q_norm.weight", (arch.n_heads * arch.d_head,)),
        k_norm=src.get(p + "self_attn.k_norm.weight", (arch.n_kv_heads * arch.d_head,)),
        post_attn_norm=src.get(p + "post_attention_layernorm.weight", (d,)),
        post_mlp_norm=src.get(p + "post_feedforward_layernorm.weight", (d,)))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return llama.model_weights(arch, src, progress, layer)


FAMILY = Family(
    name="olmo2", title="OLMo 2", decoder=True, architectures=("Olmo2ForCausalLM", "Olmo2Model"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=weights,
    tied_by_default=False,
)
