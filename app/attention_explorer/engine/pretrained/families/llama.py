"""Llama (and SmolLM2, TinyLlama, …): the decoder layout that Mistral, Qwen2, Qwen3, OLMo 2, Gemma,
Gemma 2 and Gemma 3 build on; their modules say only what they change.

    h₀ = E[t]                                           no position table: positions turn q and k
    per layer:  h = h + Attn(RMS₁(h))
                h = h + W_down·(silu(x·W_gate) ⊙ x·W_up),  x = RMS₂(h)     (SwiGLU)
    next-token scores = RMS_f(h_last)·Eᵀ (tied) or ·W_lmᵀ
    RMS(x) = x / √(mean x² + ε) · w                     no mean taken, no bias
    RoPE: q and k of each head turned by position p: x'ᵢ = xᵢ·cos pθᵢ − x_{i+d/2}·sin pθᵢ and
          x'_{i+d/2} = x_{i+d/2}·cos pθᵢ + xᵢ·sin pθᵢ, θᵢ = base^(−2i/d) (HF's rotate-half pairing)
    grouped key/value heads: query head h reads key/value head h ÷ (heads ÷ kv_heads)

Architecture: residual "pre", norm "rms", gated feed-forward (activation from `hidden_act`, silu),
rotary over the whole head (`rope_theta`), decoder. The rotary scalings transformers' Llama reads
(rope_type in `rope_parameters` or `rope_scaling`: linear, dynamic, yarn, longrope, llama3) scale θᵢ
as rope.py writes out, for it and the families built on it (Phi-3: longrope only). Optional biases of
q, k, v and o are read when the file has them (`attention_bias`).
Tensors (after an optional `model.` prefix): embed_tokens, layers.{i}.self_attn.{q,k,v,o}_proj,
mlp.{gate,up,down}_proj, input_layernorm, post_attention_layernorm, norm; lm_head when not tied.
A GGUF file is read by these same functions (gguf_families.py maps its names to these).
"""

from __future__ import annotations

from collections.abc import Callable

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from .shared import Family, Rotary, activation, attention_heads, projection, read_layers, rotary

LAYERS = r"layers\.(\d+)\."


def architecture(fields: Fields, family: str = "llama", act: str | None = None,
                 rope: Callable[[Fields, int], Rotary] = rotary, **switches) -> Architecture:
    """A Llama-layout decoder's sizes; `act` the activation when the family reads it otherwise than from
    `hidden_act`, `rope` how it reads its rotary positions from the fields and d_head (any rope type
    transformers' Llama reads, by default), `switches` what the family adds (Architecture's fields)."""
    d_model = fields.count("hidden_size")
    n_heads, n_kv_heads, d_head = attention_heads(fields, d_model)
    return Architecture(
        family=family, n_layers=fields.count("num_hidden_layers"), n_heads=n_heads, n_kv_heads=n_kv_heads,
        d_model=d_model, d_head=d_head, d_ff=fields.count("intermediate_size"), vocab_size=fields.count("vocab_size"),
        norm_eps=fields.epsilon("rms_norm_eps"), activation=act or activation(fields, "hidden_act", default="silu"),
        decoder=True, norm="rms", gated=True, **rope(fields, d_head).switches(), **switches)


def attention(arch: Architecture, src: TensorSource, p: str, biases: str = "optional") -> dict:
    """W_Q, W_K, W_V, W_O of layer prefix `p` (…self_attn.{q,k,v,o}_proj) and their biases: "optional"
    (read when the file has them: `attention_bias`), "qkv" (q, k and v must have them, o has none:
    Qwen2), "all" or "none"."""
    d, dq, dkv = arch.d_model, arch.n_heads * arch.d_head, arch.n_kv_heads * arch.d_head
    a = p + "self_attn."
    weights = {"w_q": projection(src, a + "q_proj.weight", dq, d), "w_k": projection(src, a + "k_proj.weight", dkv, d),
               "w_v": projection(src, a + "v_proj.weight", dkv, d), "w_o": projection(src, a + "o_proj.weight", d, dq)}
    for name, size in (("q", dq), ("k", dkv), ("v", dkv), ("o", d)):
        tensor = f"{a}{name}_proj.bias"
        if biases == "optional":
            weights[f"b_{name}"] = src.optional(tensor, (size,))
        elif biases == "all" or (biases == "qkv" and name != "o"):
            weights[f"b_{name}"] = src.get(tensor, (size,))
    return weights


def feed_forward(arch: Architecture, src: TensorSource, p: str) -> dict:
    """W_gate, W_up, W_down of layer prefix `p` (…mlp.{gate,up,down}_proj)."""
    d, f = arch.d_model, arch.d_ff
    return {"w_gate": projection(src, p + "mlp.gate_proj.weight", f, d),
            "w_up": projection(src, p + "mlp.up_proj.weight", f, d),
            "w_down": projection(src, p + "mlp.down_proj.weight", d, f)}


def layer(arch: Architecture, src: TensorSource, i: int, biases: str = "optional", **extra) -> LayerWeights:
    """Layer `i`: attention, feed-forward and the two norms before them; `extra` adds a family's own."""
    d, p = arch.d_model, f"layers.{i}."
    return LayerWeights(**attention(arch, src, p, biases), **feed_forward(arch, src, p),
                        attn_norm=src.get(p + "input_layernorm.weight", (d,)),
                        mlp_norm=src.get(p + "post_attention_layernorm.weight", (d,)), **extra)


def model_weights(arch: Architecture, src: TensorSource, progress: Progress | None,
                  make_layer: Callable[[Architecture, TensorSource, int], LayerWeights] = layer) -> ModelWeights:
    """The embedding, the layers `make_layer` reads, the final norm and the output matrix (when not tied)."""
    layers = read_layers(arch, src, progress, make_layer)
    d = arch.d_model
    return ModelWeights(
        arch=arch, layers=layers, token_embedding=src.matrix("embed_tokens.weight", (arch.vocab_size, d)),
        final_norm=src.get("norm.weight", (d,)), lm_head=src.optional_matrix("lm_head.weight", (arch.vocab_size, d)),
    )


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return model_weights(arch, src, progress)


FAMILY = Family(
    name="llama", title="Llama", decoder=True, architectures=("LlamaForCausalLM", "LlamaModel"),
    prefixes=("model.",), layer_pattern=LAYERS, architecture=architecture, weights=weights,
    plain={"mlp_bias": False},
)
