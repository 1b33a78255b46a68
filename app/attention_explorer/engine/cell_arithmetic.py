"""Where a number comes from: one result cell of a step, its arithmetic written out with real numbers.

    q_cats · k_chase = 0×0 + 2×1 = 2
    2 ÷ √2 = 1.41
    e^1.41 ÷ (e^0 + e^1.41 + e^0) = 0.67
    out_cats[0] = 0.16×1 + 0.67×0 + 0.16×1 = 0.33

This module is the vocabulary of those strings; each step of engine.steps writes its own cells
with it. Every number in a string is an entry of the trace: the terms are entries of the step's inputs and
the value after "=" is the trace's own result, never re-added here, so what a learner reads is what
the engine computed. Numbers have at most 2 decimals with trailing zeros dropped (2, 0.5, 1.41),
"−" as the minus sign, −∞ as "−∞", and negative factors in brackets: 2×(−4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_TERMS = 8  # longer sums keep their first terms and the last one, with "…" between


@dataclass(frozen=True)
class Used:
    """A part of an input table a result cell was made from: a row (col None), a column (row None),
    or one cell. `table` is the input's key in the step's tables."""

    table: str
    row: int | None
    col: int | None


@dataclass(frozen=True)
class CellArithmetic:
    what: str               # which cell, in words: "score cats → chase"
    text: str               # the arithmetic: "q_cats · k_chase = 0×0 + 2×1 = 2"
    used: tuple[Used, ...]  # what to highlight in the inputs


def fmt(x: float) -> str:
    """A number as every table and string of the step timeline shows it: 2, 0.5, 1.41, −0.67, −∞."""
    x = float(x)
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if math.isnan(x):
        return "nan"
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text.replace("-", "−")


def factor(x: float) -> str:
    """A number as a factor of a product: negative ones in brackets, 2×(−4)."""
    text = fmt(x)
    return f"({text})" if text.startswith("−") else text


def sum_of(terms: list[str]) -> str:
    """Terms joined by +, long sums shortened to their first terms, …, and the last one."""
    if len(terms) > MAX_TERMS:
        terms = terms[:MAX_TERMS - 2] + ["…"] + terms[-1:]
    return " + ".join(terms)


def dot(left, right) -> str:
    """A dot product written out term by term: 0×1 + 2×0.5."""
    return sum_of([f"{factor(a)}×{factor(b)}" for a, b in zip(left, right, strict=True)])
