"""Where a number comes from: one result cell of a step, its arithmetic written out with real numbers.

    q_cats · k_chase = 0×0 + 2×1 = 2
    2 ÷ √2 = 1.41
    e^1.41 ÷ (e^0 + e^1.41 + e^0) = 0.67
    out_cats[0] = 0.16×1 + 0.67×0 + 0.16×1 = 0.33

Every number in a string is an entry of the trace: the terms are entries of the step's inputs and
the value after "=" is the trace's own result, never re-added here, so what a learner reads is what
the engine computed. Numbers have at most 2 decimals with trailing zeros dropped (2, 0.5, 1.41),
"−" as the minus sign, −∞ as "−∞", and negative factors in brackets: 2×(−4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .steps import skip_reason
from .trace import Trace

MAX_TERMS = 8  # longer sums keep their first terms and the last one, with "…" between


@dataclass(frozen=True)
class Used:
    """A part of an input table a result cell was made from: a row (col None), a column (row None),
    or one cell. `table` is the input's key in steps.step_view."""

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


def _factor(x: float) -> str:
    text = fmt(x)
    return f"({text})" if text.startswith("−") else text


def _sum(terms: list[str]) -> str:
    if len(terms) > MAX_TERMS:
        terms = terms[:MAX_TERMS - 2] + ["…"] + terms[-1:]
    return " + ".join(terms)


def _dot(left, right) -> str:
    return _sum([f"{_factor(a)}×{_factor(b)}" for a, b in zip(left, right, strict=True)])


def cell_arithmetic(trace: Trace, step: str, head: int, row: int, col: int,
                    result: str | None = None) -> CellArithmetic:
    """The arithmetic of cell (row, col) of a result of `step` (a key of steps.STEPS) for `head`.

    `result` picks one of several results ("k" or "v" at the "kv" step). Raises ValueError for a
    skipped step, which has no result cells.
    """
    if skip_reason(trace, step):
        raise ValueError(f"step {step!r} is skipped on this trace: it has no result cells")
    h = trace.heads[head]
    a = trace.labels[row]
    if step == "embed":
        feature = trace.features[col]
        e, x = trace.embedding[row, col], trace.x[row, col]
        if trace.positional is None:
            return CellArithmetic(f"{a}, feature {feature}", f"x_{a}[{feature}] = e_{a}[{feature}] = {fmt(x)}",
                                  (Used("embedding", row, col),))
        pe = trace.positional[row, col]
        return CellArithmetic(f"{a} at position {row}, feature {feature}",
                              f"x_{a}[{feature}] = e_{a}[{feature}] + pe_{row}[{feature}] = "
                              f"{fmt(e)} + {_factor(pe)} = {fmt(x)}",
                              (Used("embedding", row, col), Used("positional", row, col)))
    if step in ("q", "kv"):
        name = "q" if step == "q" else (result or "k")
        if name not in ("q", "k", "v"):
            raise ValueError(f"the results of step {step!r} are k and v, not {name!r}")
        weights, value = getattr(h, f"w_{name}"), getattr(h, name)[row, col]
        return CellArithmetic(f"row {a} of X times column {col} of W_{name.upper()}",
                              f"{name}_{a}[{col}] = {_dot(trace.x[row], weights[:, col])} = {fmt(value)}",
                              (Used("x", row, None), Used(f"w_{name}", None, col)))
    b = trace.labels[col] if step in ("scores", "scaled", "masked", "softmax") else ""
    if step == "scores":
        return CellArithmetic(f"score {a} → {b}",
                              f"q_{a} · k_{b} = {_dot(h.q[row], h.k[col])} = {fmt(h.scores[row, col])}",
                              (Used("q", row, None), Used("kt", None, col)))
    if step == "scaled":
        return CellArithmetic(f"scaled score {a} → {b}",
                              f"{fmt(h.scores[row, col])} ÷ √{h.d_k} = {fmt(h.scaled[row, col])}",
                              (Used("scores", row, col),))
    if step == "masked":
        hidden = bool(trace.mask[row, col])
        what = f"{a} → {b}: " + (f"{b} comes after {a}, so it is hidden" if hidden else "allowed, kept")
        return CellArithmetic(what, f"{fmt(h.scaled[row, col])} + {'(−∞)' if hidden else '0'} = "
                                    f"{fmt(h.masked[row, col])}",
                              (Used("scaled", row, col), Used("mask", row, col)))
    if step == "softmax":
        scores = h.masked[row]
        return CellArithmetic(f"weight {a} → {b}",
                              f"e^{fmt(scores[col])} ÷ ({_sum([f'e^{fmt(s)}' for s in scores])}) = "
                              f"{fmt(h.weights[row, col])}",
                              (Used("masked", row, None),))
    if step == "output":
        return CellArithmetic(f"output of {a}, dimension {col}",
                              f"out_{a}[{col}] = {_dot(h.weights[row], h.v[:, col])} = {fmt(h.output[row, col])}",
                              (Used("weights", row, None), Used("v", None, col)))
    if step == "concat":
        index, local = divmod(col, h.d_k)
        return CellArithmetic(f"{a}, column {col} of the concatenation",
                              f"concat_{a}[{col}] = out_{a}[{local}] of head {index + 1} = "
                              f"{fmt(trace.concat[row, col])}",
                              (Used(f"out{index}", row, local),))
    if step == "w_o":
        feature = trace.output_column_labels()[col]
        return CellArithmetic(f"row {a} of the concatenation times column {feature} of W_O",
                              f"y_{a}[{feature}] = {_dot(trace.concat[row], trace.w_o[:, col])} = "
                              f"{fmt(trace.output[row, col])}",
                              (Used("concat", row, None), Used("w_o", None, col)))
    raise ValueError(f"unknown step {step!r}")
