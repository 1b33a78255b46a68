"""The "why two matrices?" lesson: tie W_K to W_Q and attention can no longer be one-sided.

With separate W_Q and W_K, the score of word i looking at word j, q_i·k_j, need not equal the score
of j looking at i, q_j·k_i: "sat" can look hard at "cat" while "cat" barely looks at "sat". With
W_K = W_Q every key equals its query, the score matrix Q·Qᵀ is symmetric, and so any pull between
two words goes both ways. (The weights can still differ a little, i→j against j→i, because softmax
divides each row by its own total; the scores themselves are equal.) Tied, a word also often looks
mostly at itself, since q·q = |q|² is large: two matrices let "what I look for" differ from "what
I am", which is what makes a word look at other words.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .attention import run
from .model import ToyModel
from .options import Options
from .trace import Trace


def tie_keys_to_queries(model: ToyModel) -> ToyModel:
    """A copy of `model` whose W_K is a copy of its W_Q; the model itself is left unchanged.

    The name is kept (it is the same model with one switch flipped); the description says so.
    """
    tied = model.copy()
    note = "W_K tied to W_Q (keys equal queries)."
    description = f"{tied.description} {note}".strip()
    return replace(tied, w_k=tied.w_q.copy(), description=description)


def asymmetry(matrix: np.ndarray) -> np.ndarray:
    """|M − Mᵀ| entry by entry: how one-sided each pair is (0 on the diagonal)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    return np.abs(matrix - matrix.T)


@dataclass(frozen=True)
class OneSidedPair:
    """The pair whose two directions differ most: `looker` → `looked_at` is the stronger one."""

    looker: int      # row index i
    looked_at: int   # column index j
    forward: float   # M[i, j]
    backward: float  # M[j, i]

    @property
    def gap(self) -> float:
        return self.forward - self.backward

    def in_matrix(self, matrix: np.ndarray) -> tuple[float, float]:
        """The same pair's (forward, backward) values in another matrix, e.g. after tying."""
        return float(matrix[self.looker, self.looked_at]), float(matrix[self.looked_at, self.looker])


def most_one_sided_pair(matrix: np.ndarray) -> OneSidedPair | None:
    """The pair (i, j), i ≠ j, with the largest |M[i, j] − M[j, i]|; None with fewer than two words.

    Ties go to the first pair in row order, so the answer is always the same for the same matrix.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.shape[0] < 2:
        return None
    diff = matrix - matrix.T
    i, j = np.unravel_index(int(np.argmax(diff)), diff.shape)  # diff is antisymmetric: max ≥ 0
    if i == j:  # a symmetric matrix: every gap is 0, report the first off-diagonal pair
        i, j = 0, 1
    return OneSidedPair(int(i), int(j), float(matrix[i, j]), float(matrix[j, i]))


@dataclass(frozen=True)
class TiedComparison:
    """One sentence with separate W_Q, W_K and with W_K tied to W_Q, for one head."""

    untied: Trace
    tied: Trace
    head: int
    pair: OneSidedPair | None  # the most one-sided pair of the untied weights

    @property
    def score_asymmetry_before(self) -> float:
        return float(asymmetry(self.untied.heads[self.head].scores).max())

    @property
    def score_asymmetry_after(self) -> float:
        """0: with W_K = W_Q the scores Q·Qᵀ are symmetric."""
        return float(asymmetry(self.tied.heads[self.head].scores).max())


def compare_tied(model: ToyModel, sentence: str, options: Options | None = None, head: int = 0) -> TiedComparison:
    """Run `sentence` on `model` and on its tied copy; find the most one-sided pair before tying."""
    untied = run(model, sentence, options)
    tied = run(tie_keys_to_queries(model), sentence, options)
    return TiedComparison(untied, tied, head, most_one_sided_pair(untied.heads[head].weights))
