"""GPT-2: the pre-LN decoder with learned positions.

    h₀ = E[t] + P[position]
    per layer:  h = h + Attn(LN₁(h))                  causal: a token sees itself and the tokens before it
                h = h + W_down·gelu_tanh(LN₂(h)·W_up + b_up) + b_down
    next-token scores = LN_f(h_last)·Eᵀ               (the output matrix tied to the embedding, or lm_head)
    gelu_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³))), GPT-2's "gelu_new"

Architecture: residual "pre", norm "layer", decoder, no rotary.
Tensors (after an optional `transformer.` prefix): wte, wpe, h.{i}.ln_1, attn.c_attn (q | k | v side by
side along the output), attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj, ln_f; lm_head when not tied. Its
Conv1D layers store weights (in, out) already, unlike nn.Linear's (out, in).
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from .shared import Family, activation, even_heads, read_layers


def architecture(fields: Fields) -> Architecture:
    d_model = fields.count("n_embd", "hidden_size")
    n_heads, n_kv_heads, d_head = even_heads(fields, d_model, "gpt2")
    return Architecture(
        family="gpt2", n_layers=fields.count("n_layer", "num_hidden_layers"), n_heads=n_heads, n_kv_heads=n_kv_heads,
        d_model=d_model, d_head=d_head, d_ff=fields.count("n_inner", "intermediate_size", default=4 * d_model),
        vocab_size=fields.count("vocab_size"), norm_eps=fields.epsilon("layer_norm_epsilon", "layer_norm_eps"),
        max_positions=fields.count("n_positions", "max_position_embeddings"),
        activation=activation(fields, "activation_function", "hidden_act", default="gelu_new"), decoder=True)


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    d, f, p = arch.d_model, arch.d_ff, f"h.{i}."
    qkv = src.get(p + "attn.c_attn.weight", (d, 3 * d))  # Conv1D: (in, out), q | k | v along out
    qkv_bias = src.get(p + "attn.c_attn.bias", (3 * d,))
    return LayerWeights(
        w_q=qkv[:, :d], w_k=qkv[:, d:2 * d], w_v=qkv[:, 2 * d:],
        b_q=qkv_bias[:d], b_k=qkv_bias[d:2 * d], b_v=qkv_bias[2 * d:],
        w_o=src.get(p + "attn.c_proj.weight", (d, d)), b_o=src.get(p + "attn.c_proj.bias", (d,)),
        attn_norm=src.get(p + "ln_1.weight", (d,)), attn_norm_bias=src.get(p + "ln_1.bias", (d,)),
        mlp_norm=src.get(p + "ln_2.weight", (d,)), mlp_norm_bias=src.get(p + "ln_2.bias", (d,)),
        w_up=src.get(p + "mlp.c_fc.weight", (d, f)), b_up=src.get(p + "mlp.c_fc.bias", (f,)),
        w_down=src.get(p + "mlp.c_proj.weight", (f, d)), b_down=src.get(p + "mlp.c_proj.bias", (d,)),
    )


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d = arch.d_model
    layers = read_layers(arch, src, progress, layer)
    return ModelWeights(
        arch=arch, layers=layers,
        token_embedding=src.matrix("wte.weight", (arch.vocab_size, d)),
        position_embedding=src.get("wpe.weight", (arch.max_positions, d)),
        final_norm=src.get("ln_f.weight", (d,)), final_norm_bias=src.get("ln_f.bias", (d,)),
        lm_head=src.optional_matrix("lm_head.weight", (arch.vocab_size, d)),
    )


FAMILY = Family(
    name="gpt2", title="GPT-2", decoder=True, architectures=("GPT2LMHeadModel", "GPT2Model"),
    prefixes=("transformer.",), layer_pattern=r"h\.(\d+)\.", architecture=architecture, weights=weights,
    plain={"scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False, "scale_attn_weights": True},
)
