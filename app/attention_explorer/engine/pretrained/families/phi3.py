"""Phi-3 (and Phi-4-mini): Llama (llama.py) with q, k, v in one matrix and gate and up in another.

    [q | k | v] = x·W_qkv          W_qkv: n_heads·d_head + 2·n_kv_heads·d_head outputs, in that order
    [g | u] = x·W_gate_up          W_gate_up: 2·d_ff outputs, the gate's first
    feed-forward = W_down·(silu(g) ⊙ u)

The fused matrices are cut into the shared W_Q, W_K, W_V, W_gate and W_up (views, no copies), so the
forward is Llama's. RoPE may turn only part of each head (`partial_rotary_factor`, Phi-4-mini's
0.75: see gpt_neox.py); a `sliding_window`, when set, applies to every layer, by Mistral's rule.
Rotary scaling as transformers' Phi3Config reads it: plain, or the "longrope" of the 128k models
(older names "su" and "yarn" read as longrope; rope.LongRope), its original context the top-level
`original_max_position_embeddings` (4,096 when absent), whatever the rope parameters say. A
generation reads its whole text again when it grows past that context, as Phi3ForCausalLM's
prepare_inputs_for_generation drops its cache there (decode.py).
Tensors: Llama's names with self_attn.qkv_proj for q_proj, k_proj and v_proj, and mlp.gate_up_proj for
gate_proj and up_proj.
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from . import llama
from .shared import Family, RopeRules, Rotary, linear, rotary, sliding_windows

ROPE = RopeRules(kinds=("longrope",), aliases={"su": "longrope", "yarn": "longrope"}, original=4096, rereads=True)


def phi3_rotary(fields: Fields, d_head: int) -> Rotary:
    return rotary(fields, d_head, rules=ROPE)


def architecture(fields: Fields) -> Architecture:
    n_layers = fields.count("num_hidden_layers")
    return llama.architecture(fields, "phi3", rope=phi3_rotary,
                              windows=sliding_windows(fields, n_layers, by_layer=False))


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    d, f, p = arch.d_model, arch.d_ff, f"layers.{i}."
    dq, dkv = arch.n_heads * arch.d_head, arch.n_kv_heads * arch.d_head
    qkv = linear(src, p + "self_attn.qkv_proj.weight", dq + 2 * dkv, d)          # (in, q | k | v)
    gate_up = linear(src, p + "mlp.gate_up_proj.weight", 2 * f, d)               # (in, gate | up)
    return LayerWeights(
        w_q=qkv[:, :dq], w_k=qkv[:, dq:dq + dkv], w_v=qkv[:, dq + dkv:],
        w_o=linear(src, p + "self_attn.o_proj.weight", d, dq),
        w_gate=gate_up[:, :f], w_up=gate_up[:, f:], w_down=linear(src, p + "mlp.down_proj.weight", d, f),
        attn_norm=src.get(p + "input_layernorm.weight", (d,)),
        mlp_norm=src.get(p + "post_attention_layernorm.weight", (d,)))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return llama.model_weights(arch, src, progress, layer)


FAMILY = Family(
    name="phi3", title="Phi-3", decoder=True, architectures=("Phi3ForCausalLM", "Phi3Model"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=weights,
    tied_by_default=False,
)
