"""Gemma 2: Gemma (gemma.py) with scores and next-token scores soft-capped, sliding-window layers
between global ones, a norm before and after each sub-layer, and its own score scale.

    scores = c·tanh((q·k ÷ √s) ÷ c),  s = `query_pre_attn_scalar`, c = `attn_logit_softcapping`
                                      (before the mask; null: no cap)
    per layer:  h = h + RMS_post_attn(Attn(RMS_in(h)))
                h = h + RMS_post_ff(GeGLU(RMS_pre_ff(h)))
    next-token scores = c_f·tanh(RMS_f(h_last)·Eᵀ ÷ c_f),  c_f = `final_logit_softcapping`
    layers named "sliding_attention" in `layer_types` (by default every other one, from the first)
    see a `sliding_window` of keys by Mistral's rule (mistral.py); the others see every key before
    them. RMS scales by 1 + w and embeddings by √d_model, as Gemma.

Architecture: Gemma's, with query_scalar s, attn_softcap c, final_softcap c_f, windows per layer;
the layers have post_attn_norm and post_mlp_norm. The activation is `hidden_activation`.
Tensors: Llama's names, where post_attention_layernorm is the norm after attention;
pre_feedforward_layernorm and post_feedforward_layernorm surround the feed-forward.
"""

from __future__ import annotations

import math

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from . import llama
from .gemma import gemma_activation
from .shared import Family, every_nth_global, layer_types, refuse_true, sliding_windows


def _cap(fields: Fields, name: str, default: float | None) -> float:
    return 0.0 if fields.raw(name, default=default) is None else fields.positive_number(name, default=default)


def architecture(fields: Fields, family: str = "gemma2", kinds: list[str] | None = None,
                 caps: tuple[float | None, float | None] = (50.0, 30.0), **switches) -> Architecture:
    """Gemma 2's sizes; a family built on it (Gemma 3) gives its own layer `kinds` (else `layer_types`,
    by default every other layer global), the score and next-token `caps` a file that names none has
    (None: no cap), and `switches` what it adds (llama.architecture's)."""
    refuse_true(fields, "use_bidirectional_attention")
    n_layers = fields.count("num_hidden_layers")
    kinds = kinds or layer_types(fields, n_layers, every_nth_global(n_layers, 2))
    return llama.architecture(
        fields, family, act=gemma_activation(fields, "hidden_activation"), norm_offset=1.0,
        embed_scale=math.sqrt(fields.count("hidden_size")),
        query_scalar=fields.positive_number("query_pre_attn_scalar", default=256),
        attn_softcap=_cap(fields, "attn_logit_softcapping", caps[0]),
        final_softcap=_cap(fields, "final_logit_softcapping", caps[1]),
        windows=sliding_windows(fields, n_layers, kinds, default_window=4096), **switches)


def layer(arch: Architecture, src: TensorSource, i: int, **extra) -> LayerWeights:
    """Layer `i`: attention, feed-forward and the norms around them; `extra` adds a family's own."""
    d, p = arch.d_model, f"layers.{i}."
    return LayerWeights(
        **llama.attention(arch, src, p), **llama.feed_forward(arch, src, p),
        attn_norm=src.get(p + "input_layernorm.weight", (d,)),
        post_attn_norm=src.get(p + "post_attention_layernorm.weight", (d,)),
        mlp_norm=src.get(p + "pre_feedforward_layernorm.weight", (d,)),
        post_mlp_norm=src.get(p + "post_feedforward_layernorm.weight", (d,)), **extra)


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return llama.model_weights(arch, src, progress, layer)


FAMILY = Family(
    name="gemma2", title="Gemma 2", decoder=True, architectures=("Gemma2ForCausalLM", "Gemma2Model"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=weights,
)
