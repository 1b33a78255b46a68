"""The parts of the step registry (engine.steps) that only real models use: q and k before their
rotation, the rotary-position (RoPE) step, and the note on key/value heads that query heads share.
Toy models run none of it: the RoPE step is skipped for them with a reason, like any step that is off.
"""

from __future__ import annotations

import numpy as np

from .cell_arithmetic import CellArithmetic, Used, factor, fmt
from .step_types import StepContext, Tables, dims
from .trace import HeadTrace, Trace


def projected(head: HeadTrace, name: str) -> np.ndarray:
    """X·W (+ b) of a head: q and k before any rotation (the RoPE step turns them), or v."""
    before = getattr(head, f"{name}_before_rope", None)
    return getattr(head, name) if before is None else before


def shared_kv_note(c: StepContext) -> str:
    """Llama's query heads share key/value heads: say which one this query head reads."""
    kv = c.head.kv_head
    if kv is None:
        return ""
    shared = len({head.kv_head for head in c.trace.heads})
    return f"query head {c.head.index + 1} reads key/value head {kv + 1} of {shared}"


def rope_skip(trace: Trace) -> str:
    if trace.rope_cos is not None:
        return ""
    if trace.layer is None:
        return "skipped: this model does not turn q and k by position; models with rotary positions do"
    return "skipped: this model adds learned positions to the embedding instead of turning q and k"


def rope_tables(c: StepContext) -> Tables:
    h, of, words = c.head, c.of_kv_head, c.words
    turned = dims(c.trace.rope_cos.shape[1])  # the head's first dims, or all of them
    return Tables((c.table("q_raw", "Q" + c.of_head, h.q_before_rope), c.table("k_raw", "K" + of, h.k_before_rope),
                   c.table("cos", "cos θ", c.trace.rope_cos, rows=words, cols=turned),
                   c.table("sin", "sin θ", c.trace.rope_sin, rows=words, cols=turned)),
                  (c.table("q", "Q turned" + c.of_head, h.q), c.table("k", "K turned" + of, h.k)),
                  ops=(",", "by", ","), arrow="turned =")


def rope_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    """HF's rotate-half pairing, as the forward pass uses it: dimension j turns with j + r/2 among the r
    dims turned (the whole head, or its first r when the model turns only part of it: GPT-NeoX, Phi-3)."""
    name = result or "q"
    if name not in ("q", "k"):
        raise ValueError(f"the results of step 'rope' are q and k, not {name!r}")
    turned = c.trace.rope_cos.shape[1]
    a, half = c.trace.labels[row], turned // 2
    before, after = getattr(c.head, f"{name}_before_rope"), getattr(c.head, name)
    if col >= turned:
        return CellArithmetic(
            f"{a} at position {row}: {name}[{col}] is past the first {turned} dims, which alone are turned",
            f"{name}'_{a}[{col}] = {name}_{a}[{col}] = {fmt(after[row, col])}", (Used(f"{name}_raw", row, col),))
    partner, sign = (col + half, "−") if col < half else (col - half, "+")
    cos, sin = c.trace.rope_cos[row, col], c.trace.rope_sin[row, col]
    return CellArithmetic(
        f"{a} at position {row}: {name}[{col}] turns with {name}[{partner}], frequency {col % half}",
        f"{name}'_{a}[{col}] = {name}_{a}[{col}]·cos θ {sign} {name}_{a}[{partner}]·sin θ = "
        f"{fmt(before[row, col])}×{factor(cos)} {sign} {factor(before[row, partner])}×{factor(sin)} = "
        f"{fmt(after[row, col])}",
        (Used(f"{name}_raw", row, col), Used(f"{name}_raw", row, partner), Used("cos", row, col),
         Used("sin", row, col)))


def rope_formula(trace: Trace) -> str:
    # No "<" here: the panel's label would take it for the start of a rich-text tag.
    whole = trace.rope_cos is None or trace.rope_cos.shape[1] == trace.heads[0].d_k
    d = "d" if whole else "r"
    if trace.rope_scaling:
        angle = f"θ = position × f_j, f_j = base^(−2j/{d}) {trace.rope_scaling}"
    else:
        position = "position" if trace.rope_factor == 1 else f"(position ÷ {trace.rope_factor:g})"
        angle = f"θ = {position} × base^(−2j/{d})"
    turn = (f"q'[j] = q[j]·cos θ − q[j + {d}/2]·sin θ and q'[j + {d}/2] = q[j + {d}/2]·cos θ + q[j]·sin θ for j in "
            f"the first half, {angle}")
    if whole:
        return f"{turn}; the same for k"
    return (f"over the first r = {trace.rope_cos.shape[1]} of the {trace.heads[0].d_k} dims: {turn}; the other "
            f"dims pass unturned; the same for k")
