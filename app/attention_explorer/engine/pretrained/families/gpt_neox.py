"""GPT-NeoX and Pythia: a pre-LN decoder whose two sub-layers read the same stream side by side, with
rotary positions on part of each head and q, k, v fused head by head.

    per layer:  h = h + Attn(LN₁(h)) + MLP(LN₂(h))    parallel residual (`use_parallel_residual`,
                                                       else Llama's order: h = h + Attn(LN₁(h)),
                                                       then h = h + MLP(LN₂(h)))
    MLP(x) = W_down·gelu(x·W_up + b_up) + b_down       LayerNorms with biases, biases everywhere
    RoPE turns only the first r = ⌊d_head·rotary_pct⌋ dims of each head (Pythia: a quarter), pairing
    i with i + r/2 among them; the other d_head − r pass unturned; scaled as Llama's may be (llama.py)
    next-token scores = LN_f(h_last)·W_outᵀ           (embed_out, not tied by default)

The fused query_key_value matrix holds, for each head in turn, its d_head query rows, then its key
rows, then its value rows (3·d_head rows a head); the reader gathers them into W_Q, W_K and W_V.
Architecture: residual "parallel" (or "pre"), norm "layer", rotary_dims r, activation from
`hidden_act` (exact gelu), decoder.
Tensors (after an optional `gpt_neox.` prefix): embed_in, layers.{i}.input_layernorm,
post_attention_layernorm, attention.query_key_value, attention.dense, mlp.dense_h_to_4h,
mlp.dense_4h_to_h, final_layer_norm, and embed_out (the output matrix, outside the prefix).
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from .shared import Family, activation, even_heads, projection, read_layers, rotary


def architecture(fields: Fields) -> Architecture:
    d_model = fields.count("hidden_size")
    n_heads, n_kv_heads, d_head = even_heads(fields, d_model, "gpt_neox")
    return Architecture(
        family="gpt_neox", n_layers=fields.count("num_hidden_layers"), n_heads=n_heads, n_kv_heads=n_kv_heads,
        d_model=d_model, d_head=d_head, d_ff=fields.count("intermediate_size", default=4 * d_model),
        vocab_size=fields.count("vocab_size"), norm_eps=fields.epsilon("layer_norm_eps"),
        activation=activation(fields, "hidden_act", default="gelu"), decoder=True,
        residual="parallel" if fields.flag("use_parallel_residual", default=True) else "pre",
        **rotary(fields, d_head, fraction_default=0.25).switches())


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    d, f, heads, dh, p = arch.d_model, arch.d_ff, arch.n_heads, arch.d_head, f"layers.{i}."
    fused = src.get(p + "attention.query_key_value.weight", (3 * d, d)).reshape(heads, 3, dh, d)
    bias = src.optional(p + "attention.query_key_value.bias", (3 * d,))
    bias = None if bias is None else bias.reshape(heads, 3, dh)
    w_q, w_k, w_v = (fused[:, part].reshape(d, d).T for part in range(3))        # rows head by head → (in, out)
    b_q, b_k, b_v = (None, None, None) if bias is None else (bias[:, part].reshape(d) for part in range(3))
    return LayerWeights(
        w_q=w_q, w_k=w_k, w_v=w_v, b_q=b_q, b_k=b_k, b_v=b_v,
        w_o=projection(src, p + "attention.dense.weight", d, d), b_o=src.optional(p + "attention.dense.bias", (d,)),
        attn_norm=src.get(p + "input_layernorm.weight", (d,)), attn_norm_bias=src.get(p + "input_layernorm.bias", (d,)),
        mlp_norm=src.get(p + "post_attention_layernorm.weight", (d,)),
        mlp_norm_bias=src.get(p + "post_attention_layernorm.bias", (d,)),
        w_up=projection(src, p + "mlp.dense_h_to_4h.weight", f, d), b_up=src.get(p + "mlp.dense_h_to_4h.bias", (f,)),
        w_down=projection(src, p + "mlp.dense_4h_to_h.weight", d, f),
        b_down=src.get(p + "mlp.dense_4h_to_h.bias", (d,)))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d = arch.d_model
    layers = read_layers(arch, src, progress, layer)
    return ModelWeights(
        arch=arch, layers=layers, token_embedding=src.matrix("embed_in.weight", (arch.vocab_size, d)),
        final_norm=src.get("final_layer_norm.weight", (d,)), final_norm_bias=src.get("final_layer_norm.bias", (d,)),
        lm_head=src.optional_matrix("embed_out.weight", (arch.vocab_size, d)))


FAMILY = Family(
    name="gpt_neox", title="GPT-NeoX / Pythia", decoder=True, architectures=("GPTNeoXForCausalLM", "GPTNeoXModel"),
    prefixes=("gpt_neox.",), layer_pattern=r"layers\.(\d+)\.", architecture=architecture, weights=weights,
    output_name="embed_out.weight", tied_by_default=False,
)
