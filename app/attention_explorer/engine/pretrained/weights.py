"""One shape for the weights of every family, whatever file they came from.

The loaders (HF folders, GGUF files) translate their names and layouts into these classes, so the
forward pass has a single code path per family. Every projection is stored as (in, out), so a layer
is `x @ w + b`; HF's Linear weights (out, in) arrive as transposed views, not copies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError

FAMILIES = ("bert", "gpt2", "llama")
# What each family is, in the words the app shows.
FAMILY_KINDS = {"bert": "encoder", "gpt2": "decoder", "llama": "decoder"}


@dataclass(frozen=True)
class Architecture:
    """The sizes and switches of one checkpoint, read from its config or metadata."""

    family: str            # "bert" (post-LN encoder), "gpt2" (pre-LN decoder), "llama" (RMSNorm, RoPE, SwiGLU)
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
    rope_theta: float = 0.0  # Llama's rotary base; 0 for learned positions

    @property
    def is_decoder(self) -> bool:
        return FAMILY_KINDS[self.family] == "decoder"

    @property
    def pre_norm(self) -> bool:
        """GPT-2 and Llama normalise before each sub-layer; BERT after (post-LN)."""
        return self.family != "bert"

    @property
    def parameters(self) -> int:
        """About how many numbers the model holds (embeddings and blocks; biases and norms left out)."""
        d, q, kv = self.d_model, self.n_heads * self.d_head, self.n_kv_heads * self.d_head
        per_layer = d * (2 * q + 2 * kv) + (3 if self.activation == "silu" else 2) * d * self.d_ff
        return self.vocab_size * d + self.n_layers * per_layer

    @property
    def group(self) -> int:
        """How many query heads share one key/value head: query head h reads kv head h // group."""
        return self.n_heads // self.n_kv_heads


# Every weight is held as float32 in memory: a billion of them is 4 GB, about the most a laptop
# can spare beside the app. Larger models are refused before anything is read.
MAX_PARAMETERS = 1_000_000_000


def check_size(arch: Architecture, file_name: str) -> None:
    if arch.parameters > MAX_PARAMETERS:
        raise ModelError(f"{file_name}: the model has about {arch.parameters / 1e9:.1f} billion weights, "
                         f"{arch.parameters * 4 / 2 ** 30:.0f} GiB as float32; the largest this app opens is "
                         f"{MAX_PARAMETERS / 1e9:.0f} billion")


@dataclass
class LayerWeights:
    """One transformer block. Norms: `attn_norm` is before attention (pre-LN) or after it (BERT)."""

    w_q: np.ndarray  # d_model × n_heads·d_head
    w_k: np.ndarray  # d_model × n_kv_heads·d_head
    w_v: np.ndarray
    w_o: np.ndarray  # n_heads·d_head × d_model
    attn_norm: np.ndarray
    mlp_norm: np.ndarray
    w_up: np.ndarray     # d_model × d_ff
    w_down: np.ndarray   # d_ff × d_model
    w_gate: np.ndarray | None = None  # Llama's SwiGLU gate, d_model × d_ff
    b_q: np.ndarray | None = None
    b_k: np.ndarray | None = None
    b_v: np.ndarray | None = None
    b_o: np.ndarray | None = None
    attn_norm_bias: np.ndarray | None = None  # LayerNorm has a bias, RMSNorm none
    mlp_norm_bias: np.ndarray | None = None
    b_up: np.ndarray | None = None
    b_down: np.ndarray | None = None
    # W_Q | W_K | W_V side by side (and their biases): one product instead of three, about 10 % less
    # time for the projections; w_q, w_k and w_v become views of it, so nothing is stored twice.
    w_qkv: np.ndarray = field(init=False, repr=False)
    b_qkv: np.ndarray | None = field(init=False, repr=False)
    # Likewise W_gate | W_up (SwiGLU), or W_up alone: the first product of the feed-forward.
    w_gate_up: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        # (in, out) in row order: OpenBLAS multiplies by these about 10 % faster than by the
        # transposed views the files give (HF and GGUF store (out, in)); a one-off copy at open.
        self.w_o, self.w_down = (np.ascontiguousarray(w) for w in (self.w_o, self.w_down))
        if self.w_gate is None:
            self.w_up = self.w_gate_up = np.ascontiguousarray(self.w_up)
        else:
            self.w_gate_up = np.ascontiguousarray(np.concatenate([self.w_gate, self.w_up], axis=1))
            d_ff = self.w_up.shape[1]
            self.w_gate, self.w_up = self.w_gate_up[:, :d_ff], self.w_gate_up[:, d_ff:]
        # np.concatenate keeps its inputs' column order (the files' transposed views): C order is asked for
        self.w_qkv = np.ascontiguousarray(np.concatenate([self.w_q, self.w_k, self.w_v], axis=1))
        q_end, k_end = self.w_q.shape[1], self.w_q.shape[1] + self.w_k.shape[1]
        self.w_q, self.w_k, self.w_v = self.w_qkv[:, :q_end], self.w_qkv[:, q_end:k_end], self.w_qkv[:, k_end:]
        self.b_qkv = None
        if self.b_q is not None or self.b_k is not None or self.b_v is not None:
            self.b_qkv = np.concatenate([np.zeros(w.shape[1], np.float32) if b is None else b for w, b in
                                         ((self.w_q, self.b_q), (self.w_k, self.b_k), (self.w_v, self.b_v))])


@dataclass
class ModelWeights:
    """Embeddings, blocks and head of one model, float32."""

    arch: Architecture
    token_embedding: np.ndarray                   # vocab × d_model
    layers: list[LayerWeights] = field(default_factory=list)
    position_embedding: np.ndarray | None = None  # max_positions × d_model (BERT, GPT-2)
    type_embedding: np.ndarray | None = None      # BERT's segment A row, d_model
    embedding_norm: np.ndarray | None = None      # BERT normalises the embeddings
    embedding_norm_bias: np.ndarray | None = None
    final_norm: np.ndarray | None = None          # GPT-2 and Llama normalise after the last block
    final_norm_bias: np.ndarray | None = None
    lm_head: np.ndarray | None = None             # vocab × d_model; None: tied to token_embedding


class TensorSource:
    """The named tensors of a checkpoint with their checks: a missing name, a wrong shape or a value
    that is not finite is a ModelError naming the file and the tensor.

    `shapes` is the file's index (name → shape, read from its header); `load(name)` reads one
    tensor. A shape is checked against the architecture before the tensor is read, so a header
    claiming a 16 GB tensor is refused without allocating it, and tensors the model does not use
    (a BERT pooler, say) are never read.
    """

    def __init__(self, file_name: str, shapes: Mapping[str, tuple[int, ...]], load: Callable[[str], np.ndarray]):
        self.file_name = file_name
        self.shapes = shapes
        self._load = load

    def has(self, name: str) -> bool:
        return name in self.shapes

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.shapes[name])

    def check(self, name: str, shape: tuple[int, ...]) -> None:
        """Tensor `name` is in the file with `shape` (from the header alone: nothing is read)."""
        if name not in self.shapes:
            raise ModelError(f"{self.file_name}: tensor {name!r} is missing; the file is incomplete or not "
                             f"a checkpoint of this architecture")
        if self.shape(name) != tuple(shape):
            raise ModelError(f"{self.file_name}: tensor {name!r} has shape {self.shape(name)}, expected "
                             f"{tuple(shape)} from the model's configuration")

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The float32 tensor `name`, which must have `shape` and hold only finite numbers."""
        self.check(name, shape)
        with np.errstate(all="ignore"):  # a damaged block may dequantise to inf · 0: checked just below
            array = self._load(name)
            array = array if array.dtype == np.float32 else array.astype(np.float32)
            # a float64 sum of float32 values cannot overflow, and a NaN or infinity anywhere carries through
            finite = np.isfinite(array.sum(dtype=np.float64))
        if not finite:
            raise ModelError(f"{self.file_name}: tensor {name!r} holds values that are not numbers (NaN) or "
                             f"infinite; the file is damaged, download it again")
        return array

    def optional(self, name: str, shape: tuple[int, ...]) -> np.ndarray | None:
        return self.get(name, shape) if name in self.shapes else None

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
