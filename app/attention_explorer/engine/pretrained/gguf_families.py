"""Which family (families/) reads a GGUF file of each llama.cpp architecture, and how its names map.

llama.cpp's converter (convert_hf_to_gguf.py) writes a Hugging Face checkpoint's config.json fields as
metadata keys under the architecture's name (`hidden_size` → `qwen2.embedding_length`) and renames
its tensors (`model.layers.0.self_attn.q_proj.weight` → `blk.0.attn_q.weight`). Here both are mapped
back, so the family's own `architecture(fields)` and `weights(arch, src)` read a GGUF file as they
read a folder; nothing of a family's maths is written twice.

On the way the converter changed some numbers, and only these, for the architectures below:
- llama: the rows of W_Q and W_K (and their biases) of each head are interleaved (its RoPE pairs
  dimension 2i with 2i + 1; HF's pairs i with i + d_head/2): `permuted_qk`, undone on reading.
  Qwen2, Qwen3 and Gemma are written by converters of their own that leave the rows as they are
  (as transformers' GGUF loader, which un-permutes only "llama", reads them).
- gemma: every norm's weight is stored as 1 + w (HF's Gemma scales by 1 + w, llama.cpp by the
  stored weight): `norms_plus_one`. The forward then scales by the stored weight, as llama.cpp does
  (Architecture.norm_offset 0), rather than taking 1 away and adding it back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .families import Family, gemma, llama, qwen2, qwen3


@dataclass(frozen=True)
class GGUFArchitecture:
    family: Family
    fields: Mapping[str, str]          # config.json's name → the metadata key after "{architecture}."
    layer_tensors: Mapping[str, str]   # a layer's tensor after "blk.N." → the family's after "layers.N."
    permuted_qk: bool = False          # W_Q's and W_K's rows interleaved per head by the converter
    norms_plus_one: bool = False       # the norms' weights stored as 1 + w by the converter


# What every architecture below writes (llama.cpp's gguf_writer: add_embedding_length, add_head_count, …).
FIELDS = {"hidden_size": "embedding_length", "num_hidden_layers": "block_count",
          "intermediate_size": "feed_forward_length", "num_attention_heads": "attention.head_count",
          "num_key_value_heads": "attention.head_count_kv", "head_dim": "attention.key_length",
          "rms_norm_eps": "attention.layer_norm_rms_epsilon", "max_position_embeddings": "context_length",
          "rope_theta": "rope.freq_base", "vocab_size": "vocab_size"}

# Tensor stems (".weight" and ".bias" follow): the whole model's, and a Llama-layout layer's.
MODEL_TENSORS = {"token_embd": "embed_tokens", "output_norm": "norm", "output": "lm_head"}
LLAMA_LAYER = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
               "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
               "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}
QK_NORM = {"attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm"}

ARCHITECTURES: dict[str, GGUFArchitecture] = {
    "llama": GGUFArchitecture(llama.FAMILY, FIELDS, LLAMA_LAYER, permuted_qk=True),
    "qwen2": GGUFArchitecture(qwen2.FAMILY, FIELDS, LLAMA_LAYER),
    "qwen3": GGUFArchitecture(qwen3.FAMILY, FIELDS, {**LLAMA_LAYER, **QK_NORM}),
    "gemma": GGUFArchitecture(gemma.FAMILY, FIELDS, LLAMA_LAYER, norms_plus_one=True),
}

_LAYER = re.compile(r"(blk|layers)\.(\d+)\.(.+)\.(weight|bias)$")
_WHOLE = re.compile(r"(.+)\.(weight|bias)$")


def known() -> str:
    """The architectures that open, as a message lists them."""
    return ", ".join(repr(name) for name in ARCHITECTURES)


def family_name(spec: GGUFArchitecture, name: str) -> str:
    """A GGUF tensor's name as the family asks for it ("blk.0.attn_q.bias" → "layers.0.self_attn.q_proj.bias").
    A layer's tensor the table does not know keeps its stem ("layers.0.attn_foo.weight"), so the layers
    are still counted; any other keeps its name."""
    return _renamed(name, "blk", "layers", MODEL_TENSORS, spec.layer_tensors)


def file_name(spec: GGUFArchitecture, name: str) -> str:
    """The family's name of a tensor as the GGUF file spells it (for messages)."""
    return _renamed(name, "layers", "blk", _inverse(MODEL_TENSORS), _inverse(spec.layer_tensors))


def _renamed(name: str, layer_from: str, layer_to: str, whole: Mapping[str, str], layer: Mapping[str, str]) -> str:
    if (found := _LAYER.match(name)) and found.group(1) == layer_from:
        _, number, stem, kind = found.groups()
        return f"{layer_to}.{number}.{layer.get(stem, stem)}.{kind}"
    if (found := _WHOLE.match(name)) and found.group(1) in whole:
        return f"{whole[found.group(1)]}.{found.group(2)}"
    return name


def _inverse(mapping: Mapping[str, str]) -> dict[str, str]:
    return {value: key for key, value in mapping.items()}
