"""Opening a real model (an HF folder or a Llama GGUF file) and running a text through it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelError, OptionsError
from ..threads import single_blas_thread
from ..trace import Trace
from .catalog import KNOWN_MODELS, known_model_path
from .dependencies import require
from .forward import ForwardResult, forward
from .gguf_model import architecture_from_gguf, read_gguf_weights
from .gguf_reader import GGUFFile
from .hf_folder import read_hf_folder
from .progress import Progress, report
from .real_trace import NextToken, PretrainedTrace, make_labels
from .tokenizing import TextTokenizer
from .weights import FAMILY_KINDS, Architecture, ModelWeights

# Longest texts: an encoder takes its whole position table (512 for BERT); a decoder keeps the
# weights of many more layers and heads, so it stops at 256 tokens to stay within memory.
ENCODER_MAX_TOKENS = 512
DECODER_MAX_TOKENS = 256
TOP_NEXT_TOKENS = 5


@dataclass
class PretrainedModel:
    """A real model ready to run: its weights, its tokenizer and where it came from."""

    name: str
    path: Path
    weights: ModelWeights
    tokenizer: TextTokenizer

    @property
    def arch(self) -> Architecture:
        return self.weights.arch

    @property
    def family(self) -> str:
        return self.arch.family

    @property
    def kind(self) -> str:
        return FAMILY_KINDS[self.family]

    @property
    def is_decoder(self) -> bool:
        return self.arch.is_decoder

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

    @property
    def max_tokens(self) -> int:
        return self.tokenizer.max_tokens

    def run(self, text: str, ablate: frozenset[tuple[int, int]] = frozenset(),
            progress: Progress | None = None) -> PretrainedTrace:
        """Tokenise `text` and run the model; `ablate` switches off (layer, head) pairs (0-based).

        Raises SentenceError for text that gives no tokens, OptionsError for a head that does not exist,
        Cancelled when `progress` (told of every layer) answers False.
        """
        ablate = frozenset(ablate)
        for layer, head in ablate:
            if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
                raise OptionsError(f"no head {head + 1} in layer {layer + 1}: {self.name} has {self.n_layers} "
                                   f"layers of {self.n_heads} heads")
        encoded = self.tokenizer.encode(text)
        # damaged weights may overflow: the result is checked, so NumPy's warnings would only add noise
        with single_blas_thread(), np.errstate(all="ignore"):
            result = forward(self.weights, encoded.ids, ablate, progress)
        _check_finite(self.name, result)
        return CheckedTrace(
            model_name=self.name, text=text, encoded=encoded, labels=make_labels(encoded), weights=result.weights,
            ablated=ablate, next_tokens=self._next_tokens(result.next_logits), model=self.weights,
            forward_result=result,
        )

    def _next_tokens(self, logits: np.ndarray | None) -> tuple[NextToken, ...]:
        if logits is None:
            return ()
        logits = logits.astype(np.float64)
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        best = np.argsort(probabilities)[::-1][:TOP_NEXT_TOKENS]
        return tuple(NextToken(int(i), self.tokenizer.token_text(i), self.tokenizer.token_label(i),
                               float(probabilities[i])) for i in best)


def open_pretrained(path_or_name: str | Path, progress: Progress | None = None) -> PretrainedModel:
    """A real model: a known one by name ("MiniLM-L6 (encoder)"), an HF folder (config.json,
    *.safetensors, tokenizer.json) or a Llama .gguf file.

    Raises ModelError (naming the file and the field) for anything unusable, Cancelled when
    `progress` answers False.
    """
    known = str(path_or_name) in {m.name for m in KNOWN_MODELS}
    path = known_model_path(str(path_or_name)) if known else Path(path_or_name)
    name = str(path_or_name) if known else path.name
    report(progress, 0.0, f"opening {path.name}")
    require("tokenizers", "reading a real model's tokenizer")  # before any waiting, not after
    if path.is_dir():
        weights = read_hf_folder(path, progress)
        arch = weights.arch
        tokenizer = TextTokenizer.from_file(path / "tokenizer.json", _max_tokens(arch), arch.vocab_size,
                                            keep_end=arch.is_decoder)
    elif not os.path.lexists(path):
        raise ModelError(f"{path}: no such file or folder")
    elif path.suffix.lower() == ".gguf":  # a pipe, a device or a loop of links is refused by the reader
        gguf = GGUFFile(path)  # the tokenizer first: a bad one fails before a second of dequantising
        arch = architecture_from_gguf(gguf)
        tokenizer = TextTokenizer.from_gguf(gguf.metadata, gguf.name, _max_tokens(arch), arch.vocab_size)
        weights = read_gguf_weights(gguf, progress)
    else:
        raise ModelError(f"{path.name}: not a model; open a folder with config.json, *.safetensors and "
                         f"tokenizer.json, or a .gguf file")
    report(progress, 1.0, "ready")
    return PretrainedModel(name, path, weights, tokenizer)


def _check_finite(name: str, result: ForwardResult) -> None:
    """No NaN or infinity may reach a trace, a view or a file: a forward that overflowed is refused.
    (Each weight is finite once loaded, but products of damaged, huge ones can still overflow.)"""
    for index, x in enumerate(result.attn_inputs):
        with np.errstate(all="ignore"):
            finite = np.isfinite(x).all() and np.isfinite(result.weights[index].sum(dtype=np.float64))
        if not finite:
            raise _overflowed(name, f"layer {index + 1}")
    if result.next_logits is not None and not np.isfinite(result.next_logits).all():
        raise _overflowed(name, "the next-token scores")


class CheckedTrace(PretrainedTrace):
    """A PretrainedTrace whose layers are checked as they are made for the views and the files.

    A layer's q, k, v and scores are recomputed from the layer's input (see real_trace); products of
    damaged, huge weights can overflow there (the unscaled scores are √d_head times the forward's)
    even when the forward's own numbers stayed finite, so a layer that holds a NaN or an infinity is
    refused rather than drawn or written."""

    def layer_trace(self, layer: int) -> Trace:
        with np.errstate(all="ignore"):  # an overflow is refused just below, not warned about
            trace = super().layer_trace(layer)
            arrays = [trace.x, trace.concat, trace.output]
            for head in trace.heads:
                arrays += [head.q, head.k, head.v, head.scores, head.scaled, head.weights, head.output]
            finite = all(np.isfinite(a.sum(dtype=np.float64)) for a in arrays)
        if not finite:
            raise _overflowed(self.model_name, f"layer {layer + 1}'s queries, keys, values or scores")
        return trace


def _overflowed(name: str, where: str) -> ModelError:
    return ModelError(f"{name}: the model's numbers overflow on this text (not a number or infinite in {where}); "
                      f"its weights are damaged or not this model's")


def _max_tokens(arch: Architecture) -> int:
    return min(arch.max_positions, DECODER_MAX_TOKENS if arch.is_decoder else ENCODER_MAX_TOKENS)

