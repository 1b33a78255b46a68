"""A reading of one layer's attention: the weights a real model's views show once tokens are hidden,
pieces merged into words or the heads rolled out through the layers, and, for any weight shown, the
arithmetic that made it from the numbers before the reading.

A reading's weights are not a softmax of any scores, so the step timeline cannot write them out as
one: it shows the layer's own computation (`source`) and says so (`steps_note`). The heatmap's
readout, the bars and the tooltips write each shown weight out from what it was made of
(`weight_arithmetic`), in the vocabulary of the step timeline (engine.cell_arithmetic): the terms are
numbers the engine computed, and the value after "=" is the reading's own result, never re-added here.

    words:    ((0.201 + 0.104) + (0.052 + 0.1)) ÷ 2 = 0.229
    hidden:   0.201 ÷ 0.652 = 0.308 (0.652 of sat's weight is on the shown tokens; …)
    rollout:  R₃[sat, cat] = Σₖ Â₃[sat, k]·R₂[k, cat] = 0.5×0.12 + … = 0.098
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .cell_arithmetic import sum_of
from .tokenizer import subscript
from .trace import Trace

SIGNIFICANT_DIGITS = 3  # not 2 decimals as in the step tables: a weight of 0.004 must not read as 0


def weight(x: float) -> str:
    """A weight in a reading's arithmetic: 0.308, 0.0123, 0.0000052."""
    return np.format_float_positional(float(x), precision=SIGNIFICANT_DIGITS, fractional=False, trim="-")


class _Stage:
    """What every stage of a reading says: its name, what it did, a weight's arithmetic, and whether a
    weight came through it unchanged (then the stage before it explains that weight)."""

    name = ""

    def passes_through(self, row: int, col: int) -> tuple[int, int] | None:
        return None


@dataclass(frozen=True)
class RolloutStage(_Stage):
    """Rollout up to `layer` (Abnar & Zuidema 2020): R_l = Â_l · R_(l−1), Â_l = (mean of the heads + I)
    with its rows normalised; R at the first layer is Â itself. One matrix for every head.

    A weight's arithmetic needs one row of the heads' mean and of Â: each is made for its row when asked,
    from the layer's weights (which the layer's trace keeps anyway), never for the whole layer (two n × n
    float64 matrices: 5.6 ms of each Rollout switched on at 512 MiniLM tokens, for a readout not asked)."""

    layer: int                    # 0-based
    layer_weights: np.ndarray     # every head's weights of the layer (heads, n, n)
    previous: np.ndarray | None   # R of the layer before (n × n), None at the first layer

    name = "rollout"

    @property
    def heads(self) -> int:
        return self.layer_weights.shape[0]

    def mean_row(self, row: int) -> np.ndarray:
        """Row `row` of the heads' weights averaged."""
        return self.layer_weights[:, row].mean(axis=0, dtype=np.float64)

    def mixed_row(self, row: int) -> np.ndarray:
        """Row `row` of Â (analysis.rollout_mix): the heads' mean, 1 added on the diagonal for the residual
        connection, normalised to sum to 1."""
        mixed = self.mean_row(row)
        mixed[row] += 1.0
        return mixed / mixed.sum()

    def describe(self) -> str:
        return f"the rollout up to layer {self.layer + 1}"

    def explain(self, head: int, row: int, col: int, a: str, b: str, value: float) -> str:
        here = subscript(self.layer + 1)
        if self.previous is None:
            mean = self.mean_row(row)
            total = mean.sum() + 1.0
            return (f"R{here}[{a}, {b}] = (mean of the {self.heads} heads {weight(mean[col])}"
                    f" + {1 if row == col else 0}) ÷ {weight(total)} = {weight(value)}")
        before = subscript(self.layer)
        terms = [f"{weight(m)}×{weight(r)}" for m, r in zip(self.mixed_row(row), self.previous[:, col], strict=True)]
        return f"R{here}[{a}, {b}] = Σₖ Â{here}[{a}, k]·R{before}[k, {b}] = {sum_of(terms)} = {weight(value)}"


@dataclass(frozen=True)
class HiddenStage(_Stage):
    """Tokens taken out and each row renormalised: w′ = w ÷ (the row's weight on the kept tokens)."""

    before: tuple[np.ndarray, ...]  # per head, the weights over every token before hiding (n × n)
    kept: np.ndarray                # the tokens left, by their index before hiding
    names: str                      # the hidden tokens, for the text: "[CLS], [SEP]"
    kept_keys: np.ndarray | None = None  # the columns left when they are another text's (cross-attention)

    name = "hidden"

    def describe(self) -> str:
        return f"{self.names} hidden, rows renormalised"

    def explain(self, head: int, row: int, col: int, a: str, b: str, value: float) -> str:
        matrix, source_row = self.before[head], int(self.kept[row])
        columns = self.kept if self.kept_keys is None else self.kept_keys
        kept_weight = float(matrix[source_row, columns].sum())
        return (f"{weight(matrix[source_row, columns[col]])} ÷ {weight(kept_weight)} = {weight(value)} "
                f"({weight(kept_weight)} of {a}'s weight is on the shown tokens; the rest was on {self.names})")


@dataclass(frozen=True)
class WordsStage(_Stage):
    """Pieces merged into words: a word looks with the mean of its pieces and is looked at with the sum
    over its pieces, w(A → B) = Σ_{a∈A} Σ_{b∈B} w(a → b) ÷ |A|."""

    before: tuple[np.ndarray, ...]          # per head, the pieces' weights (pieces × pieces)
    groups: tuple[tuple[int, ...], ...]     # each word's pieces, by their index in `before`
    key_groups: tuple[tuple[int, ...], ...] | None = None  # the columns' words when another text's (cross)

    name = "words"

    def describe(self) -> str:
        return "pieces merged into words"

    def passes_through(self, row: int, col: int) -> tuple[int, int] | None:
        """A word of one piece looking at a word of one piece: the weight is the pieces' own."""
        looking, looked_at = self.groups[row], self._columns()[col]
        return (looking[0], looked_at[0]) if len(looking) == len(looked_at) == 1 else None

    def explain(self, head: int, row: int, col: int, a: str, b: str, value: float) -> str:
        matrix, looking, looked_at = self.before[head], self.groups[row], self._columns()[col]
        if len(looking) == len(looked_at) == 1:
            return f"one piece each, the pieces' own weight: {weight(value)}"
        per_piece = [sum_of([weight(matrix[a, b]) for b in looked_at]) for a in looking]
        if len(looking) == 1:
            return f"{per_piece[0]} = {weight(value)} (summed over the pieces of {b})"
        if len(looked_at) > 1:
            per_piece = [f"({piece})" for piece in per_piece]
        return (f"({sum_of(per_piece)}) ÷ {len(looking)}"
                f" = {weight(value)} (each of {a}'s {len(looking)} pieces summed over {b}'s, "
                f"then averaged)")

    def _columns(self) -> tuple[tuple[int, ...], ...]:
        return self.groups if self.key_groups is None else self.key_groups


Stage = RolloutStage | HiddenStage | WordsStage


@dataclass(frozen=True)
class Reading:
    """How the weights of a shown trace were made from the layer's own, and which of the layer's
    tokens each shown token stands for."""

    source: Trace                          # the layer's own computation, over every token
    stages: tuple[Stage, ...]              # in the order they were applied
    groups: tuple[tuple[int, ...], ...]    # shown token → the source tokens it stands for
    rule: str                              # one line on what was done, for the screen
    key_groups: tuple[tuple[int, ...], ...] | None = None  # the same for the columns, when they are another
                                                            # text's tokens (cross-attention); None: `groups`

    @property
    def short(self) -> str:
        """A few words for titles: "rollout", "hidden, words"."""
        return ", ".join(stage.name for stage in self.stages)

    def weight_arithmetic(self, head: int, row: int, col: int, labels: Sequence[str], value: float,
                          key_labels: Sequence[str] | None = None) -> str:
        """The shown weight (row, col) of `head`, written out from the numbers of the stage that made
        it (a stage that left this weight as it was, a word of one piece, is passed over); `key_labels`
        name the columns when they are another text's tokens."""
        a, b = labels[row], (labels if key_labels is None else key_labels)[col]
        stages = list(self.stages)
        while len(stages) > 1 and (through := stages[-1].passes_through(row, col)) is not None:
            row, col = through
            stages.pop()
        last = stages[-1]
        text = f"{last.name}: {last.explain(head, row, col, a, b, value)}"
        if len(stages) > 1:
            text += f"; from {_described(stages[:-1])}"
        return text

    def weights_title(self, where: str) -> str:
        """The heatmap's title over the reading's weights; `where` names the layer and head."""
        rollout = [stage for stage in self.stages if isinstance(stage, RolloutStage)]
        rest = [stage for stage in self.stages if not isinstance(stage, RolloutStage)]
        if rollout:  # one matrix for every head: the head is not named
            return f"attention rollout up to layer {rollout[0].layer + 1} (all heads)" + (
                f", {_described(rest)}" if rest else "")
        return f"attention weights, {_described(rest)} — {where}"

    def scores_note(self) -> str:
        """What the reading did to the scores of the shown tokens ("" when they are the head's own)."""
        return "each word's pieces averaged" if any(isinstance(s, WordsStage) for s in self.stages) else ""

    def group(self, shown: int, looked_at: bool = False) -> tuple[int, ...]:
        """The source tokens that shown token `shown` stands for: a row's, or with `looked_at` a column's."""
        return (self.key_groups if looked_at and self.key_groups is not None else self.groups)[shown]

    def shown_index(self, source_index: int, looked_at: bool = False) -> int | None:
        """The shown token (a row's, or with `looked_at` a column's) that source token `source_index`
        belongs to, or None when it is hidden."""
        groups = self.key_groups if looked_at and self.key_groups is not None else self.groups
        for shown, group in enumerate(groups):
            if source_index in group:
                return shown
        return None

    def steps_note(self, head: int) -> str:
        """What the step timeline shows instead of the reading, said on screen beside it."""
        return (f"{layer_steps_note(self.source, head, own=True)} The heatmap, arcs and bars show "
                f"{_described(self.stages)}: hover a heatmap cell to see how each of its weights is made from these.")


def layer_steps_note(source: Trace, head: int, own: bool = False) -> str:
    """What the step timeline shows of a real model's layer `source`: which layer and head,
    over how many tokens. A reading's note (Reading.steps_note) begins with it."""
    layer = "" if source.layer is None else f"layer {source.layer + 1}, "
    return (f"These steps are {layer}head {head + 1} as the model computes it, over its{' own' if own else ''} "
            f"{source.n} tokens.")


def _described(stages: Sequence[Stage]) -> str:
    return " then ".join(stage.describe() for stage in stages)
