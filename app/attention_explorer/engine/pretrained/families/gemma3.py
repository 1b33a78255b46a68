"""Gemma 3 (its text model): Gemma 2 (gemma2.py) with each head's query and key RMS-normalised before
RoPE, no caps unless the file sets them, and rotary positions of their own base in local and global layers.

    q_h = RMS_q(x·W_Q)_h,  k_h = RMS_k(x·W_K)_h    over each head's d_head numbers, scaling by 1 + w as
                                                  Gemma's norms, one weight for every head (as Qwen3); then RoPE
    RoPE base of a "sliding_attention" layer: b_local (`rope_local_base_freq`, 10,000);
         of a "full_attention" layer: b_global (`rope_theta`, 1,000,000), with a linear `rope_scaling`
         of factor f its angles position ÷ f · b_global^(−2i/d); newer files give each kind's base, type
         and factor in `rope_parameters`, by kind
    scores = q·k ÷ √s,  s = `query_pre_attn_scalar`   (capped as Gemma 2's only when
                                                       `attn_logit_softcapping` is set: null by default)
    next-token scores capped as Gemma 2's only when `final_logit_softcapping` is set (null by default)
    layer kinds: `layer_types`, else five sliding layers and then a global one, over and over
    (`sliding_window_pattern`, 6); the sliding ones see a `sliding_window` of keys by Mistral's rule.

Architecture: Gemma 2's, with qk_norm "head" and rope_layers (each layer's base and factor).
Tensors: Gemma 2's names, plus Qwen3's self_attn.q_norm.weight and self_attn.k_norm.weight (d_head each).
Only the text model opens (Gemma3ForCausalLM, model_type "gemma3_text"); a "gemma3" folder, the text
model with its vision model, is refused by name (families/__init__.py).
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from . import gemma2, llama, qwen3
from .shared import Family, Rotary, every_nth_global, layer_types, rotary_by_kind, rotary_dims

# each kind of layer: the older top-level field of its rotary base, and the base when none is given
BASES = {"full_attention": ("rope_theta", 1_000_000.0), "sliding_attention": ("rope_local_base_freq", 10_000.0)}


def architecture(fields: Fields) -> Architecture:
    n_layers = fields.count("num_hidden_layers")
    every = fields.count("sliding_window_pattern", "_sliding_window_pattern", default=6)
    kinds = layer_types(fields, n_layers, every_nth_global(n_layers, every))
    bases = rotary_by_kind(fields, BASES, scaled=("full_attention",))

    def rope(fields: Fields, d_head: int) -> Rotary:  # every dim of a head is turned
        return Rotary(bases["full_attention"][0], rotary_dims(fields, d_head, 1.0),
                      fields.count("max_position_embeddings"))

    return gemma2.architecture(fields, "gemma3_text", kinds, caps=(None, None), rope=rope, qk_norm="head",
                               rope_layers=tuple(bases[kind] for kind in kinds))


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    return gemma2.layer(arch, src, i, **qwen3.head_norms(arch, src, i))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return llama.model_weights(arch, src, progress, layer)


FAMILY = Family(
    name="gemma3_text", title="Gemma 3", decoder=True, architectures=("Gemma3ForCausalLM", "Gemma3TextModel"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=weights,
    plain={"partial_rotary_factor": 1.0},
)
