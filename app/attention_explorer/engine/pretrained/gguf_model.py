"""A Llama-family model from a GGUF file: its architecture from the metadata, its weights dequantised.

llama.cpp stores the query and key rows of each head interleaved (its RoPE pairs dimension 2i with
2i+1); HF's convention pairs i with i + d_head/2. `unpermute` puts the rows back, so one RoPE code
path serves both formats.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .fields import Fields, shown
from .gguf_reader import GGUFFile, Texts
from .progress import Progress, report
from .weights import Architecture, LayerWeights, ModelWeights, TensorSource, check_size


def unpermute(weight: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's row order for one of W_Q/W_K (rows = heads · d_head outputs)."""
    rows = weight.shape[0]
    return weight.reshape(heads, rows // heads // 2, 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def architecture_from_gguf(gguf: GGUFFile) -> Architecture:
    """The sizes and switches of the Llama model in `gguf`, every field type- and range-checked."""
    meta = Fields(gguf.metadata, gguf.name, "metadata field")
    family = meta.text("general.architecture")
    if family != "llama":
        raise ModelError(f"{gguf.name}: 'general.architecture' is {shown(family)}; only 'llama' GGUF files are "
                         f"supported")
    d_model = meta.count("llama.embedding_length")
    n_heads = meta.count("llama.attention.head_count")
    n_kv_heads = meta.count("llama.attention.head_count_kv", default=n_heads)
    if d_model % n_heads or n_heads % n_kv_heads:
        raise ModelError(f"{gguf.name}: {n_heads} heads and {n_kv_heads} key/value heads do not split "
                         f"'llama.embedding_length' {d_model}")
    d_head = meta.count("llama.attention.key_length", default=d_model // n_heads)
    if d_head % 2:  # RoPE turns the two halves of each head against each other
        raise meta.wrong(("llama.attention.key_length",), "must be even (rotary positions pair its halves)", d_head)
    for name in ("llama.attention.value_length", "llama.rope.dimension_count"):
        if meta.count(name, default=d_head) != d_head:  # a value width or a partial RoPE of their own
            raise meta.wrong((name,), f"differs from the head width {d_head}, which is not supported",
                             gguf.metadata[name])
    if "rope_freqs.weight" in gguf.tensors or meta.text("llama.rope.scaling.type", default="none") != "none":
        raise ModelError(f"{gguf.name}: scaled RoPE is not supported; only plain RoPE")
    tokens = meta.raw("tokenizer.ggml.tokens")
    if not isinstance(tokens, Texts) or not tokens:
        raise meta.wrong(("tokenizer.ggml.tokens",), "must be a list of the tokens' texts", tokens)
    vocab = meta.count("llama.vocab_size", default=len(tokens))
    if vocab < len(tokens):
        raise ModelError(f"{gguf.name}: metadata field 'llama.vocab_size' is {vocab:,} but the tokenizer has "
                         f"{len(tokens):,} tokens; every token needs a row of the embedding")
    # the embedding holds a row per token: checked before the tokenizer decodes them, so a header
    # claiming millions of tokens (a few bytes each in the file, a hundred as a tokenizer) is refused first
    _tensors(gguf).check("token_embd.weight", (vocab, d_model))
    return Architecture(
        family="llama", n_layers=meta.count("llama.block_count"), n_heads=n_heads, n_kv_heads=n_kv_heads,
        d_model=d_model, d_head=d_head, d_ff=meta.count("llama.feed_forward_length"), vocab_size=vocab,
        norm_eps=meta.epsilon("llama.attention.layer_norm_rms_epsilon"),
        max_positions=meta.count("llama.context_length"), activation="silu", decoder=True, norm="rms", gated=True,
        rotary_dims=d_head, rope_theta=meta.positive_number("llama.rope.freq_base", default=10000.0),
    )


def _tensors(gguf: GGUFFile) -> TensorSource:
    return TensorSource(gguf.name, {name: info.shape for name, info in gguf.tensors.items()}, gguf.tensor)


def read_gguf_weights(gguf: GGUFFile, progress: Progress | None = None) -> ModelWeights:
    """Every weight of the Llama model in `gguf`, float32, with the q/k rows in HF order."""
    arch = architecture_from_gguf(gguf)
    check_size(arch, gguf.name)
    src = _tensors(gguf)
    src.check_layer_count(r"blk\.(\d+)\.", arch.n_layers, "metadata field 'llama.block_count'")
    d, f = arch.d_model, arch.d_ff
    dq, dkv = arch.n_heads * arch.d_head, arch.n_kv_heads * arch.d_head
    report(progress, 0.1, "reading the embeddings")
    token_embedding = src.get("token_embd.weight", (arch.vocab_size, d))
    layers = []
    for i in range(arch.n_layers):
        report(progress, 0.15 + 0.85 * i / arch.n_layers, f"reading layer {i + 1} of {arch.n_layers}")
        p = f"blk.{i}."
        layers.append(LayerWeights(
            w_q=np.ascontiguousarray(unpermute(src.get(p + "attn_q.weight", (dq, d)), arch.n_heads).T),
            w_k=np.ascontiguousarray(unpermute(src.get(p + "attn_k.weight", (dkv, d)), arch.n_kv_heads).T),
            w_v=src.get(p + "attn_v.weight", (dkv, d)).T,
            w_o=src.get(p + "attn_output.weight", (d, dq)).T,
            attn_norm=src.get(p + "attn_norm.weight", (d,)),
            mlp_norm=src.get(p + "ffn_norm.weight", (d,)),
            w_gate=src.get(p + "ffn_gate.weight", (f, d)).T,
            w_up=src.get(p + "ffn_up.weight", (f, d)).T,
            w_down=src.get(p + "ffn_down.weight", (d, f)).T,
        ))
    return ModelWeights(
        arch=arch, layers=layers, token_embedding=token_embedding,
        final_norm=src.get("output_norm.weight", (d,)),
        lm_head=src.optional("output.weight", (arch.vocab_size, d)),
    )
