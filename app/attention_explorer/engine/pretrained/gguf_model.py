"""A Llama-family model from a GGUF file: its architecture from the metadata, its weights dequantised.

llama.cpp stores the query and key rows of each head interleaved (its RoPE pairs dimension 2i with
2i+1); HF's convention pairs i with i + d_head/2. `unpermute` puts the rows back, so one RoPE code
path serves both formats.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .gguf_reader import GGUFFile
from .progress import Progress, report
from .weights import Architecture, LayerWeights, ModelWeights, TensorSource, check_size


def unpermute(weight: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's row order for one of W_Q/W_K (rows = heads · d_head outputs)."""
    rows = weight.shape[0]
    return weight.reshape(heads, rows // heads // 2, 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def _meta(gguf: GGUFFile, key: str, default=None):
    value = gguf.metadata.get(key, default)
    if value is None:
        raise ModelError(f"{gguf.name}: metadata field {key!r} is missing")
    return value


def architecture_from_gguf(gguf: GGUFFile) -> Architecture:
    family = _meta(gguf, "general.architecture")
    if family != "llama":
        raise ModelError(f"{gguf.name}: 'general.architecture' is {family!r}; only 'llama' GGUF files are supported")
    d_model = int(_meta(gguf, "llama.embedding_length"))
    n_heads = int(_meta(gguf, "llama.attention.head_count"))
    n_kv_heads = int(_meta(gguf, "llama.attention.head_count_kv", n_heads))
    if n_heads < 1 or n_kv_heads < 1 or d_model % n_heads or n_heads % n_kv_heads:
        raise ModelError(f"{gguf.name}: {n_heads} heads and {n_kv_heads} key/value heads do not split "
                         f"'llama.embedding_length' {d_model}")
    if "rope_freqs.weight" in gguf.tensors or gguf.metadata.get("llama.rope.scaling.type", "none") != "none":
        raise ModelError(f"{gguf.name}: scaled RoPE is not supported; only plain RoPE")
    vocab = gguf.metadata.get("llama.vocab_size") or len(_meta(gguf, "tokenizer.ggml.tokens"))
    return Architecture(
        family="llama", n_layers=int(_meta(gguf, "llama.block_count")), n_heads=n_heads, n_kv_heads=n_kv_heads,
        d_model=d_model, d_head=int(gguf.metadata.get("llama.attention.key_length", d_model // n_heads)),
        d_ff=int(_meta(gguf, "llama.feed_forward_length")), vocab_size=int(vocab),
        norm_eps=float(_meta(gguf, "llama.attention.layer_norm_rms_epsilon")),
        max_positions=int(_meta(gguf, "llama.context_length")), activation="silu",
        rope_theta=float(gguf.metadata.get("llama.rope.freq_base", 10000.0)),
    )


class _LazyTensors(dict):
    """Tensors dequantised on first access, so TensorSource checks names and shapes as for HF files."""

    def __init__(self, gguf: GGUFFile):
        super().__init__()
        self.gguf = gguf

    def __contains__(self, name) -> bool:
        return name in self.gguf.tensors

    def __getitem__(self, name: str) -> np.ndarray:
        return self.gguf.tensor(name)


def read_gguf_weights(gguf: GGUFFile, progress: Progress | None = None) -> ModelWeights:
    """Every weight of the Llama model in `gguf`, float32, with the q/k rows in HF order."""
    arch = architecture_from_gguf(gguf)
    check_size(arch, gguf.name)
    src = TensorSource(gguf.name, _LazyTensors(gguf))
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
