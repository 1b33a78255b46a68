"""What a step of the computation is: the shape of one entry of the step registry (engine.steps),
and the tables it shows. Kept apart from the registry so the entries can be written against it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .cell_arithmetic import CellArithmetic
from .trace import HeadTrace, Trace


@dataclass(frozen=True)
class StepTable:
    """One matrix of a step, with names for its rows and columns."""

    key: str
    title: str
    values: np.ndarray
    rows: tuple[str, ...]
    cols: tuple[str, ...]

    def __post_init__(self):
        # A label for every row and column, checked here: a Qt table asking for a label past the end
        # raises inside Qt's own call, and the app died of it (a native crash, not a message).
        if self.values.ndim != 2 or self.values.shape != (len(self.rows), len(self.cols)):
            raise ValueError(f"table {self.key!r}: {self.values.shape} values for {len(self.rows)} row and "
                             f"{len(self.cols)} column labels")


@dataclass(frozen=True)
class Tables:
    """What a running step shows: inputs, results, and how they read together (`ops` go between the
    inputs, `arrow` before the results)."""

    inputs: tuple[StepTable, ...]
    results: tuple[StepTable, ...]
    ops: tuple[str, ...] = ()
    arrow: str = "="


def dims(count: int) -> tuple[str, ...]:
    """Column names of a projection: 0, 1, … (the index the arithmetic writes as q_cats[0])."""
    return tuple(str(j) for j in range(count))


@dataclass(frozen=True)
class StepContext:
    """One head of one trace, as a step's functions read it; `table` names rows and columns by default
    as most tables have them (words × the head's dimensions)."""

    trace: Trace
    head: HeadTrace
    of_head: str  # " (head 2)" after a per-head title when there are several heads, else ""

    @property
    def of_kv_head(self) -> str:
        """The title suffix of a key or value table: names the shared key/value head when query heads share them."""
        kv = self.head.kv_head
        return self.of_head if kv is None else f" (key/value head {kv + 1}, shared)"

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.trace.labels)

    @property
    def key_words(self) -> tuple[str, ...]:
        """The words looked at: the rows of K and V, the columns of the scores and weights (another
        text's for cross-attention)."""
        return tuple(self.trace.looked_at_labels)

    @property
    def key_x(self) -> np.ndarray:
        """What W_K and W_V read: X, or for cross-attention the encoder's last hidden states."""
        return self.trace.x if self.trace.key_x is None else self.trace.key_x

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.trace.features)

    def table(self, key: str, title: str, values: np.ndarray, rows: tuple[str, ...] | None = None,
              cols: tuple[str, ...] | None = None) -> StepTable:
        return StepTable(key, title, values, tuple(self.words if rows is None else rows),
                         tuple(dims(self.head.d_k) if cols is None else cols))


def runs_always(trace: Trace) -> str:
    """The skip rule of a step that always runs: no reason to skip."""
    return ""


@dataclass(frozen=True)
class Step:
    """One step of the computation, everything about it in one place.

    `tables` gives its inputs and results for a head; `arithmetic(context, row, col, result)` writes
    out one result cell (`result` picks one of several results, e.g. "k" or "v"); `skip_reason` says
    why the step does nothing on a trace ("" when it runs), and then `passes_on` is the one table
    that goes on unchanged. `heatmap` is the square matrix the heatmap shows during the step (None:
    leave it as it is). `formula` is the rule every result cell follows, or a function of the trace
    when that rule depends on the options.
    """

    key: str
    short: str        # the label on the timeline strip
    title: str        # what the step computes, as a formula
    explanation: str  # what it does and why, in plain words
    formula: str | Callable[[Trace], str]
    tables: Callable[[StepContext], Tables]
    arithmetic: Callable[[StepContext, int, int, str | None], CellArithmetic]
    per_head: bool = False  # each head runs it on its own slice of the columns
    heatmap: str | None = None
    skip_reason: Callable[[Trace], str] = runs_always
    passes_on: Callable[[StepContext], StepTable] | None = None
    fill_by_row: bool = False  # softmax fills whole rows: a weight needs its row's every score
    note: Callable[[StepContext], str] | None = None  # a remark on a head, e.g. which key/value head it shares
    title_of: Callable[[Trace], str] | None = None  # the title on a trace, when its kind changes it (the mask)
    explanation_of: Callable[[Trace], str] | None = None  # likewise the explanation

    def formula_for(self, trace: Trace) -> str:
        return self.formula(trace) if callable(self.formula) else self.formula

    def title_for(self, trace: Trace | None) -> str:
        """The title as shown on `trace` (the general `title` without one)."""
        return self.title_of(trace) if self.title_of is not None and trace is not None else self.title

    def explanation_for(self, trace: Trace | None) -> str:
        """The explanation as it reads on `trace` (the general `explanation` without one)."""
        return self.explanation_of(trace) if self.explanation_of is not None and trace is not None \
            else self.explanation


@dataclass(frozen=True)
class StepView:
    """What a step shows for one head of one trace. A skipped step has no results; its one input is
    what passes on, and `skipped` says why."""

    step: Step
    inputs: tuple[StepTable, ...]
    results: tuple[StepTable, ...]
    ops: tuple[str, ...] = ()
    arrow: str = "="
    skipped: str = ""
    formula: str = ""
    note: str = ""  # e.g. "query head 7 reads key/value head 3 of 3"

    @property
    def fill_by_row(self) -> bool:
        return self.step.fill_by_row
