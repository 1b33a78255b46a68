"""Text → tokens with the model's own tokenizer (the `tokenizers` library), and labels a reader can use.

Labels drop the markers tokenizers use for word boundaries (WordPiece `##`, byte-level `Ġ`,
SentencePiece `▁`): a piece that continues the word before it is shown as `·piece`, specials keep
their own text and are flagged. A byte-level piece holding part of a character shows those bytes
(`\xc3`), so the pieces of one character stay told apart. Words (runs of pieces) are what merging subwords sums over.
"""

from __future__ import annotations

import bisect
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import ModelError, SentenceError
from ..limits import MAX_TOKENIZER_BYTES, MIN_TOKENIZER_VALUES, TOKENIZER_VALUES_PER_TOKEN, max_text_chars
from ..safe_read import json_values_at_most, read_user_text
from ..tokenizer import check_text
from .dependencies import require
from .fields import shown
from .gguf_tokenizer import gguf_tokenizer_builder

CONTINUATION = "·"  # marks a piece that continues the word before it: "play", "·ing"
WRITTEN_MARK = "›"  # before a token a model wrote (after the "·" of a piece that continues a word)
_WORD_START = ("Ġ", "▁")
_SHOWN_WHITESPACE = {"\n": "↵", "\t": "⇥", "\r": "↵"}
# every other control character as its Unicode picture ("\x0b" → "␋"): drawn, it showed as nothing or a
# box, and written into an SVG it made the file ill-formed XML (the export failed)
_CONTROL_PICTURES = {code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in _SHOWN_WHITESPACE}
_CONTROL_PICTURES[0x7F] = "\u2421"
_DETAIL_CHARS = 160  # of the library's own message, quoted in ours


def _continues(labels, special, piece: str, tidy: str, is_special: bool) -> bool:
    """Whether a written piece continues the word before it (`labels`, `special`: the text's before it):
    both ordinary, the piece does not start a word ("Ġ", "▁"), and they meet on a letter or digit (the
    pre-tokenizer's own split is not there to ask, and it makes punctuation and spaces words of their own)."""
    return (bool(len(labels)) and not is_special and not special[-1] and not piece.startswith(_WORD_START)
            and tidy[:1].isalnum() and labels[-1][-1:].isalnum())


@dataclass(frozen=True)
class Cut:
    """Which tokens of a text longer than the model takes were kept.

    An encoder keeps the start; a decoder keeps the end, because the next tokens it shows continue
    the text where it stops."""

    total_tokens: int   # the whole text's tokens, with the model's own specials once
    kept_tokens: int    # how many the trace holds
    keeps: str          # "start" or "end"
    first_char: int     # the kept tokens cover text[first_char:end_char]
    end_char: int

    def describe(self) -> str:
        if self.keeps == "end":
            return (f"kept the last {self.kept_tokens:,} of {self.total_tokens:,} tokens (from character "
                    f"{self.first_char + 1:,}), so the next tokens follow its end")
        return (f"kept the first {self.kept_tokens:,} of {self.total_tokens:,} tokens (up to character "
                f"{self.end_char:,})")

    def to_dict(self) -> dict:
        return {"tokens": self.total_tokens, "kept": self.kept_tokens, "keeps": self.keeps,
                "characters": [self.first_char, self.end_char]}


@dataclass(frozen=True)
class Encoded:
    """A text as the model sees it."""

    ids: np.ndarray                        # token ids, int64
    pieces: list[str]                      # the tokenizer's own strings ("Ġcat", "##ing")
    labels: list[str]                      # tidy: "cat", "·ing", "[CLS]"
    special: np.ndarray                    # True for special tokens ([CLS], <|im_start|>, …)
    words: tuple[tuple[int, ...], ...]     # token indices of each word, in order; a special is its own word
    cut: Cut | None = None                 # the text was longer than the model takes: what was kept

    @property
    def truncated(self) -> bool:
        return self.cut is not None


def first_tokens(encoded: Encoded, n: int) -> Encoded:
    """The first n tokens of `encoded`, as encoding their text would make them when a token's label and
    word depend only on the tokens before it (a decoder's written text, Tokenizer.extended): the text
    so far of a generation, taken from its whole text's in a few slices instead of labelling every
    token again (3 ms a scrubber step at 1,000 tokens)."""
    if n >= len(encoded.ids):
        return encoded
    words = encoded.words[:bisect.bisect_left([word[0] for word in encoded.words], n)]
    if words and words[-1][-1] >= n:  # the word the cut falls in keeps its pieces before it
        words = (*words[:-1], tuple(i for i in words[-1] if i < n))
    return replace(encoded, ids=encoded.ids[:n], pieces=encoded.pieces[:n], labels=encoded.labels[:n],
                   special=encoded.special[:n], words=words)


def marked_written(encoded: Encoded, first: int) -> Encoded:
    """`encoded` with WRITTEN_MARK before the labels of its tokens from `first` on, which a model wrote: every
    view and every file that names tokens tells them from the ones it was given."""
    labels = list(encoded.labels)
    for i in range(first, len(labels)):
        label = labels[i]
        labels[i] = (CONTINUATION + WRITTEN_MARK + label[len(CONTINUATION):] if label.startswith(CONTINUATION)
                     else WRITTEN_MARK + label)
    return replace(encoded, labels=labels)


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


def guarded(source: str, what: str, call, *args, **kwargs):
    """Call into `tokenizers`. It raises its own exception type for a bad file, and a Rust panic
    arrives as pyo3's PanicException, which derives from BaseException and passes `except Exception`:
    either becomes one ModelError naming `source`. What a panic prints is held back (see below)."""
    try:
        with _native_stderr_held_back():
            return call(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: BLE001 - PanicException is a BaseException
        detail = " ".join(str(error).split()) or type(error).__name__
        if len(detail) > _DETAIL_CHARS:
            detail = detail[:_DETAIL_CHARS - 1] + "…"
        raise ModelError(f"{source}: {what} ({detail})") from None


_STDERR_TAKEN = threading.RLock()  # a guarded call inside another holds back into the outer one


@contextmanager
def _native_stderr_held_back() -> Iterator[None]:
    """What is written to the process's stderr during the block, held back and written out after it,
    unless it failed. A Rust panic inside `tokenizers` prints its own lines to stderr (with
    RUST_BACKTRACE set, a whole backtrace) before Python hears of it, on the command line and on the
    window's worker alike; the ModelError it becomes already says what went wrong. The descriptor is
    the process's, so blocks on several threads take turns (each is a call of a few milliseconds)."""
    with _STDERR_TAKEN, tempfile.TemporaryFile() as held:
        sys.stderr.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no stderr to hold back
            yield
            return
        os.dup2(held.fileno(), 2)
        failed = True
        try:
            yield
            failed = False
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if not failed and held.tell():
                held.seek(0)
                os.write(2, held.read())


class TextTokenizer:
    """A `tokenizers.Tokenizer` set up for one text at a time: no padding, at most `max_tokens` tokens
    (the end of the text kept when `keep_end`, else the start), every id a row of the embedding."""

    def __init__(self, tokenizer, max_tokens: int, vocab_size: int, source: str, keep_end: bool):
        self.source = source  # the file named in messages: tokenizer.json, or the GGUF file
        vocabulary = guarded(source, "cannot set up the tokenizer", self._set_up, tokenizer, max_tokens, keep_end)
        self.tokenizer = tokenizer
        self.max_tokens, self.vocab_size, self.keep_end = max_tokens, vocab_size, keep_end
        self._check_ids(vocabulary)  # then let go: as a dict it was 7 MB for SmolLM2's 49,152 tokens
        # one token's text, piece and label, asked again on every step of a generation's scrubber: each
        # call into tokenizers holds stderr back through a temporary file, about 0.3 ms
        self._token_texts: dict[int, str] = {}
        self._token_pieces: dict[int, str] = {}
        self._token_labels: dict[int, str] = {}

    def _set_up(self, tokenizer, max_tokens: int, keep_end: bool) -> dict[str, int]:
        """Set the tokenizer up for one text at a time; its vocabulary, piece → id, added tokens too."""
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_tokens, direction="left" if keep_end else "right")
        self.byte_level = type(tokenizer.decoder).__name__ == "ByteLevel"
        self.special_ids = {i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special}
        self._added = tokenizer.num_special_tokens_to_add(False)  # what the template adds around a text
        return tokenizer.get_vocab(with_added_tokens=True)

    def _check_ids(self, vocabulary: dict[str, int]) -> None:
        """Every id the tokenizer can give must be a row of the embedding (else an IndexError in the forward)."""
        if vocabulary:
            piece, largest = max(vocabulary.items(), key=lambda item: item[1])
            if largest >= self.vocab_size:
                raise self._past_embedding(largest, piece)

    def _past_embedding(self, token_id: int, piece: str) -> ModelError:
        return ModelError(f"{self.source}: token id {token_id:,} ({shown(piece)}) is past the {self.vocab_size:,} "
                          f"rows of the model's embedding; the tokenizer belongs to another model")

    @classmethod
    def from_file(cls, path: Path, max_tokens: int, vocab_size: int, keep_end: bool) -> TextTokenizer:
        """The tokenizer.json of a model folder, read through the bounded reader and handed to `tokenizers`
        as text, so a pipe, a device or a loop of links is refused as for any file."""
        tokenizers = require("tokenizers", "reading a real model's tokenizer")
        path = Path(path)
        if not os.path.lexists(path):
            raise ModelError(f"{path.parent}: no tokenizer.json; the model folder needs its tokenizer")
        text = read_user_text(path, "tokenizer.json", max_bytes=MAX_TOKENIZER_BYTES, error=ModelError,
                              advice="put the model's own tokenizer.json there")
        most = max(TOKENIZER_VALUES_PER_TOKEN * vocab_size, MIN_TOKENIZER_VALUES)
        if (count := json_values_at_most(text)) > most:  # before `tokenizers` builds it: 1.4 GB for 64 MB
            raise ModelError(f"{path.name}: room for {count:,} values, far more than a tokenizer of the model's "
                             f"{vocab_size:,} tokens holds (at most {most:,}); it belongs to another model")
        tokenizer = guarded(path.name, "cannot read the tokenizer", tokenizers.Tokenizer.from_str, text)
        return cls(tokenizer, max_tokens, vocab_size, path.name, keep_end)

    @classmethod
    def from_gguf(cls, metadata: dict, file_name: str, max_tokens: int, vocab_size: int,
                  keep_end: bool) -> TextTokenizer:
        """The tokenizer a GGUF file's `tokenizer.ggml.*` metadata describes (gguf_tokenizer.py)."""
        build = gguf_tokenizer_builder(metadata, file_name)
        return cls(guarded(file_name, "cannot build the tokenizer from its metadata", build), max_tokens, vocab_size,
                   file_name, keep_end)

    def encode(self, text: str, add_specials: bool = True) -> Encoded:
        """The tokens of `text`; SentenceError for a text too long, not valid or with nothing to read.
        `add_specials=False` leaves out what the tokenizer adds around a text (a BOS): a chat template
        writes its own, as transformers' apply_chat_template leaves them to the template."""
        if len(text) > max_text_chars(real=True):  # checked first: tokenising 10 million characters took 2 GB
            raise SentenceError(f"this text has {len(text):,} characters; real models take at most "
                                f"{max_text_chars(real=True):,}: shorten it")
        check_text(text)
        encoding = guarded(self.source, "the tokenizer failed on this text", self.tokenizer.encode, text,
                           add_special_tokens=add_specials)
        if not encoding.ids or not text.strip():
            raise SentenceError("there is no text to look at: type a sentence")
        ids = np.array(encoding.ids, dtype=np.int64)
        if len(ids) > self.max_tokens:
            raise ModelError(f"{self.source}: the tokenizer adds {len(ids):,} tokens where the model takes at most "
                             f"{self.max_tokens:,}; the tokenizer does not fit the model")
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            worst = int(ids.max() if ids.max() >= self.vocab_size else ids.min())
            raise self._past_embedding(worst, encoding.tokens[int(np.flatnonzero(ids == worst)[0])])
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
        return Encoded(ids, pieces, labels, special, tuple(tuple(w) for w in words),
                       self._cut(encoding, len(text)) if encoding.overflowing else None)

    def extended(self, encoded: Encoded, token_ids) -> Encoded:
        """`encoded` followed by the tokens `token_ids`, as a decoder wrote them, labelled as encode()
        labels a text. A written piece continues the word before it when both are ordinary, it does not
        start a word ("Ġ", "▁") and both meet on a letter or digit: the pre-tokenizer's own split is
        not there to ask, and it splits punctuation and spaces into words of their own."""
        ids = [int(i) for i in token_ids]
        labels, words = list(encoded.labels), [list(word) for word in encoded.words]
        special = list(encoded.special)
        pieces = self._pieces(ids)
        for token_id, piece in zip(ids, pieces, strict=True):
            is_special = token_id in self.special_ids
            tidy = self.token_label(token_id)  # kept per token: a scrubber step extends by every written token
            continues = _continues(labels, special, piece, tidy, is_special)
            if continues:
                words[-1].append(len(labels))
            else:
                words.append([len(labels)])
            labels.append((CONTINUATION if continues else "") + tidy)
            special.append(is_special)
        return Encoded(np.concatenate([encoded.ids, np.array(ids, dtype=np.int64)]), encoded.pieces + pieces, labels,
                       np.array(special, dtype=bool), tuple(tuple(word) for word in words), encoded.cut)

    def _cut(self, encoding, text_length: int) -> Cut:
        """What was kept of a text cut at max_tokens: the tokens left out are in `overflowing`, each
        piece with the template's specials around it again."""
        left_out = sum(len(piece.ids) - self._added for piece in encoding.overflowing)
        spans = [span for span, mask in zip(encoding.offsets, encoding.special_tokens_mask, strict=True)
                 if not mask and span[1] > span[0]]
        first, end = (spans[0][0], spans[-1][1]) if spans else (0, 0)
        if self.keep_end:
            end = text_length
        else:
            first = 0
        return Cut(len(encoding.ids) + max(left_out, 0), len(encoding.ids), "end" if self.keep_end else "start",
                   first, end)

    def token_text(self, token_id: int) -> str:
        """What one token writes (e.g. " mat"), for the next-token list."""
        token_id = int(token_id)
        text = self._token_texts.get(token_id)
        if text is None:
            text = self._token_texts[token_id] = guarded(self.source, "cannot write a token", self.tokenizer.decode,
                                                         [token_id], skip_special_tokens=False)
        return text

    def decode(self, token_ids) -> str:
        """What a run of tokens writes together (the pieces of one character joined, unlike token_text)."""
        return guarded(self.source, "cannot write the tokens", self.tokenizer.decode, [int(i) for i in token_ids],
                       skip_special_tokens=False)

    def token_id(self, piece: str) -> int | None:
        """The id of a token given as its text ("<|im_end|>"), None when the tokenizer has no such token."""
        return guarded(self.source, "cannot look a token up", self.tokenizer.token_to_id, piece)

    def label_after(self, encoded: Encoded, token_id: int) -> str:
        """Token `token_id`'s label were it written after `encoded`, as extended() would label it: "·the"
        when it would continue the text's last word. The next-token list names its candidates so (it
        named " the" and "the" both "the")."""
        label = self.token_label(token_id)
        piece = self._pieces([int(token_id)])[0]
        is_special = int(token_id) in self.special_ids
        return (CONTINUATION if _continues(encoded.labels, encoded.special, piece, label, is_special) else "") + label

    def token_label(self, token_id: int) -> str:
        token_id = int(token_id)
        label = self._token_labels.get(token_id)
        if label is None:
            piece = self._pieces([token_id])[0]
            label = self._token_labels[token_id] = piece if token_id in self.special_ids else self._tidy(piece)
        return label

    def _pieces(self, ids: list[int]) -> list[str]:
        """Each id's piece as the vocabulary writes it ("" for an id it lacks), those not seen before
        asked for in one guarded call: a scrubber step extends the text so far by every written token."""
        missing = list({i for i in ids if i not in self._token_pieces})
        if missing:
            found = guarded(self.source, "cannot name a token",
                            lambda: [self.tokenizer.id_to_token(i) or "" for i in missing])
            self._token_pieces.update(zip(missing, found, strict=True))
        return [self._token_pieces[i] for i in ids]

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
        for char, sign in _SHOWN_WHITESPACE.items():
            stripped = stripped.replace(char, sign)
        return stripped.translate(_CONTROL_PICTURES)
