"""The computation as a fixed sequence of steps, and the tables each step shows, taken from a Trace.

The sequence never changes with the options: a step that is switched off (no scaling, no mask, one
head, no W_O) stays in its place and is shown as skipped, so step 5 always means "÷ √d_k" and a
learner sees what was left out. Every table holds arrays of the trace itself (a transpose or the
mask drawn as 0/−∞ at most); nothing here multiplies or normalises anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .trace import Trace


@dataclass(frozen=True)
class Step:
    key: str
    short: str   # the label on the timeline strip
    title: str   # what the step computes, as a formula


STEPS = (
    Step("embed", "X", "Embed: X = embedding (+ positions)"),
    Step("q", "Q", "Queries: Q = X·W_Q"),
    Step("kv", "K, V", "Keys and values: K = X·W_K, V = X·W_V"),
    Step("scores", "QKᵀ", "Scores: QKᵀ"),
    Step("scaled", "÷ √d_k", "Scale: QKᵀ ÷ √d_k"),
    Step("masked", "mask", "Causal mask: −∞ after the diagonal"),
    Step("softmax", "softmax", "Softmax: each row becomes weights"),
    Step("output", "× V", "Output: weights · V"),
    Step("concat", "concat", "Concatenate the heads"),
    Step("w_o", "× W_O", "Mix the heads: concat · W_O"),
)
STEP_KEYS = tuple(step.key for step in STEPS)
LAST_STEP = len(STEPS) - 1
ARCS_FROM_STEP = STEP_KEYS.index("softmax")  # the arc diagram draws weights, which exist from here on
# Each head runs these on its own slice of the columns; the others see the whole layer.
PER_HEAD = frozenset(("q", "kv", "scores", "scaled", "masked", "softmax", "output"))

# Which square matrix the heatmap shows at a step; earlier steps have none and leave it as it is.
_HEATMAP_MATRIX = {"scores": "scores", "scaled": "scaled", "masked": "masked"}


@dataclass(frozen=True)
class StepTable:
    """One matrix of a step, with names for its rows and columns."""

    key: str
    title: str
    values: np.ndarray
    rows: tuple[str, ...]
    cols: tuple[str, ...]


@dataclass(frozen=True)
class StepView:
    """What a step shows: inputs, results, and how they read together (`ops` go between the inputs,
    `arrow` before the results). A skipped step has no results; its one input is what passes on."""

    step: Step
    inputs: tuple[StepTable, ...]
    results: tuple[StepTable, ...]
    ops: tuple[str, ...] = ()
    arrow: str = "="
    skipped: str = ""       # why the step is off, e.g. "skipped: scaling is off"
    fill_by_row: bool = False  # softmax fills whole rows: a weight needs its row's every score


def step_index(key: str) -> int:
    return STEP_KEYS.index(key)


def skip_reason(trace: Trace, key: str) -> str:
    """Why step `key` does nothing on this trace, or "" when it runs."""
    if key == "scaled" and not trace.options.scale:
        return "skipped: scaling is off"
    if key == "masked" and trace.mask is None:
        return "skipped: no causal mask"
    if key == "concat" and len(trace.heads) == 1:
        return "skipped: one head, nothing to concatenate"
    if key == "w_o" and trace.w_o is None:
        return "skipped: this model has no W_O, so the output is the concatenation"
    return ""


def heatmap_matrix(key: str) -> str | None:
    """The heatmap's matrix at step `key`: the scores of that stage, the weights from softmax on."""
    if key in _HEATMAP_MATRIX:
        return _HEATMAP_MATRIX[key]
    return "weights" if step_index(key) >= ARCS_FROM_STEP else None


def dims(count: int) -> tuple[str, ...]:
    """Column names of a projection: 0, 1, … (the index the arithmetic writes as q_cats[0])."""
    return tuple(str(j) for j in range(count))


def step_view(trace: Trace, key: str, head: int = 0) -> StepView:
    """The tables of step `key` for `head` (0-based) of `trace`."""
    step = STEPS[step_index(key)]
    h = trace.heads[head]
    words = tuple(trace.labels)
    feats = tuple(trace.features)
    of_head = f" (head {head + 1})" if len(trace.heads) > 1 else ""
    d = dims(h.d_k)

    def table(k, title, values, rows=words, cols=d):
        return StepTable(k, title, values, tuple(rows), tuple(cols))

    skipped = skip_reason(trace, key)
    if skipped:
        passing = {"scaled": table("scores", "scores, unchanged" + of_head, h.scores, cols=words),
                   "masked": table("scaled", "scores, unchanged" + of_head, h.scaled, cols=words),
                   "concat": table("output", "the head's output, unchanged", h.output),
                   "w_o": table("output", "output, unchanged", trace.output, cols=dims(trace.output.shape[1]))}
        return StepView(step, (passing[key],), (), skipped=skipped)

    if key == "embed":
        inputs = [table("embedding", "embedding", trace.embedding, cols=feats)]
        if trace.positional is not None:
            inputs.append(table("positional", "positional encoding", trace.positional, cols=feats))
        return StepView(step, tuple(inputs), (table("x", "X", trace.x, cols=feats),), ops=("+",) * (len(inputs) - 1))
    if key == "q":
        return StepView(step, (table("x", "X", trace.x, cols=feats), table("w_q", "W_Q" + of_head, h.w_q, feats)),
                        (table("q", "Q" + of_head, h.q),), ops=("·",))
    if key == "kv":
        return StepView(step, (table("x", "X", trace.x, cols=feats), table("w_k", "W_K" + of_head, h.w_k, feats),
                               table("w_v", "W_V" + of_head, h.w_v, feats)),
                        (table("k", "K" + of_head, h.k), table("v", "V" + of_head, h.v)), ops=("·", ","))
    if key == "scores":
        return StepView(step, (table("q", "Q" + of_head, h.q), table("kt", "Kᵀ" + of_head, h.k.T, d, words)),
                        (table("scores", "scores QKᵀ" + of_head, h.scores, cols=words),), ops=("·",))
    if key == "scaled":
        return StepView(step, (table("scores", "scores QKᵀ" + of_head, h.scores, cols=words),),
                        (table("scaled", "scaled scores" + of_head, h.scaled, cols=words),), arrow=f"÷ √{h.d_k} =")
    if key == "masked":
        mask = np.where(trace.mask, -np.inf, 0.0)  # the trace's boolean mask, drawn as what it adds
        return StepView(step, (table("scaled", _scaled_title(trace) + of_head, h.scaled, cols=words),
                               table("mask", "mask", mask, cols=words)),
                        (table("masked", "masked scores" + of_head, h.masked, cols=words),), ops=("+",))
    if key == "softmax":
        return StepView(step, (table("masked", _softmax_input_title(trace) + of_head, h.masked, cols=words),),
                        (table("weights", "weights" + of_head, h.weights, cols=words),),
                        arrow="softmax of each row =", fill_by_row=True)
    if key == "output":
        return StepView(step, (table("weights", "weights" + of_head, h.weights, cols=words),
                               table("v", "V" + of_head, h.v)),
                        (table("output", "output" + of_head, h.output),), ops=("·",))
    if key == "concat":
        outputs = tuple(table(f"out{i}", f"head {i + 1} output", hd.output) for i, hd in enumerate(trace.heads))
        return StepView(step, outputs, (table("concat", "concat", trace.concat, cols=dims(trace.concat.shape[1])),),
                        ops=("|",) * (len(outputs) - 1))
    # w_o
    return StepView(step, (table("concat", "concat", trace.concat, cols=dims(trace.concat.shape[1])),
                           table("w_o", "W_O", trace.w_o, dims(trace.w_o.shape[0]), trace.output_column_labels())),
                    (table("final", "final output", trace.output, cols=trace.output_column_labels()),), ops=("·",))


def _scaled_title(trace: Trace) -> str:
    return "scaled scores" if trace.options.scale else "scores (not scaled)"


def _softmax_input_title(trace: Trace) -> str:
    return "masked scores" if trace.mask is not None else _scaled_title(trace)
