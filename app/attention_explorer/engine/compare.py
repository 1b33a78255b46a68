"""Setting two attention results side by side: the difference of their weights.

One subtraction answers "what changed?" for two sentences, two heads, or two sets of options
(scaling on/off, mask on/off, positional encoding on/off). It only makes sense cell by cell, so both
sides need the same number of words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import run
from .errors import ComparisonError
from .model import ToyModel
from .options import Options
from .trace import Trace


@dataclass(frozen=True)
class WeightsDifference:
    """B's weights minus A's, for one head of each: positive where B looks more."""

    labels_a: list[str]
    labels_b: list[str]
    weights_a: np.ndarray
    weights_b: np.ndarray
    difference: np.ndarray  # weights_b − weights_a, n × n

    @property
    def max_abs(self) -> float:
        return float(np.abs(self.difference).max())

    @property
    def largest_change(self) -> tuple[int, int]:
        """(row, column) of the cell that changed most (the first one on a tie)."""
        i, j = np.unravel_index(int(np.argmax(np.abs(self.difference))), self.difference.shape)
        return int(i), int(j)


def weights_difference(a: Trace, b: Trace, head_a: int = 0, head_b: int = 0) -> WeightsDifference:
    """B's weights minus A's for the chosen heads; ComparisonError unless both have the same words count."""
    if a.n != b.n:
        raise ComparisonError(f"cannot compare {a.n} words with {b.n}: the two sentences must have "
                              "the same number of known words")
    wa, wb = _head(a, head_a, "first").weights, _head(b, head_b, "second").weights
    return WeightsDifference(list(a.labels), list(b.labels), wa, wb, wb - wa)


def compare_sentences(model: ToyModel, sentence_a: str, sentence_b: str, options: Options | None = None,
                      head: int = 0) -> WeightsDifference:
    """Two sentences of equal length on the same model and options."""
    return weights_difference(run(model, sentence_a, options), run(model, sentence_b, options), head, head)


def compare_heads(trace: Trace, head_a: int, head_b: int) -> WeightsDifference:
    """Two heads of one trace: where head B looks differently from head A."""
    return weights_difference(trace, trace, head_a, head_b)


def compare_options(model: ToyModel, sentence: str, options_a: Options, options_b: Options,
                    head: int = 0) -> WeightsDifference:
    """One sentence under two option sets, e.g. Options(scale=True) against Options(scale=False)."""
    return weights_difference(run(model, sentence, options_a), run(model, sentence, options_b), head, head)


def _head(trace: Trace, index: int, which: str):
    if not 0 <= index < len(trace.heads):
        raise ComparisonError(f"the {which} result has {len(trace.heads)} head(s); head {index + 1} does not exist")
    return trace.heads[index]
