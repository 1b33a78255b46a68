"""ModernBERT: a pre-LN encoder with rotary positions, global layers between local ones whose window
reaches both ways, and a GeGLU feed-forward.

    h₀ = LN_emb(E[t])                                no position table: positions turn q and k
    per layer:  h = h + Attn(LN₁(h))                 LN₁ is nothing in the first layer (Identity)
                h = h + W_o·(act(x·W_i,1 + b) ⊙ (x·W_i,2 + b)),  x = LN₂(h)   (W_i split in two halves)
    LN(x) = (x − mean x) / √(var x + ε) · w (+ b when `norm_bias`); act from `hidden_activation`
    (gelu: the exact one)
    Attn: q | k | v = x·W_qkv (+ b when `attention_bias`), one key/value head per query head, RoPE
          over the whole head, softmax(q·kᵀ ÷ √d_head)·v, W_o (+ b)
    a "full_attention" layer sees every token; a "sliding_attention" one sees the tokens at most
    `local_attention` ÷ 2 away on either side (|i − j| ≤ local_attention ÷ 2, transformers' mask),
    and its RoPE has a base of its own: `local_rope_theta` (10,000) against `global_rope_theta`
    (160,000) for the global ones, or each kind's in `rope_parameters`
    layer kinds: `layer_types`, else the first layer global and every `global_attn_every_n_layers`-th
    (3) after it, the others local.

Architecture: residual "pre", norm "layer", gated, rotary over the whole head, encoder, windows of
local_attention ÷ 2 + 1 (Architecture.windows: keys less than w away), rope_layers by kind.
Tensors (after an optional `model.` prefix): embeddings.tok_embeddings, embeddings.norm,
layers.{i}.attn_norm (not in layer 0), attn.Wqkv (q, k, v one after another), attn.Wo, mlp_norm,
mlp.Wi (the half that goes through act first), mlp.Wo; biases read when the file has them. The final
norm and a masked-word head (ModernBertForMaskedLM's head and decoder) are not read: the app shows an
encoder's attention, not its outputs.
"""

from __future__ import annotations

from ...errors import ModelError
from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from .shared import Family, activation, even_heads, every_nth_global, layer_types, read_layers, rotary_by_kind

# each kind of layer: the older top-level field of its rotary base, and the base when none is given
BASES = {"full_attention": ("global_rope_theta", 160_000.0), "sliding_attention": ("local_rope_theta", 10_000.0)}


def architecture(fields: Fields) -> Architecture:
    d_model = fields.count("hidden_size")
    n_heads, n_kv_heads, d_head = even_heads(fields, d_model, "ModernBERT")
    if d_head % 2:
        raise ModelError(f"config.json: hidden size ÷ heads = {d_head} must be even (rotary positions pair the "
                         f"halves of each head)")
    n_layers = fields.count("num_hidden_layers")
    every = fields.count("global_attn_every_n_layers", default=3)
    kinds = layer_types(fields, n_layers, every_nth_global(n_layers, every, from_first=True))
    reach = fields.count("local_attention", default=128) // 2  # keys this far away on either side are seen
    windows = tuple(reach + 1 if kind == "sliding_attention" else 0 for kind in kinds)
    bases = rotary_by_kind(fields, BASES, scaled=tuple(BASES))
    return Architecture(
        family="modernbert", n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads, d_model=d_model,
        d_head=d_head, d_ff=fields.count("intermediate_size"), vocab_size=fields.count("vocab_size"),
        norm_eps=fields.epsilon("norm_eps"), max_positions=fields.count("max_position_embeddings"),
        activation=activation(fields, "hidden_activation", default="gelu"), gated=True, rotary_dims=d_head,
        rope_theta=bases["full_attention"][0], rope_layers=tuple(bases[kind] for kind in kinds),
        windows=windows if any(windows) else ())


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    d, f, p = arch.d_model, arch.d_ff, f"layers.{i}."
    qkv, b_qkv = src.get(p + "attn.Wqkv.weight", (3 * d, d)), src.optional(p + "attn.Wqkv.bias", (3 * d,))
    w_i, b_i = src.get(p + "mlp.Wi.weight", (2 * f, d)), src.optional(p + "mlp.Wi.bias", (2 * f,))
    q, k, v = (slice(j * d, (j + 1) * d) for j in range(3))
    gate, up = slice(0, f), slice(f, 2 * f)
    return LayerWeights(
        w_q=qkv[q].T, w_k=qkv[k].T, w_v=qkv[v].T, w_o=src.get(p + "attn.Wo.weight", (d, d)).T,
        b_q=None if b_qkv is None else b_qkv[q], b_k=None if b_qkv is None else b_qkv[k],
        b_v=None if b_qkv is None else b_qkv[v], b_o=src.optional(p + "attn.Wo.bias", (d,)),
        attn_norm=None if i == 0 else src.get(p + "attn_norm.weight", (d,)),
        attn_norm_bias=None if i == 0 else src.optional(p + "attn_norm.bias", (d,)),
        w_gate=w_i[gate].T, w_up=w_i[up].T, w_down=src.get(p + "mlp.Wo.weight", (d, f)).T,
        b_gate=None if b_i is None else b_i[gate], b_up=None if b_i is None else b_i[up],
        b_down=src.optional(p + "mlp.Wo.bias", (d,)),
        mlp_norm=src.get(p + "mlp_norm.weight", (d,)), mlp_norm_bias=src.optional(p + "mlp_norm.bias", (d,)))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d = arch.d_model
    return ModelWeights(
        arch=arch, layers=read_layers(arch, src, progress, layer),
        token_embedding=src.matrix("embeddings.tok_embeddings.weight", (arch.vocab_size, d)),
        embedding_norm=src.get("embeddings.norm.weight", (d,)),
        embedding_norm_bias=src.optional("embeddings.norm.bias", (d,)))


FAMILY = Family(
    name="modernbert", title="ModernBERT", decoder=False,
    architectures=("ModernBertModel", "ModernBertForMaskedLM", "ModernBertForSequenceClassification",
                   "ModernBertForTokenClassification", "ModernBertForQuestionAnswering",
                   "ModernBertForMultipleChoice"),
    prefixes=("model.",), layer_pattern=r"layers\.(\d+)\.", architecture=architecture, weights=weights,
)
