"""What a census runs on: a real pretrained model or a toy model, behind one small interface.

A subject runs one text and hands back its tokens and, layer by layer, the attention weights
(heads, n, n); it names the words of its vocabulary that are one token each (for the battery's
random sequences), a fingerprint of its weights (for the cache) and the measures that do not apply to
its heads, each with why. Real decoders also give the next-token loss (see next_token_loss), for
switching heads off.

An encoder–decoder (BART) is a subject per part: its encoder's self-attention, its decoder's causal
self-attention or its cross-attention. It reads each text as both source and target (BART is trained
to write its source back), so every part sees the same text; cross-attention's rows are the target's
tokens as the decoder reads them, its columns the source's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ..attention import run as run_toy
from ..errors import ModelError
from ..model import ToyModel, model_to_dict
from ..options import Options
from .alignment import same_token_pattern
from .detection import Pattern
from .measures import CROSS_KEYS, WITHIN_ONE_TEXT

HASH_CHUNK = 1 << 20
_PLAIN_WORD = re.compile(r"[a-z]{3,12}")
WORD_START_MARKERS = ("Ġ", "▁")


@dataclass(frozen=True)
class TextRun:
    """One text through a subject."""

    ids: np.ndarray            # token ids of the rows, the tokens looking (equal ids: the same token)
    labels: list[str]          # tidy tokens looked at, as the window shows them (the rows' but in cross-attention)
    special: np.ndarray        # bool per token looked at
    truncated: bool            # the text was cut at the model's longest
    layer: Callable[[int], np.ndarray]   # layer index → its weights, (heads, n, n) or (heads, n, n_keys)
    n_keys: int | None = None  # the tokens looked at when they are another text's (cross-attention), else None
    patterns: dict[str, Pattern] = field(default_factory=dict)  # detection patterns the subject worked out

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


ONE_TEXT = {key: "cross-attention only: it compares a target with its source" for key in CROSS_KEYS}


class RealSubject:
    """A PretrainedModel (engine.pretrained) as a census subject."""

    not_applicable = ONE_TEXT  # measure → why it does not apply to these heads

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

    not_applicable = ONE_TEXT

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


class EncoderDecoderSubject(RealSubject):
    """One part of an encoder–decoder (an EncoderDecoderPart: its model and which attention) as a census
    subject: that part's layers and heads, each text read as both source and target. No next-token loss
    is offered for switching heads off (the census reads its decoder on the text it is given back)."""

    PART_NAMES = {"encoder": "encoder self-attention", "decoder": "decoder self-attention",
                  "cross": "cross-attention"}
    WITHIN = {key: "within one text only: cross-attention's rows are the target and its columns the source"
              for key in WITHIN_ONE_TEXT}

    def __init__(self, part):
        self.model, self.part = part.model, part.part
        self.name = f"{part.name} ({self.PART_NAMES[self.part]})"
        self.n_layers, self.n_heads = part.n_layers, part.n_heads
        self.causal = self.part == "decoder"
        self.has_loss = False
        self.not_applicable = self.WITHIN if self.part == "cross" else ONE_TEXT

    def run(self, text: str, ablate=frozenset(), progress=None) -> TextRun:
        result = self.model.run(text, text, frozenset((self.part, layer, head) for layer, head in ablate))
        source, target = result.source, result.target
        truncated = source.truncated or target.truncated
        if self.part == "encoder":
            return TextRun(source.ids, source.labels, source.special, truncated,
                           lambda layer: result.encoder_attention[layer])
        if self.part == "decoder":
            return TextRun(target.ids, target.labels, target.special, truncated,
                           lambda layer: result.decoder_attention[layer])
        written = self.model.tokenizer.encode(text)  # what the decoder writes at each of its rows
        patterns = {"cross_own": same_token_pattern(target.ids, target.special, source.ids, source.special),
                    "cross_next": same_token_pattern(written.ids, written.special, source.ids, source.special)}
        return TextRun(target.ids, source.labels, source.special, truncated,
                       lambda layer: result.cross_attention[layer], len(source.ids), patterns)

    def fingerprint(self) -> str:
        """The model's files' and the part's: each part's census is kept apart."""
        return hashlib.sha256(f"{super().fingerprint()} {self.part}".encode()).hexdigest()


def subject_for(model, options: Options | None = None):
    """The census subject of a toy model (with its options), a real one, or one part of an encoder–decoder."""
    if isinstance(model, ToyModel):
        return ToySubject(model, options)
    return EncoderDecoderSubject(model) if getattr(model, "is_encoder_decoder", False) else RealSubject(model)
