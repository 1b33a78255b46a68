"""A model from a GGUF file: its family read from the metadata, its weights dequantised (at open, or
layer by layer as they are computed when kept stored).

The file's `general.architecture` picks the family (gguf_families.py); its metadata is read under
config.json's names by the family's own `architecture`, and its tensors under the family's names by
the family's own `weights`. What llama.cpp's converter changed on the way is undone here: the Llama
q/k row order (`unpermute`, so one RoPE code path serves both formats), GPT-NeoX's regrouped q|k|v
rows (`by_head`) and GPT-2's transposed Conv1D weights; Gemma's norms, stored as 1 + w, are used as
stored (no norm offset).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ModelError
from .fields import Fields, shown
from .gguf_families import ARCHITECTURES, ROPE_TENSORS, GGUFArchitecture, family_name, file_name, known
from .gguf_reader import GGUFFile, Texts
from .progress import Progress
from .weights import Architecture, ModelWeights, TensorSource, choose_mode, copy_columns, may_remake_layers

GGUF_ROWS_AT_ONCE = 64  # a matrix's rows dequantised at a time into a layer's columns (as laid_out copies them)


def unpermute(weight: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's row order for one of W_Q/W_K (rows = heads · d_head outputs)."""
    rows = weight.shape[0]
    return weight.reshape(heads, rows // heads // 2, 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def by_head(fused: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's grouping of a fused W_QKV (or its bias): rows q | k | v of all heads back to
    each head's q, k and v in turn (GPT-NeoX's query_key_value)."""
    return fused.reshape(3, heads, -1, *fused.shape[1:]).swapaxes(0, 1).reshape(fused.shape)


def _spec(gguf: GGUFFile) -> tuple[str, GGUFArchitecture]:
    name = Fields(gguf.metadata, gguf.name, "metadata field").text("general.architecture")
    if name not in ARCHITECTURES:
        raise ModelError(f"{gguf.name}: 'general.architecture' is {shown(name)}, not an architecture this app opens "
                         f"from GGUF files; it opens {known()}")
    return name, ARCHITECTURES[name]


def _config(gguf: GGUFFile, name: str, spec: GGUFArchitecture) -> Fields:
    """The metadata as the family's config.json fields, each named in messages by its metadata key."""
    keys = {field: f"{name}.{key}" for field, key in spec.fields.items()}
    config = {field: gguf.metadata[key] for field, key in keys.items() if key in gguf.metadata}
    tokens = gguf.metadata.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, Texts) or not tokens:
        raise ModelError(f"{gguf.name}: metadata field 'tokenizer.ggml.tokens' must be a list of the tokens' "
                         f"texts, not {shown(tokens)}")
    config.setdefault("vocab_size", len(tokens))  # llama.cpp reads the vocabulary's size from the tokens
    _check_rope(gguf, name, spec)
    config.update({stem: gguf.tensor(f"{stem}.weight") for stem in spec.rope_tensors
                   if f"{stem}.weight" in gguf.tensors})
    fields = Fields(config, gguf.name, "metadata field", keys)
    if spec.derived is not None:
        config.update(spec.derived(fields))
    return fields


def _check_rope(gguf: GGUFFile, name: str, spec: GGUFArchitecture) -> None:
    """Refuse a rotary scaling the architecture's files are not read with (gguf_families: `rope_scalings`,
    `rope_tensors`): opened without it, the model would turn q and k otherwise than it was trained to."""
    key = f"{name}.rope.scaling.type"
    kind = Fields(gguf.metadata, gguf.name, "metadata field").text(key, default="none")
    tensors = [f"{stem}.weight" for stem in ROPE_TENSORS if stem not in spec.rope_tensors
               and f"{stem}.weight" in gguf.tensors]
    if kind in ("none", *spec.rope_scalings) and not tensors:
        return
    reads = ["plain RoPE", *(repr(scaling) for scaling in spec.rope_scalings),
             *(f"the tensor '{stem}.weight'" for stem in spec.rope_tensors)]
    these = f"{', '.join(reads[:-1])} and {reads[-1]} are" if len(reads) > 1 else "only plain RoPE is"
    what = (f"tensor {tensors[0]!r}, a rotary scaling, is" if tensors else
            f"metadata field {key!r} is {kind!r}, a rotary scaling")
    raise ModelError(f"{gguf.name}: {what} not supported in a {name!r} file; {these}")


def architecture_from_gguf(gguf: GGUFFile, weights: str = "auto") -> Architecture:
    """The sizes and switches of the model in `gguf`, every field type- and range-checked, and its size
    within what the app opens with its weights as `weights` says (weights.choose_mode), before a
    tokenizer of 256,000 tokens is built for a model refused."""
    name, spec = _spec(gguf)
    meta = Fields(gguf.metadata, gguf.name, "metadata field")
    fields = _config(gguf, name, spec)
    arch = spec.family.architecture(fields)
    if spec.norms_plus_one:
        arch = replace(arch, norm_offset=0.0)
    widths = {f"{name}.attention.value_length": arch.d_head}
    if arch.rotary:  # a model of learned positions (GPT-2) turns nothing, whatever the key says
        widths[f"{name}.rope.dimension_count"] = arch.rotary_dims
    for key, width in widths.items():
        if meta.count(key, default=width) != width:  # a value width or a partial RoPE of their own
            raise meta.wrong((key,), f"differs from the head's {width}, which is not supported", gguf.metadata[key])
    tokens = len(gguf.metadata["tokenizer.ggml.tokens"])
    if arch.vocab_size < tokens:
        raise ModelError(f"{gguf.name}: metadata field '{name}.vocab_size' is {arch.vocab_size:,} but the tokenizer "
                         f"has {tokens:,} tokens; every token needs a row of the embedding")
    # the embedding holds a row per token: checked before the tokenizer decodes them, so a header
    # claiming millions of tokens (a few bytes each in the file, a hundred as a tokenizer) is refused first
    _tensors(gguf, spec, arch).check(spec.embedding, (arch.vocab_size, arch.d_model))
    choose_mode(arch, gguf.name, weights)
    return arch


def _tensors(gguf: GGUFFile, spec: GGUFArchitecture, arch: Architecture, stored: bool = False,
             remade: bool = False) -> TensorSource:
    """The file's tensors under the family's names and in the family's layout: the q/k row order and
    transposed weights undone (their shapes, too, are the family's: checked before anything is read);
    `stored`: the layers are dequantised from the file's blocks whenever they are computed, and the
    embedding and output matrices (which no converter changes) a block of rows at a time."""
    names = {family_name(spec, name): name for name in gguf.tensors}
    transposed = {name for name, original in names.items() if _transposed(spec, original)}

    def reordered(name: str, tensor: np.ndarray) -> np.ndarray:
        """`tensor` (the file's rows of `name`, or their indices) in the family's row order."""
        if spec.qkv_by_part and stem(names[name]) == "attn_qkv":
            return by_head(tensor, arch.n_heads)
        if spec.permuted_qk and name.endswith(("self_attn.q_proj.weight", "self_attn.q_proj.bias")):
            return unpermute(tensor, arch.n_heads)
        if spec.permuted_qk and name.endswith(("self_attn.k_proj.weight", "self_attn.k_proj.bias")):
            return unpermute(tensor, arch.n_kv_heads)
        return tensor

    def load(name: str) -> np.ndarray:
        tensor = gguf.tensor(names[name])
        return tensor.T if name in transposed else reordered(name, tensor)

    def transposed_into(name: str, target: np.ndarray) -> None:
        """Matrix `name` (out, in) transposed into `target` (in, out: its columns of a laid-out layer), a
        few of the file's rows dequantised at a time straight into their place: no float32 copy of the
        whole matrix in the file's layout, which cost a Q8_0 layer 1.3–1.6 × a bf16 file's conversion."""
        original = names[name]
        if not gguf.rows_apart(original):  # a row ends inside a block: the whole matrix at once
            copy_columns(load(name).T, target)
            return
        rows = gguf.tensors[original].shape[0]
        if name in transposed:  # the file's rows are the layer's
            for begin in range(0, rows, GGUF_ROWS_AT_ONCE):
                end = min(begin + GGUF_ROWS_AT_ONCE, rows)
                target[begin:end] = gguf.tensor_rows(original, begin, end)
            return
        order = reordered(name, np.arange(rows))  # the file's row at each of the family's places
        place = None if np.array_equal(order, np.arange(rows)) else np.argsort(order)
        for begin in range(0, rows, GGUF_ROWS_AT_ONCE):
            end = min(begin + GGUF_ROWS_AT_ONCE, rows)
            columns = slice(begin, end) if place is None else place[begin:end]
            target[:, columns] = gguf.tensor_rows(original, begin, end).T

    shapes = {name: gguf.tensors[original].shape[::-1] if name in transposed else gguf.tensors[original].shape
              for name, original in names.items()}
    return TensorSource(gguf.name, shapes, load, lambda name: file_name(spec, name), stored,
                        lambda name, start, stop: gguf.tensor_rows(names[name], start, stop),
                        transposed_into=transposed_into, remade=remade)


def _transposed(spec: GGUFArchitecture, name: str) -> bool:
    """Whether the converter stored tensor `name` (the file's) transposed: a weight of one of the stems
    it turned."""
    return name.endswith(".weight") and stem(name) in spec.transposed


def stem(name: str) -> str:
    """A GGUF tensor's kind: "blk.0.attn_qkv.weight" → "attn_qkv", "output.weight" → "output"."""
    return name.split(".")[-2] if "." in name else name


def read_gguf_weights(gguf: GGUFFile, progress: Progress | None = None, weights: str = "auto") -> ModelWeights:
    """Every weight of the model in `gguf`, read by its family as from a folder: float32, or the
    layers kept in the file's blocks as `weights` says (weights.choose_mode)."""
    name, spec = _spec(gguf)
    arch = architecture_from_gguf(gguf, weights)
    mode = choose_mode(arch, gguf.name, weights)
    src = _tensors(gguf, spec, arch, mode == "stored", may_remake_layers(arch, weights, mode))
    src.check_layer_count(spec.family.layer_pattern, arch.n_layers, f"metadata field '{name}.block_count'")
    return spec.family.weights(arch, src, progress)
