"""The word-order lesson: attention alone does not see order; positional encoding makes it see it.

Without positional encoding, self-attention is permutation-equivariant: shuffle the words and each
word's output row is the same as before, only moved to the word's new place. Adding the sinusoidal
encoding gives each place its own vector, so the same word in a new place gets a new input and,
in general, a new output.

Words are matched by position, never by text: in "the cat sat on the mat" the two "the"s are
different words in different places, and a shuffle says where each one went.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .attention import run
from .errors import SentenceError
from .model import ToyModel
from .options import Options
from .trace import Trace


@dataclass(frozen=True)
class Shuffled:
    """A reordering of a sentence's words: new word i is old word order[i]."""

    tokens: list[str]
    order: np.ndarray  # a permutation of 0..n−1

    @property
    def sentence(self) -> str:
        return " ".join(self.tokens)


def shuffle_words(tokens: Sequence[str], *, seed: int | None = None,
                  order: Sequence[int] | None = None) -> Shuffled:
    """Reorder `tokens` by `order` (new word i = tokens[order[i]]), or by a random order from `seed`.

    A random order is never the unchanged one when there are two words or more, so the lesson
    always has something to show. Give exactly one of `seed` and `order`.
    """
    n = len(tokens)
    if (seed is None) == (order is None):
        raise ValueError("give exactly one of seed and order")
    if order is None:
        rng = np.random.default_rng(seed)
        perm = rng.permutation(n)
        while n > 1 and np.array_equal(perm, np.arange(n)):
            perm = rng.permutation(n)
    else:
        perm = _checked_order(order, n)
    return Shuffled([tokens[i] for i in perm], perm)


def order_between(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> np.ndarray:
    """The order that turns sentence A into sentence B (B's word i is A's word order[i]).

    A repeated word is matched in turn: the first "the" of B is the first "the" of A, and so on.
    Raises SentenceError when the two sentences are not made of the same words.
    """
    if sorted(tokens_a) != sorted(tokens_b):
        raise SentenceError("the two sentences must use the same words, only in another order: "
                            f"{' '.join(tokens_a)!r} and {' '.join(tokens_b)!r} do not")
    places: dict[str, list[int]] = defaultdict(list)
    for i, token in enumerate(tokens_a):
        places[token].append(i)
    used: dict[str, int] = defaultdict(int)
    order = []
    for token in tokens_b:
        order.append(places[token][used[token]])
        used[token] += 1
    return np.array(order, dtype=np.intp)


@dataclass(frozen=True)
class WordOrderComparison:
    """The same words in two orders, with each word's output row under both.

    Rows of `rows_original` and `rows_reordered` both follow the original order, so row i is the
    same word (original word i) in both: only then can the two be compared.
    """

    original: Trace
    reordered: Trace
    order: np.ndarray           # reordered word i is original word order[i]
    rows_original: np.ndarray   # n × d_out: original word i's output
    rows_reordered: np.ndarray  # n × d_out: the same word's output in the reordered sentence
    difference: np.ndarray      # n: max |rows_original − rows_reordered| per word

    @property
    def labels(self) -> list[str]:
        """Labels of the words, in the original order (repeats told apart)."""
        return list(self.original.labels)

    @property
    def max_difference(self) -> float:
        return float(self.difference.max()) if self.difference.size else 0.0

    def aligned_weights(self, head: int = 0) -> np.ndarray:
        """The reordered sentence's weights, rows and columns put back in the original order.

        Without positional encoding this equals the original weights (up to rounding).
        """
        where = np.argsort(self.order)  # where original word i went
        return self.reordered.heads[head].weights[np.ix_(where, where)]


def compare_word_orders(model: ToyModel, sentence: str, order: Sequence[int],
                        options: Options | None = None) -> WordOrderComparison:
    """Run `sentence` and its words reordered by `order` (see shuffle_words), and line them up."""
    original = run(model, sentence, options)
    reordered_tokens = shuffle_words(original.tokens, order=order)
    return _compare(model, original, reordered_tokens.order, options)


def compare_same_words(model: ToyModel, sentence_a: str, sentence_b: str,
                            options: Options | None = None) -> WordOrderComparison:
    """Compare two sentences made of the same words ("maya chased the dog" / "the dog chased maya")."""
    original = run(model, sentence_a, options)
    tokens_b = run(model, sentence_b, options).tokens
    return _compare(model, original, order_between(original.tokens, tokens_b), options)


def _compare(model: ToyModel, original: Trace, order: np.ndarray, options: Options | None) -> WordOrderComparison:
    tokens = [original.tokens[i] for i in order]
    reordered = run(model, " ".join(tokens), options)
    if reordered.tokens != tokens:  # a vocabulary word the tokenizer would split: refuse, never guess
        raise SentenceError("the reordered words could not be read back as the same words")
    where = np.argsort(order)  # original word i sits at place where[i] in the reordered sentence
    rows_original = original.output
    rows_reordered = reordered.output[where]
    difference = np.abs(rows_original - rows_reordered).max(axis=1)
    return WordOrderComparison(original, reordered, order, rows_original, rows_reordered, difference)


def _checked_order(order: Sequence[int], n: int) -> np.ndarray:
    perm = np.asarray(order)
    if perm.ndim != 1 or perm.size != n or not np.issubdtype(perm.dtype, np.integer) \
            or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ValueError(f"the order must list each of the places 0..{n - 1} once, got {list(order)!r}")
    return perm.astype(np.intp)
