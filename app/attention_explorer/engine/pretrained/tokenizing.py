"""Text → tokens with the model's own tokenizer (the `tokenizers` library), and labels a reader can use.

Labels drop the markers tokenizers use for word boundaries (WordPiece `##`, byte-level `Ġ`,
SentencePiece `▁`): a piece that continues the word before it is shown as `·piece`, specials keep
their own text and are flagged. A byte-level piece holding part of a character shows those bytes
(`\xc3`), so the pieces of one character stay told apart. Words (runs of pieces) are what merging subwords sums over.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelError, SentenceError
from .dependencies import require

CONTINUATION = "·"  # marks a piece that continues the word before it: "play", "·ing"
_WORD_START = ("Ġ", "▁")
_SHOWN_WHITESPACE = {"\n": "↵", "\t": "⇥", "\r": "↵"}


@dataclass(frozen=True)
class Encoded:
    """A text as the model sees it."""

    ids: np.ndarray                        # token ids, int64
    pieces: list[str]                      # the tokenizer's own strings ("Ġcat", "##ing")
    labels: list[str]                      # tidy: "cat", "·ing", "[CLS]"
    special: np.ndarray                    # True for special tokens ([CLS], <|im_start|>, …)
    words: tuple[tuple[int, ...], ...]     # token indices of each word, in order; a special is its own word
    truncated: bool                        # the text was longer than the model takes


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet back to bytes (printable bytes stand for themselves, others shifted)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, shifted = list(printable), 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + shifted)
            shifted += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


_BYTES = _byte_decoder()


class TextTokenizer:
    """A `tokenizers.Tokenizer` set up for one sentence at a time: no padding, truncation at `max_tokens`."""

    def __init__(self, tokenizer, max_tokens: int):
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_tokens)
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.byte_level = type(tokenizer.decoder).__name__ == "ByteLevel"
        self.special_ids = {i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special}

    @classmethod
    def from_file(cls, path: Path, max_tokens: int) -> TextTokenizer:
        tokenizers = require("tokenizers", "reading a real model's tokenizer")
        if not Path(path).is_file():
            raise ModelError(f"{Path(path).parent}: no tokenizer.json; the model folder needs its tokenizer")
        try:
            return cls(tokenizers.Tokenizer.from_file(str(path)), max_tokens)
        except Exception as error:  # the library raises its own exception type for any bad file
            raise ModelError(f"{Path(path).name}: cannot read the tokenizer ({error})") from error

    @classmethod
    def from_gguf(cls, metadata: dict, file_name: str, max_tokens: int) -> TextTokenizer:
        """A byte-level BPE tokenizer rebuilt from a GGUF file's `tokenizer.ggml.*` metadata."""
        tk = require("tokenizers", "reading a real model's tokenizer")
        kind = metadata.get("tokenizer.ggml.model")
        if kind != "gpt2":
            raise ModelError(f"{file_name}: 'tokenizer.ggml.model' is {kind!r}; only byte-level BPE ('gpt2') "
                             f"tokenizers are supported in GGUF files")
        tokens, merges = metadata.get("tokenizer.ggml.tokens"), metadata.get("tokenizer.ggml.merges")
        if not tokens or not merges:
            raise ModelError(f"{file_name}: metadata field 'tokenizer.ggml.tokens' or 'tokenizer.ggml.merges' "
                             f"is missing")
        bpe = tk.models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                            merges=[tuple(m.split(" ", 1)) for m in merges])
        tokenizer = tk.Tokenizer(bpe)
        byte_level = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        # llama.cpp's "smollm" (and "starcoder") pre-tokenizer splits every digit off before GPT-2's rule.
        digits = metadata.get("tokenizer.ggml.pre") in ("smollm", "starcoder", "refact")
        tokenizer.pre_tokenizer = (tk.pre_tokenizers.Sequence([tk.pre_tokenizers.Digits(individual_digits=True),
                                                                byte_level]) if digits else byte_level)
        tokenizer.decoder = tk.decoders.ByteLevel()
        types = metadata.get("tokenizer.ggml.token_type") or []
        specials = [tokens[i] for i, t in enumerate(types) if t == 3]  # 3: control tokens
        tokenizer.add_special_tokens([tk.AddedToken(s, special=True, normalized=False) for s in specials])
        bos = metadata.get("tokenizer.ggml.bos_token_id")
        if metadata.get("tokenizer.ggml.add_bos_token") and bos is not None:
            tokenizer.post_processor = tk.processors.TemplateProcessing(
                single=f"{tokens[bos]} $A", special_tokens=[(tokens[bos], bos)])
        return cls(tokenizer, max_tokens)

    def encode(self, text: str) -> Encoded:
        encoding = self.tokenizer.encode(text)
        if not encoding.ids or not text.strip():
            raise SentenceError("there is no text to look at: type a sentence")
        pieces = list(encoding.tokens)
        special = np.array([i in self.special_ids for i in encoding.ids], dtype=bool)
        continues = self._continuations(pieces, special, encoding.word_ids)
        labels = [piece if is_special else (CONTINUATION if cont else "") + self._tidy(piece)
                  for piece, is_special, cont in zip(pieces, special, continues, strict=True)]
        words: list[list[int]] = []
        for i, cont in enumerate(continues):
            if cont:
                words[-1].append(i)
            else:
                words.append([i])
        return Encoded(np.array(encoding.ids, dtype=np.int64), pieces, labels, special,
                       tuple(tuple(w) for w in words), bool(encoding.overflowing))

    def token_text(self, token_id: int) -> str:
        """What one token writes (e.g. " mat"), for the next-token list."""
        return self.tokenizer.decode([int(token_id)], skip_special_tokens=False)

    def token_label(self, token_id: int) -> str:
        piece = self.tokenizer.id_to_token(int(token_id)) or ""
        return piece if int(token_id) in self.special_ids else self._tidy(piece)

    @staticmethod
    def _continuations(pieces: list[str], special: np.ndarray, word_ids: list) -> list[bool]:
        """A piece continues the previous one when both are ordinary and the pre-tokenizer kept them in one word."""
        result = [False] * len(pieces)
        for i in range(1, len(pieces)):
            result[i] = (not special[i] and not special[i - 1] and word_ids[i] is not None
                         and word_ids[i] == word_ids[i - 1] and not pieces[i].startswith(_WORD_START))
        return result

    def _tidy(self, piece: str) -> str:
        if self.byte_level:
            piece = bytes(_BYTES.get(c, 63) for c in piece).decode("utf-8", errors="backslashreplace")
        text = piece.removeprefix("##").replace("▁", " ")
        stripped = text.strip(" ")
        if not stripped:
            return "␣" * max(len(text), 1)
        for char, shown in _SHOWN_WHITESPACE.items():
            stripped = stripped.replace(char, shown)
        return stripped

