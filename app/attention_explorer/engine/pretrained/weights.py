"""One shape for the weights of every family, whatever file they came from.

The loaders (each family's module under families/ for HF folders, gguf_model.py for GGUF files)
translate their names and layouts into these classes, so the forward pass is one code path for
every family, driven by the Architecture's fields. Every projection is stored as (in, out), so a layer
is `x @ w + b`; HF's Linear weights (out, in) arrive as transposed views, not copies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .rope import RopeScaling
from .stored_rows import StoredRows


@dataclass(frozen=True)
class Architecture:
    """The sizes and switches of one checkpoint, read from its config or metadata by its family's
    module (families/). The forward (forward.py) is one function driven by these fields; each family
    says in its module which of them it sets and what that means in its maths."""

    family: str            # the family's name (families/: "bert", "gpt2", "llama", "qwen2", ...)
    n_layers: int
    n_heads: int           # query heads
    n_kv_heads: int        # key/value heads (fewer than n_heads when they are shared, as in Llama)
    d_model: int
    d_head: int
    d_ff: int
    vocab_size: int
    norm_eps: float
    max_positions: int     # longest sequence the position table (or the config) allows
    activation: str        # "gelu" (exact, erf), "gelu_tanh" or "silu"
    decoder: bool = False  # causal mask, next tokens and generation; else an encoder (every token sees every token)
    norm: str = "layer"    # "layer" (LayerNorm: mean, variance, weight, bias) or "rms" (RMSNorm: no mean, no bias)
    norm_offset: float = 0.0  # the norms scale by (offset + w): Gemma stores w − 1, so 1
    residual: str = "pre"  # "post": h = N(h + f(h)) (BERT); "pre": h = h + f(N(h)) (GPT-2, Llama, …);
                           # "parallel": h = h + attn(N₁(h)) + mlp(N₂(h)) (GPT-NeoX)
    gated: bool = False    # the feed-forward is act(x·W_gate) ⊙ (x·W_up) (SwiGLU, GeGLU), not act(x·W_up)
    rotary_dims: int = 0   # leading dims of each head turned by RoPE (partial rotary: fewer than d_head); 0: none
    rope_theta: float = 0.0  # the rotary base; 0 for learned positions
    rope_factor: float = 1.0  # a linear rope scaling's factor: positions ÷ factor in every layer
    rope_layers: tuple[tuple[float, float], ...] = ()  # per layer, its own rotary base and linear factor (positions
                                                       # ÷ factor) when layers differ (Gemma 3's local and global
                                                       # layers); (): rope_theta and rope_factor in every layer
    rope_scaling: RopeScaling | None = None  # the frequencies' scaling for a longer context (rope.py: Llama 3.1's,
                                             # dynamic NTK, YaRN, longrope); None: plain
    qk_norm: str = ""      # q and k RMS-normalised before RoPE: "head" (each head's d_head, Qwen3) or
                           # "whole" (the whole projection, OLMo 2); "" none
    windows: tuple[int, ...] = ()  # per layer, a sliding window w > 0: a query sees the keys less than w
                                   # away, a decoder's the w ending at itself (transformers' rule: key j > query
                                   # i − w), an encoder's on either side (|i − j| < w, ModernBERT); 0 or (): all
    query_scalar: float = 0.0  # scores are q·k ÷ √query_scalar (Gemma 2's query_pre_attn_scalar); 0: ÷ √d_head
    attn_softcap: float = 0.0  # scores become c·tanh(scores ÷ c) before the mask (Gemma 2); 0: none
    final_softcap: float = 0.0  # the next-token scores likewise (Gemma 2); 0: none
    embed_scale: float = 1.0   # token embeddings × this (Gemma: √d_model)
    position_pad: int = -1  # ≥ 0: learned positions counted as RoBERTa does, from this padding id + 1

    @property
    def is_decoder(self) -> bool:
        return self.decoder

    @property
    def kind(self) -> str:
        return "decoder" if self.decoder else "encoder"

    @property
    def pre_norm(self) -> bool:
        """Whether each sub-layer reads a normalised copy of the stream (everything but BERT's post-LN)."""
        return self.residual != "post"

    @property
    def rotary(self) -> bool:
        return self.rotary_dims > 0

    @property
    def score_divisor(self) -> float:
        """What q·k is divided by before the softmax: √d_head, or √query_scalar when the config says so."""
        return float(np.sqrt(self.query_scalar or self.d_head))

    def rope(self, layer: int) -> tuple[float, float]:
        """Layer `layer`'s rotary base and linear scaling factor."""
        return self.rope_layers[layer] if self.rope_layers else (self.rope_theta, self.rope_factor)

    def window(self, layer: int) -> int:
        """Layer `layer`'s sliding window (0: every key the query may see: the whole text, or before it)."""
        return self.windows[layer] if self.windows else 0

    @property
    def parameters(self) -> int:
        """About how many numbers the model holds (embeddings and blocks; biases and norms left out)."""
        d, q, kv = self.d_model, self.n_heads * self.d_head, self.n_kv_heads * self.d_head
        per_layer = d * (2 * q + 2 * kv) + (3 if self.gated else 2) * d * self.d_ff
        return self.vocab_size * d + self.n_layers * per_layer

    @property
    def group(self) -> int:
        """How many query heads share one key/value head: query head h reads kv head h // group."""
        return self.n_heads // self.n_kv_heads


# A model's weights are held in one of two forms (choose_mode):
# - "float32": every matrix converted once, at open, laid out as the products want. The fastest
#   forward, but a bf16 file takes twice its size in memory (a GGUF Q8_0 file nearly four times).
# - "stored": the matrices stay in the file as it stores them (bf16 or f16 numbers, GGUF blocks): each
#   layer is read and converted when it is computed, a few kept and the next made ahead on a second
#   thread (stored_layers.py), the embedding a block of rows at a time (stored_rows.py); only norms,
#   biases and position tables are float32. The model then takes less than its file's size, and every
#   forward pays the conversion again (bench_big_checkpoint.py measures both).
# "auto" keeps float32 when its weights fit in a share of the memory the machine has free, with room
# for the views' traces and other programs, and stores them otherwise.
WEIGHT_MODES = ("auto", "float32", "stored")
# The largest model opened: two billion weights, 7.5 GiB as float32, about the most a 16 GB laptop can
# spare beside the app (Llama-3.2-1B, 1.2 billion, opens; a 3-billion model does not).
MAX_PARAMETERS = 2_000_000_000
ROOM_BEYOND_WEIGHTS = 1.1  # opening peaks about a tenth above the float32 weights (bench_big_checkpoint.py)
FLOAT32_SHARE = 0.5        # "auto" keeps float32 weights that take at most this share of the free memory
LAYERS_MADE = 4            # stored: layers held converted at most: stored_layers.KEPT_LAYERS, one made ahead,
                           # and the float32 tensors it is made from


def free_memory_bytes() -> int | None:
    """The memory the system can give this process now (Linux's MemAvailable), None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def choose_mode(arch: Architecture, file_name: str, requested: str = "auto") -> str:
    """"float32" or "stored" for a model of `arch` asked to open as `requested` (WEIGHT_MODES), or a
    ModelError when it is too large, or would not fit in the memory the machine has free in that form."""
    if requested not in WEIGHT_MODES:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_MODES)}, not {requested!r}")
    weights_bytes = arch.parameters * 4
    if arch.parameters > MAX_PARAMETERS:
        raise ModelError(f"{file_name}: the model has about {arch.parameters / 1e9:.1f} billion weights, "
                         f"{weights_bytes / 2 ** 30:.0f} GiB as float32; the largest this app opens is "
                         f"{MAX_PARAMETERS / 1e9:.0f} billion")
    free = free_memory_bytes()
    float32_need = weights_bytes * ROOM_BEYOND_WEIGHTS
    if requested == "auto":
        requested = "float32" if free is None or float32_need <= free * FLOAT32_SHARE else "stored"
    need = float32_need if requested == "float32" else _stored_bytes(arch)
    if free is not None and need > free:
        raise ModelError(f"{file_name}: the model's {arch.parameters / 1e9:.2f} billion weights need about "
                         f"{need / 2 ** 30:.1f} GiB {'as float32' if requested == 'float32' else 'kept as stored'}, "
                         f"and this machine has {free / 2 ** 30:.1f} GiB free; close other programs, or open a "
                         f"smaller model")
    return requested


def may_remake_layers(arch: Architecture, requested: str, mode: str) -> bool:
    """Whether a model opened as `requested`, in `mode` (choose_mode's), keeps its file open to make
    its layers again: a decoder converted to float32 because it fitted ("auto"), which may read a text
    whose layer inputs outgrow its layers (stored_layers.py). One opened float32 on request stays so."""
    return requested == "auto" and mode == "float32" and arch.is_decoder


def _stored_bytes(arch: Architecture) -> int:
    """About what a model of stored weights holds at most as float32: a few layers converted, and its
    embedding whole while the census scores every token (stored_rows.StoredRows.scores)."""
    per_layer = (arch.parameters - arch.vocab_size * arch.d_model) // arch.n_layers
    return 4 * (arch.vocab_size * arch.d_model + min(LAYERS_MADE, arch.n_layers) * per_layer)


def all_finite(array: np.ndarray) -> bool:
    """Whether every number of `array` (any layout, a column slice too) is finite: its largest and its
    smallest are, as a NaN anywhere makes both NaN, +∞ the largest and −∞ the smallest. Two passes
    that make nothing, a third of the time of a float64 sum (which cannot overflow either, but widens
    every number on the way) over a layer of a billion-weight model."""
    if array.size == 0:
        return True
    return bool(np.isfinite(array.max()) and np.isfinite(array.min()))


class ShapeOfArchitecture:
    """The sizes a view asks of a model, read from its `arch` (a real model, or one part of an
    encoder–decoder)."""

    arch: Architecture

    @property
    def n_layers(self) -> int:
        return self.arch.n_layers

    @property
    def n_heads(self) -> int:
        return self.arch.n_heads

    @property
    def n_kv_heads(self) -> int:
        return self.arch.n_kv_heads

    @property
    def d_model(self) -> int:
        return self.arch.d_model


@dataclass
class LayerWeights:
    """One transformer block. Norms (None where the family has none): with a "post" residual (BERT)
    `attn_norm` and `mlp_norm` follow each sub-layer's sum; otherwise they normalise what each
    sub-layer reads, and `post_attn_norm` / `post_mlp_norm` what it writes (OLMo 2, Gemma 2)."""

    # The projections may arrive still in the file (FileMatrix), read when they are laid out below.
    w_q: np.ndarray  # d_model × n_heads·d_head
    w_k: np.ndarray  # d_model × n_kv_heads·d_head
    w_v: np.ndarray
    w_o: np.ndarray  # n_heads·d_head × d_model
    w_up: np.ndarray     # d_model × d_ff
    w_down: np.ndarray   # d_ff × d_model
    attn_norm: np.ndarray | None = None
    mlp_norm: np.ndarray | None = None
    w_gate: np.ndarray | None = None  # a gated feed-forward's gate (SwiGLU, GeGLU), d_model × d_ff
    b_q: np.ndarray | None = None
    b_k: np.ndarray | None = None
    b_v: np.ndarray | None = None
    b_o: np.ndarray | None = None
    attn_norm_bias: np.ndarray | None = None  # LayerNorm has a bias, RMSNorm none
    mlp_norm_bias: np.ndarray | None = None
    b_up: np.ndarray | None = None
    b_gate: np.ndarray | None = None          # a gated feed-forward's gate bias (ModernBERT's mlp_bias)
    b_down: np.ndarray | None = None
    q_norm: np.ndarray | None = None          # RMSNorm of q and k before RoPE: d_head (per head) or the whole
    k_norm: np.ndarray | None = None          # projection's width (Architecture.qk_norm)
    post_attn_norm: np.ndarray | None = None  # RMSNorm of what attention adds to the stream (OLMo 2, Gemma 2)
    post_mlp_norm: np.ndarray | None = None   # and of what the feed-forward adds
    # W_Q | W_K | W_V side by side (and their biases): one product instead of three, about 10 % less
    # time for the projections; w_q, w_k and w_v become views of it, so nothing is stored twice.
    w_qkv: np.ndarray = field(init=False, repr=False)
    b_qkv: np.ndarray | None = field(init=False, repr=False)
    # Likewise W_gate | W_up (SwiGLU), or W_up alone: the first product of the feed-forward (and its bias).
    w_gate_up: np.ndarray = field(init=False, repr=False)
    b_gate_up: np.ndarray | None = field(init=False, repr=False)

    def __post_init__(self):
        # (in, out) in row order: OpenBLAS multiplies by these about 10 % faster than by the
        # transposed views the files give (HF and GGUF store (out, in)); copied once per layer made.
        self.w_o, self.w_down = laid_out([self.w_o]), laid_out([self.w_down])
        if self.w_gate is None:
            self.w_up = self.w_gate_up = laid_out([self.w_up])
            self.b_gate_up = self.b_up
        else:
            self.w_gate_up = laid_out([self.w_gate, self.w_up])
            d_ff = self.w_up.shape[1]
            self.w_gate, self.w_up = self.w_gate_up[:, :d_ff], self.w_gate_up[:, d_ff:]
            self.b_gate_up = None if self.b_gate is None and self.b_up is None else np.concatenate(
                [np.zeros(d_ff, np.float32) if b is None else b for b in (self.b_gate, self.b_up)])
        self.w_qkv = laid_out([self.w_q, self.w_k, self.w_v])
        q_end, k_end = self.w_q.shape[1], self.w_q.shape[1] + self.w_k.shape[1]
        self.w_q, self.w_k, self.w_v = self.w_qkv[:, :q_end], self.w_qkv[:, q_end:k_end], self.w_qkv[:, k_end:]
        self.b_qkv = None
        if self.b_q is not None or self.b_k is not None or self.b_v is not None:
            self.b_qkv = np.concatenate([np.zeros(w.shape[1], np.float32) if b is None else b for w, b in
                                         ((self.w_q, self.b_q), (self.w_k, self.b_k), (self.w_v, self.b_v))])


@dataclass(frozen=True)
class FileMatrix:
    """A layer's matrix (in, out) still in the file, which `read(target)` converts into the float32
    array `target` of its shape (its columns of the layer's laid-out array: laid_out), checked there.
    Read so, a 16-bit matrix is converted once, straight into its place (TensorSource.transposed)."""

    shape: tuple[int, int]
    read: Callable[[np.ndarray], None]
    dtype = np.dtype(np.float32)


_COLUMNS_AT_ONCE = 64  # a transposed view is copied this many columns at a time (see laid_out)
_FLOATS_A_LINE = 16    # float32 numbers in a 64-byte cache line (see padded_width)


def laid_out(parts: Sequence[np.ndarray | FileMatrix]) -> np.ndarray:
    """The matrices `parts` (in × out_i each) side by side in one new array in row order; a part
    still in the file (FileMatrix) is read straight into its columns.

    The parts are mostly transposed views of the files' (out, in) matrices. Copied whole, each row
    written gathers one number from each of `out` rows of the file's matrix, which for a matrix of
    8,192 such rows leaves nothing in the processor's cache to the next row: Llama-3.2-1B's layer took
    about 1.2 s. A block of 64 columns at a time reads 64 rows of the file's matrix, which stay cached
    from one row written to the next: 0.1–0.2 s (0.2–0.3 s in blocks of 128). The numbers are copied,
    not changed.

    Each row is padded to padded_width in memory; the array returned is the view of its columns.
    """
    width = sum(part.shape[1] for part in parts)
    out = np.empty((parts[0].shape[0], padded_width(width)), dtype=parts[0].dtype)[:, :width]
    start = 0
    for part in parts:
        width = part.shape[1]
        if isinstance(part, FileMatrix):
            part.read(out[:, start:start + width])
        else:
            copy_columns(part, out[:, start:start + width])
        start += width
    return out


def padded_width(width: int) -> int:
    """How many float32 numbers a laid-out row of `width` takes in memory: an odd number of whole
    64-byte cache lines. Most models' widths are multiples of 256 or 512 bytes, so rows one such
    width apart fall on the same few sets of the processor's cache, and OpenBLAS, reading a block of
    rows at a time, evicts its own rows (one thread, 128 tokens: MiniLM's products at 109–122 GFLOP/s
    unpadded, 132–140 padded; 12 tokens 31–63 against 40–84). The products' bits are the same."""
    lines = -(-width // _FLOATS_A_LINE)
    return (lines | 1) * _FLOATS_A_LINE


def copy_columns(part: np.ndarray, out: np.ndarray) -> None:
    """`part` copied into `out` of its shape, a block of columns at a time when `part` is a transposed
    view (see laid_out)."""
    width = part.shape[1]
    step = _COLUMNS_AT_ONCE if part.strides[0] < part.strides[1] else width  # a transposed view, or rows
    for column in range(0, width, max(step, 1)):
        end = min(column + step, width)
        out[:, column:end] = part[:, column:end]


@dataclass
class ModelWeights:
    """Embeddings, blocks and head of one model, float32; when the weights are kept stored, the blocks
    made from the file as they are read (stored_layers.py) and the embedding and output matrices read
    a block of rows at a time (stored_rows.py)."""

    arch: Architecture
    token_embedding: np.ndarray | StoredRows      # vocab × d_model (kept in the file when the weights are stored)
    layers: Sequence[LayerWeights] = field(default_factory=list)
    position_embedding: np.ndarray | None = None  # learned positions, a row per position (BERT, GPT-2, …)
    type_embedding: np.ndarray | None = None      # BERT's segment A row, d_model
    embedding_norm: np.ndarray | None = None      # BERT normalises the embeddings
    embedding_norm_bias: np.ndarray | None = None
    final_norm: np.ndarray | None = None          # pre-norm models normalise after the last block
    final_norm_bias: np.ndarray | None = None
    lm_head: np.ndarray | StoredRows | None = None  # vocab × d_model; None: tied to token_embedding


class TensorSource:
    """The named tensors of a checkpoint with their checks: a missing name, a wrong shape or a value
    that is not finite is a ModelError naming the file and the tensor.

    `shapes` is the file's index (name → shape, read from its header); `load(name)` reads one
    tensor. A shape is checked against the architecture before the tensor is read, so a header
    claiming a 16 GB tensor is refused without allocating it, and tensors the model does not use
    (a BERT pooler, say) are never read. `file_name_of(name)` is a tensor's name as the file spells
    it, for messages (a GGUF file's 'blk.0.attn_q.weight' where the family asks for
    'layers.0.self_attn.q_proj.weight').

    `stored`: the tensors stay in the file, readable after the model is open, and the layers are read
    when they are computed (families.shared.read_layers), so their tensors are checked then; and
    with `rows(name, start, stop)` (rows start … stop − 1 of a matrix, float32), the embedding and
    output matrices too (matrix, stored_rows.py). `rows_kept`: those matrices stay in the file while
    the layers are float32 (an encoder's embedding: it has no next-token scores, so a text reads
    only its own rows of the largest matrix it has), checked whole at open all the same. `remade`: the
    layers are float32, read now, and the file stays open so that they can be made again from it
    (stored_layers.StoredLayers.hold_all: a long text's).
    """

    def __init__(self, file_name: str, shapes: Mapping[str, tuple[int, ...]], load: Callable[[str], np.ndarray],
                 file_name_of: Callable[[str], str] | None = None, stored: bool = False,
                 rows: Callable[[str, int, int], np.ndarray] | None = None, rows_kept: bool = False,
                 transposed_into: Callable[[str, np.ndarray], None] | None = None, remade: bool = False):
        self.file_name = file_name
        self.stored = stored
        self.remade = remade and not stored
        self.rows_kept = stored or rows_kept
        self.shapes = shapes
        self._load = load
        self._rows = rows
        self._transposed_into = transposed_into
        self._file_name_of = file_name_of or (lambda name: name)

    def has(self, name: str) -> bool:
        return name in self.shapes

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.shapes[name])

    def check(self, name: str, shape: tuple[int, ...]) -> None:
        """Tensor `name` is in the file with `shape` (from the header alone: nothing is read)."""
        if name not in self.shapes:
            raise ModelError(f"{self.file_name}: tensor {self._file_name_of(name)!r} is missing; the file is "
                             f"incomplete or not a checkpoint of this architecture")
        if self.shape(name) != tuple(shape):
            raise ModelError(f"{self.file_name}: tensor {self._file_name_of(name)!r} has shape {self.shape(name)}, "
                             f"expected {tuple(shape)} from the model's configuration")

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The float32 tensor `name`, which must have `shape` and hold only finite numbers."""
        self.check(name, shape)
        with np.errstate(all="ignore"):  # a damaged block may dequantise to inf · 0: checked just below
            array = self._load(name)
            array = array if array.dtype == np.float32 else array.astype(np.float32)
        self._check_finite(name, array)
        return array

    def _check_finite(self, name: str, array: np.ndarray) -> None:
        if not all_finite(array):
            raise ModelError(f"{self.file_name}: tensor {self._file_name_of(name)!r} holds values that are not "
                             f"numbers (NaN) or infinite; the file is damaged, download it again")

    def transposed(self, name: str, shape: tuple[int, int]) -> np.ndarray | FileMatrix:
        """The matrix `name` of `shape` (out, in) as (in, out), for a layer to lay out (LayerWeights):
        `get`'s array transposed, or, where the source reads a matrix straight into another array's
        columns (`transposed_into(name, target)`: a safetensors or GGUF file), a FileMatrix that does so when
        the layer is laid out and checks the numbers there."""
        if self._transposed_into is None:
            return self.get(name, shape).T
        self.check(name, shape)

        def read(target: np.ndarray) -> None:
            with np.errstate(all="ignore"):
                self._transposed_into(name, target)
            self._check_finite(name, target)

        return FileMatrix((shape[1], shape[0]), read)

    def optional(self, name: str, shape: tuple[int, ...]) -> np.ndarray | None:
        return self.get(name, shape) if name in self.shapes else None

    def matrix(self, name: str, shape: tuple[int, int]) -> np.ndarray | StoredRows:
        """The matrix `name` (the embedding, an output matrix): float32 as `get` gives it, or kept in
        the file when the weights are stored, its rows checked as they are read."""
        if not self.rows_kept or self._rows is None:
            return self.get(name, shape)
        self.check(name, shape)

        def read(start: int, stop: int) -> np.ndarray:
            with np.errstate(all="ignore"):
                return self._rows(name, start, stop)

        rows = StoredRows(shape, read, lambda block: self._check_finite(name, block))
        if not self.stored:  # float32 layers are checked at open: so is the matrix kept beside them
            rows.check_every_row()
        return rows

    def optional_matrix(self, name: str, shape: tuple[int, int]) -> np.ndarray | StoredRows | None:
        return self.matrix(name, shape) if name in self.shapes else None

    def check_layer_count(self, pattern: str, declared: int, declared_by: str) -> None:
        """Layers present = layers declared: the tensor names matching `pattern` (one group, the layer
        number) must number the layers 0 … declared − 1, no fewer and no more."""
        matcher = re.compile(pattern)
        present = {int(found.group(1)) for name in self.shapes if (found := matcher.match(name))}
        if present and max(present) >= declared:
            raise ModelError(f"{declared_by} says {declared} layer{'s' if declared != 1 else ''} but "
                             f"{self.file_name} holds {max(present) + 1}; the configuration does not belong "
                             f"to these weights")
        missing = sorted(set(range(declared)) - present)
        if missing:
            raise ModelError(f"{declared_by} says {declared} layers but {self.file_name} has no tensors of "
                             f"layer {missing[0] + 1}; the file is incomplete or not this model's")
