"""Turning typed text into the model's words, keeping the words it does not know."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

# A word is a run of letters/digits, optionally joined by apostrophes ("it's"); everything else
# (spaces, punctuation) separates words and is dropped.
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


@dataclass(frozen=True)
class Word:
    """One word of the typed sentence, in order, with whether the model knows it."""

    text: str
    known: bool
    start: int  # character offset in the original text, so views can flag it in place
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


def tokenize(text: str, vocabulary: Iterable[str]) -> Tokenized:
    """Case-fold `text`, split punctuation off, and mark each word known or unknown."""
    known = set(vocabulary)
    words = []
    for match in _WORD.finditer(text.casefold()):
        words.append(Word(match.group(), match.group() in known, match.start(), match.end()))
    return Tokenized(tuple(words))


def is_word(text: str) -> bool:
    """True when typing `text` gives exactly one word: the test for a word a model can learn."""
    return text == text.casefold() and _WORD.fullmatch(text) is not None


def nearest_words(word: str, vocabulary: Iterable[str], count: int = 3) -> list[str]:
    """The known words that look most like `word`, best first (for "did you mean" hints)."""
    return difflib.get_close_matches(word.casefold(), list(vocabulary), n=count, cutoff=0.5)


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
        labels.append(f"{token}{_subscript(seen[token])}")
    return labels


def _subscript(number: int) -> str:
    return str(number).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))
