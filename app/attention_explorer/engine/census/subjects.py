"""What a census runs on: a real pretrained model or a toy model, behind one small interface.

A subject runs one text and hands back its tokens and, layer by layer, the attention weights
(heads, n, n); it names the words of its vocabulary that are one token each (for the battery's
random sequences) and a fingerprint of its weights (for the cache). Real decoders also give the
next-token loss (see next_token_loss), for switching heads off.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..attention import run as run_toy
from ..errors import ModelError
from ..model import ToyModel, model_to_dict
from ..options import Options

HASH_CHUNK = 1 << 20
_PLAIN_WORD = re.compile(r"[a-z]{3,12}")
WORD_START_MARKERS = ("Ġ", "▁")


@dataclass(frozen=True)
class TextRun:
    """One text through a subject."""

    ids: np.ndarray            # token ids (equal ids: the same token)
    labels: list[str]          # tidy tokens, as the window shows them
    special: np.ndarray        # bool per token
    truncated: bool            # the text was cut at the model's longest
    layer: Callable[[int], np.ndarray]   # layer index → its weights, (heads, n, n)

    @property
    def n(self) -> int:
        return len(self.ids)


def fingerprint_path(path: Path) -> str:
    """sha256 of a model's files: a .gguf file, or a folder's config, tokenizer and safetensors (by
    name and content). Read in 1 MB pieces: a 100 MB model takes a fraction of a second."""
    digest = hashlib.sha256()
    try:
        files = [path] if path.is_file() else sorted(
            p for p in path.iterdir() if p.name in ("config.json", "tokenizer.json") or p.suffix == ".safetensors")
        for file in files:
            digest.update(file.name.encode() + b"\0")
            with open(file, "rb") as handle:
                while chunk := handle.read(HASH_CHUNK):
                    digest.update(chunk)
    except OSError as error:
        raise ModelError(f"{path}: its files cannot be read again ({error.strerror or error}); open the model "
                         f"again") from None
    return digest.hexdigest()


class RealSubject:
    """A PretrainedModel (engine.pretrained) as a census subject."""

    def __init__(self, model):
        self.model = model
        self.name = model.name
        self.n_layers, self.n_heads = model.n_layers, model.n_heads
        self.causal = model.is_decoder
        self.has_loss = model.is_decoder

    def run(self, text: str, ablate=frozenset(), progress=None) -> TextRun:
        ptrace = self.model.run(text, ablate, progress)
        return TextRun(ptrace.encoded.ids, ptrace.tokens, ptrace.special, ptrace.encoded.truncated,
                       ptrace.layer_weights)

    def fingerprint(self) -> str:
        return fingerprint_path(Path(self.model.path))

    @cached_property
    def candidate_words(self) -> list[str]:
        """Lower-case words of 3–12 letters that the vocabulary holds as one piece starting a word:
        "Ġlamp" or "▁lamp" where pieces carry a word-start marker (byte-level BPE, SentencePiece),
        "lamp" where they do not (WordPiece, whose continuing pieces start with ##)."""
        tokenizer = self.model.tokenizer
        vocabulary = tokenizer.tokenizer.get_vocab(with_added_tokens=False)
        pieces = [piece for piece, token_id in vocabulary.items() if token_id not in tokenizer.special_ids]
        marked = [piece[1:] for piece in pieces if piece[:1] in WORD_START_MARKERS]
        plain = marked if marked else pieces
        return sorted({word for word in plain if _PLAIN_WORD.fullmatch(word)})

    def is_one_token(self, word: str) -> bool:
        """Whether " word" reads back as one ordinary token (some vocabulary entries do not)."""
        encoded = self.model.tokenizer.encode(" " + word)
        return int((~encoded.special).sum()) == 1

    def next_token_losses(self, text: str, ablate=frozenset()) -> tuple[np.ndarray, np.ndarray]:
        """The text's token ids and its next-token losses (see next_token_loss) with `ablate` off."""
        from .next_token_loss import next_token_losses

        ptrace = self.model.run(text, ablate)
        return ptrace.encoded.ids, next_token_losses(self.model, ptrace)


class ToySubject:
    """A toy model (one layer) with its options as a census subject. Token ids are the words'
    places in the vocabulary; a toy model has no next-token head, so no loss."""

    def __init__(self, model: ToyModel, options: Options | None = None):
        self.model = model
        self.options = model.default_options if options is None else options
        self.name = model.name
        self.n_layers, self.n_heads = 1, self.options.heads
        self.causal = self.options.causal
        self.has_loss = False
        self._index = {word: i for i, word in enumerate(sorted(model.vocabulary))}

    def run(self, text: str, ablate=frozenset(), progress=None) -> TextRun:
        trace = run_toy(self.model, text, self.options)
        weights = np.stack([head.weights for head in trace.heads])
        return TextRun(np.array([self._index[t] for t in trace.tokens]), list(trace.tokens),
                       np.zeros(trace.n, dtype=bool), False, lambda _layer: weights)

    def fingerprint(self) -> str:
        data = {"model": model_to_dict(self.model), "options": [self.options.scale, self.options.causal,
                                                                self.options.positional, self.options.heads]}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    @property
    def candidate_words(self) -> list[str]:
        return sorted(self.model.vocabulary)

    def is_one_token(self, word: str) -> bool:
        return word in self.model.vocabulary


def subject_for(model, options: Options | None = None):
    """The census subject of a toy model (with its options) or of a real one."""
    return ToySubject(model, options) if isinstance(model, ToyModel) else RealSubject(model)
