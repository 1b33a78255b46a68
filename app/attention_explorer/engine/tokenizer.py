"""Turning typed text into the model's words, keeping the words it does not know.

Words are compared in one canonical form: case-folded and NFC-normalised, so "Cát", "cát" typed with
a precomposed "á" and "cát" typed as "a" plus a combining accent are the same word. The offsets of
each word still point into the text as typed, which is what the sentence box shows and underlines.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import SentenceError

# A word is a run of letters/digits, optionally joined by apostrophes ("it's"); everything else
# (spaces, punctuation) separates words and is dropped. Combining marks (the accent of "cát" typed as
# two characters, the vowel signs of Devanagari) are not letters to `re`, so they are joined to the
# word they follow in `_word_spans`.
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Word:
    """One word of the typed sentence, in order, with whether the model knows it."""

    text: str   # canonical: case-folded, NFC
    known: bool
    start: int  # Python string offsets in the text as typed, so views can flag the word in place
    end: int


@dataclass(frozen=True)
class Tokenized:
    words: tuple[Word, ...]

    @property
    def tokens(self) -> list[str]:
        """The known words, in order: what attention runs on."""
        return [w.text for w in self.words if w.known]

    @property
    def unknown(self) -> list[str]:
        """The unknown words, in order, repeats kept."""
        return [w.text for w in self.words if not w.known]


def canonical(text: str) -> str:
    """The form words are compared in: case-folded, then NFC (case-folding can decompose)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def check_text(text: str) -> None:
    """Refuse text that is not valid Unicode: a lone surrogate, e.g. from an invalid UTF-8 byte."""
    bad = _SURROGATE.search(text)
    if bad is not None:
        raise SentenceError(f"the sentence is not valid text: character {bad.start() + 1} "
                            f"(U+{ord(bad.group()):04X}) is half of a character or an undecodable byte; "
                            "delete it or type the sentence again")


def tokenize(text: str, vocabulary: Iterable[str]) -> Tokenized:
    """Split `text` into words, compare them case-folded and normalised, mark each known or unknown."""
    check_text(text)
    known = set(vocabulary)
    words = []
    for start, end in _word_spans(text):
        word = canonical(text[start:end])
        words.append(Word(word, word in known, start, end))
    return Tokenized(tuple(words))


def _word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each word in `text`, combining marks kept inside the word they follow."""
    spans: list[tuple[int, int]] = []
    for match in _WORD.finditer(text):
        start, end = match.span()
        if spans and spans[-1][1] == start:  # only marks stood between: "ca" + U+0301 + "t" is one word
            start = spans.pop()[0]
        while end < len(text) and unicodedata.category(text[end]).startswith("M"):
            end += 1
        spans.append((start, end))
    return spans


def is_word(text: str) -> bool:
    """True when typing `text` gives exactly one word, already in canonical form: the test for a
    word a model can learn."""
    return text == canonical(text) and _SURROGATE.search(text) is None and _word_spans(text) == [(0, len(text))]

def nearest_words(word: str, vocabulary: Iterable[str], count: int = 3) -> list[str]:
    """The known words spelled most like `word`, best first (for "did you mean" hints). Ranked by
    spelling only, so a hint must say so; the bar of 0.6 keeps a lone shared pair of letters from
    suggesting an unrelated word ("zebra" and "ran" share only "ra")."""
    import difflib  # loaded at the first unknown word, not at every start (with heapq, 2 ms)

    return difflib.get_close_matches(canonical(word), list(vocabulary), n=count, cutoff=0.6)


def token_labels(tokens: list[str]) -> list[str]:
    """Labels that tell repeated words apart: "the", "cat", "the" → "the₁", "cat", "the₂"."""
    totals = Counter(tokens)
    seen: Counter[str] = Counter()
    labels = []
    for token in tokens:
        if totals[token] == 1:
            labels.append(token)
            continue
        seen[token] += 1
        labels.append(f"{token}{subscript(seen[token])}")
    return labels


_SUBSCRIPT_DIGITS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(number: int) -> str:
    """`number` in subscript digits: 12 → "₁₂"."""
    return str(number).translate(_SUBSCRIPT_DIGITS)
