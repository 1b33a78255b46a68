"""Opening a real model (an HF folder of any family in families/, or a GGUF file of one of them) and
running a text through it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ModelError, OptionsError
from ..lazy_trace import LazyTrace
from ..limits import MAX_REAL_TOKENS
from ..threads import use_one_blas_thread
from ..weight_memo import per_weight
from .catalog import known_model_opened_by, known_model_path
from .dependencies import require
from .forward import forward
from .generation_info import GenerationInfo, folder_generation_info, gguf_generation_info
from .gguf_model import architecture_from_gguf, read_gguf_weights
from .gguf_reader import GGUFFile
from .hf_folder import read_hf_folder
from .progress import Progress, report
from .real_trace import NextToken, PretrainedTrace, likeliest_tokens, make_labels
from .recompute import whole_layer_fits
from .stored_layers import StoredLayers
from .tokenizing import Encoded, TextTokenizer
from .weights import Architecture, ModelWeights, ShapeOfArchitecture, all_finite

FLOAT32_MAX = float(np.finfo(np.float32).max)
# From this many tokens a text's layer inputs outgrow a small decoder's layers (SmolLM2: 276 MiB at
# 4,096 tokens against 404 MiB of layers), and a model converted at open keeps only a few of its layers
# made while it reads one (stored_layers.py): SmolLM2 in the window at 8,192 tokens then peaks under
# 2.5 GB, at ~17 ms a layer converted again.
FEW_LAYERS_FROM_TOKENS = 4_096


def hold_layers(weights: ModelWeights, every_layer: bool) -> None:
    """Keep every layer of a model converted at open made, or only a few (a long text: see
    FEW_LAYERS_FROM_TOKENS); layers kept stored, or a plain list of them, stay as they are."""
    if isinstance(weights.layers, StoredLayers):
        weights.layers.hold_all(every_layer)


@dataclass
class PretrainedModel(ShapeOfArchitecture):
    """A real model ready to run: its weights, its tokenizer, where it came from and (decoders) what
    ends its writing and its chat template."""

    name: str
    path: Path
    weights: ModelWeights
    tokenizer: TextTokenizer
    generation: GenerationInfo = field(default_factory=GenerationInfo)

    is_encoder_decoder = False  # one text in, its attention out (encoder_decoder_view.py: the other kind)

    def __post_init__(self):
        use_one_blas_thread()  # every product of a real model is one a thread of its own runs faster

    @property
    def arch(self) -> Architecture:
        return self.weights.arch

    @property
    def family(self) -> str:
        return self.arch.family

    @property
    def kind(self) -> str:
        return self.arch.kind

    @property
    def is_decoder(self) -> bool:
        return self.arch.is_decoder

    @property
    def max_tokens(self) -> int:
        return self.tokenizer.max_tokens

    def run(self, text: str, ablate: frozenset[tuple[int, int]] = frozenset(),
            progress: Progress | None = None, previous: PretrainedTrace | None = None,
            show_layer: int | None = None) -> PretrainedTrace:
        """Tokenise `text` and run the model; `ablate` switches off (layer, head) pairs (0-based).

        `previous`, an earlier run of this model: when it read the same tokens, the layers before the
        first one whose heads are switched differently are taken from it (an ablation in layer 20 runs
        10 layers of 30); when a decoder's earlier run began with the same tokens, with the same heads
        off, those tokens' layer inputs are (forward's `prefix`: a word typed at the end reads that
        word). `show_layer`, the layer the window draws next: while its weights are small, the trace
        holds them as the forward made them (forward's `show_layer`). Raises SentenceError for text that
        gives no tokens, OptionsError for a head
        that does not exist, Cancelled when `progress` (told of every layer) answers False.
        """
        ablate = self.checked_heads(ablate)
        encoded = self.tokenizer.encode(text)
        hold_layers(self.weights, every_layer=len(encoded.ids) < FEW_LAYERS_FROM_TOKENS)
        resume = prefix = None
        if previous is not None and previous.model is self.weights and previous.forward_result.at_once is None:
            # (not a generation's reading of them, under a rotary scaling that follows the text's length)
            if np.array_equal(previous.encoded.ids, encoded.ids):
                changed = [layer for layer, _head in ablate ^ previous.ablated]
                resume = (previous.forward_result, min(changed, default=self.n_layers - 1))
            elif self.arch.is_decoder and ablate == previous.ablated and not _turned_by_length(self.arch):
                kept = min(shared_start(previous.encoded.ids, encoded.ids), len(encoded.ids) - 1)
                prefix = (previous.forward_result, kept) if kept > 0 else None
        # damaged weights may overflow: the result is checked, so NumPy's warnings would only add noise
        with np.errstate(all="ignore"):
            kept = show_layer if show_layer is not None and whole_layer_fits(self.arch, len(encoded.ids)) else None
            result = forward(self.weights, encoded.ids, ablate, progress, resume, encoded.special, prefix=prefix,
                             show_layer=kept)
        if result.overflow:
            raise overflow_error(self.name, result.overflow)
        return CheckedTrace(
            model_name=self.name, text=text, encoded=encoded, labels=make_labels(encoded), ablated=ablate,
            next_tokens=self.likeliest_next(result.next_logits, encoded), model=self.weights, forward_result=result,
        )

    def checked_heads(self, ablate) -> frozenset[tuple[int, int]]:
        """`ablate` as a set of (layer, head) pairs; OptionsError for a head the model does not have."""
        ablate = frozenset(ablate)
        for layer, head in ablate:
            if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
                raise OptionsError(f"no head {head + 1} in layer {layer + 1}: {self.name} has {self.n_layers} "
                                   f"layers of {self.n_heads} heads")
        return ablate

    def likeliest_next(self, logits: np.ndarray | None, after: Encoded | None = None) -> tuple[NextToken, ...]:
        """The five likeliest tokens after the text `after` (labelled as written after it)."""
        return () if logits is None else likeliest_tokens(self.tokenizer, logits, after=after)


def open_pretrained(path_or_name: str | Path, progress: Progress | None = None,
                    weights: str = "auto") -> PretrainedModel:
    """A real model: a known one by name ("MiniLM-L6 (encoder)"), an HF folder (config.json,
    *.safetensors, tokenizer.json) or a .gguf file of an architecture gguf_families.py maps to a family.
    `weights` ("auto", "float32", "stored"): converted to float32 at open, the fastest forward, or kept
    as the file stores them and converted a layer at a time as they are computed, in less memory than
    the file's size; "auto" chooses float32 when it fits well in the memory free (weights.choose_mode).

    Raises ModelError (naming the file and the field) for anything unusable, Cancelled when
    `progress` answers False.
    """
    known = known_model_opened_by(str(path_or_name))
    path = known_model_path(known) if known else Path(path_or_name)
    name = known.name if known else path.name
    report(progress, 0.0, f"opening {path.name}")
    require("tokenizers", "reading a real model's tokenizer")  # before any waiting, not after
    if path.is_dir():
        model = read_hf_folder(path, progress, weights)
        arch = model.arch
        tokenizer = TextTokenizer.from_file(path / "tokenizer.json", _max_tokens(arch), arch.vocab_size,
                                            keep_end=arch.is_decoder)
        generation = folder_generation_info(path, arch.vocab_size, tokenizer.token_id) if arch.is_decoder \
            else GenerationInfo()
    elif not os.path.lexists(path):
        raise ModelError(f"{path}: no such file or folder")
    elif path.suffix.lower() == ".gguf":  # a pipe, a device or a loop of links is refused by the reader
        gguf = GGUFFile(path)  # the tokenizer first: a bad one fails before a second of dequantising
        arch = architecture_from_gguf(gguf, weights)
        tokenizer = TextTokenizer.from_gguf(gguf.metadata, gguf.name, _max_tokens(arch), arch.vocab_size,
                                            keep_end=arch.is_decoder)
        generation = gguf_generation_info(gguf.metadata, gguf.name, gguf.metadata["tokenizer.ggml.tokens"]) \
            if arch.is_decoder else GenerationInfo()
        model = read_gguf_weights(gguf, progress, weights)
    else:
        raise ModelError(f"{path.name}: not a model; open a folder with config.json, *.safetensors and "
                         f"tokenizer.json, or a .gguf file")
    report(progress, 1.0, "ready")
    return PretrainedModel(name, path, model, tokenizer, generation)


class CheckedTrace(PretrainedTrace):
    """A PretrainedTrace whose layers are checked as they are made for the views and the files.

    A layer's q, k, v and scores are made again from the layer's input (see real_trace); products of
    damaged, huge weights can overflow there (the unscaled scores are √d_head times the forward's)
    even when the forward's own numbers stayed finite, so a layer that would hold a NaN or an infinity
    is refused rather than drawn or written. Its n × n matrices are made only when a view reads them,
    so they are bounded here instead: |q·k| ≤ ‖q‖·‖k‖, and a head's output row is an average of value
    rows."""

    def _make_layer_trace(self, layer: int) -> LazyTrace:
        """The layer's trace, checked as it is made: the trace keeps it (layer_trace) only once checked,
        so a layer refused is refused again at each asking, and one kept is not checked again."""
        group = self.model.arch.group
        with np.errstate(all="ignore"):  # an overflow is refused just below, not warned about
            trace = super()._make_layer_trace(layer)
            finite = all(all_finite(a) for a in (trace.x, *_row_arrays(trace, group)))
            if finite and not _products_bounded(trace, group):  # only damaged weights get here: every number
                finite = all(all_finite(head.scores) for head in trace.heads) and all_finite(trace.output)
        if not finite:
            raise overflow_error(self.model_name, f"layer {layer + 1}'s queries, keys, values or scores")
        return trace


def _row_arrays(trace: LazyTrace, group: int) -> list[np.ndarray]:
    """Every head's q, and k and v once a group of heads that share them."""
    return [head.q for head in trace.heads] + [a for head in trace.heads[::group] for a in (head.k, head.v)]


def _longest_row(values: np.ndarray) -> float:
    """The largest length of a row, from float32 sums of squares: infinite once a square overflows, which
    sends the caller to look at every number (see _products_bounded's margin for their rounding)."""
    return float(np.sqrt(np.einsum("nd,nd->n", values, values).max(initial=0.0)))


def _products_bounded(trace: LazyTrace, group: int) -> bool:
    """Whether no score q·k and no output concat·W_O can overflow float32, by Cauchy–Schwarz, from the
    rows' lengths (n × d work instead of n × n). The lengths are float32 sums, a few units in the
    last place off: a bound within half the largest float32 leaves them room."""
    limit = FLOAT32_MAX / 2
    keys = [_longest_row(head.k) for head in trace.heads[::group]]
    if not all(_longest_row(head.q) * keys[h // group] < limit for h, head in enumerate(trace.heads)):
        return False
    largest_value = max(max(abs(float(head.v.max(initial=0.0))), abs(float(head.v.min(initial=0.0))))
                        for head in trace.heads[::group])
    concat_row = largest_value * np.sqrt(len(trace.heads) * trace.heads[0].d_k)
    column = longest_column(trace.w_o)
    bias = 0.0 if trace.b_o is None else float(np.abs(trace.b_o).max())
    return bool(concat_row * column + bias < limit)


@per_weight
def longest_column(w_o: np.ndarray) -> float:
    """The largest length of a column of W_O, made once per layer of a model, not each time the layer is
    shown (0.12 ms of MiniLM's, 0.16 of SmolLM2's)."""
    return float(np.sqrt(np.square(w_o, dtype=np.float64).sum(axis=0).max()))


def overflow_error(name: str, where: str) -> ModelError:
    return ModelError(f"{name}: the model's numbers overflow on this text (not a number or infinite in {where}); "
                      f"its weights are damaged or not this model's")


def shared_start(a: np.ndarray, b: np.ndarray) -> int:
    """How many tokens two texts' ids share from their start."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differ[0]) if len(differ) else n


def _turned_by_length(arch: Architecture) -> bool:
    """Whether a token's rotary angles depend on the whole text's length (a scaling by length, rope.py):
    then a token's numbers depend on tokens after it, and no earlier reading's can be kept."""
    return arch.rope_scaling is not None and arch.rope_scaling.by_length


def _max_tokens(arch: Architecture) -> int:
    """An encoder reads its whole position table, a decoder its whole context (see limits.py)."""
    return min(arch.max_positions, MAX_REAL_TOKENS)

