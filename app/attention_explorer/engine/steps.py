"""The step registry: the computation as a fixed sequence of steps, each one entry holding everything
about it (tables, the arithmetic of a cell, why it may be skipped, what the heatmap shows, its formula
and its text). The matrix panel, the timeline strip, the heatmap and the GIF all read STEPS, so adding
a step is adding one entry here.

The sequence never changes with the options: a step that is switched off (no scaling, no mask, one
head, no W_O, no rotary positions) stays in its place and is shown as skipped, so step 6 always
means "÷ √d_k" and a learner sees what was left out. Every table holds arrays of the trace itself (a transpose or the
mask drawn as 0/−∞ at most); nothing here multiplies or normalises anything.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .cell_arithmetic import CellArithmetic, Used, dot, factor, fmt, sum_of
from .row_matrix import RowMatrix
from .softmax import why_masked
from .step_real import projected, rope_cell, rope_formula, rope_skip, rope_tables, shared_kv_note
from .step_types import Step, StepContext, StepTable, StepView, Tables, dims
from .trace import HeadTrace, Trace

WHOLE_MASK_CELLS = 2048 * 2048  # a larger mask's table is made by the rows shown

__all__ = ["ARCS_FROM_STEP", "LAST_STEP", "STEPS", "STEP_KEYS", "Step", "StepTable", "StepView", "cell_arithmetic",
           "heatmap_matrix", "skip_reason", "step_index", "step_view"]


# --- 1. embed ---------------------------------------------------------------------------------------
def _embed_tables(c: StepContext) -> Tables:
    inputs = [c.table("embedding", "embedding", c.trace.embedding, cols=c.features)]
    if c.trace.positional is not None:
        inputs.append(c.table("positional", "positional encoding", c.trace.positional, cols=c.features))
    return Tables(tuple(inputs), (c.table("x", "X", c.trace.x, cols=c.features),), ops=("+",) * (len(inputs) - 1))


def _embed_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    trace, a = c.trace, c.trace.labels[row]
    feature = trace.features[col]
    e, x = trace.embedding[row, col], trace.x[row, col]
    if trace.layer is not None:
        return CellArithmetic(f"{a}, feature {feature} of layer {trace.layer + 1}'s input",
                              f"x_{a}[{feature}] = {fmt(x)}", (Used("embedding", row, col),))
    if trace.positional is None:
        return CellArithmetic(f"{a}, feature {feature}", f"x_{a}[{feature}] = e_{a}[{feature}] = {fmt(x)}",
                              (Used("embedding", row, col),))
    pe = trace.positional[row, col]
    return CellArithmetic(f"{a} at position {row}, feature {feature}",
                          f"x_{a}[{feature}] = e_{a}[{feature}] + pe_{row}[{feature}] = "
                          f"{fmt(e)} + {factor(pe)} = {fmt(x)}",
                          (Used("embedding", row, col), Used("positional", row, col)))


def _embed_formula(trace: Trace) -> str:
    if trace.key_x is not None:  # cross-attention: X is what W_Q reads, H what W_K and W_V read
        return (f"x_w = the decoder's stream in layer {trace.layer + 1}, as its cross-attention's W_Q reads it "
                f"(W_K and W_V read the encoder's last hidden states)")
    if trace.layer is not None:  # a real model's layer: X is what its W_Q, W_K, W_V read
        return f"x_w = the input of layer {trace.layer + 1}, as its W_Q, W_K and W_V read it"
    if trace.positional is None:
        return "x_w = e_w (positions are off)"
    return "x_w = e_w + pe_p, the encoding of the word's position p"


# --- 2, 3. projections --------------------------------------------------------------------------------
def _bias(head: HeadTrace, name: str) -> np.ndarray | None:
    return getattr(head, f"b_{name}")


def _projection_parts(c: StepContext, name: str, of: str) -> tuple[tuple[StepTable, ...], tuple[str, ...]]:
    """W of one projection, and its bias as a one-row table when the model has one, with the ops between."""
    upper = name.upper()
    parts = (c.table(f"w_{name}", f"W_{upper}{of}", getattr(c.head, f"w_{name}"), c.features),)
    bias = _bias(c.head, name)
    if bias is None:
        return parts, ("·",)
    return (*parts, c.table(f"b_{name}", f"b_{upper}{of}", bias[None, :], rows=("b",))), ("·", "+")


def _q_tables(c: StepContext) -> Tables:
    parts, ops = _projection_parts(c, "q", c.of_head)
    return Tables((c.table("x", "X", c.trace.x, cols=c.features), *parts),
                  (c.table("q", "Q" + c.of_head, projected(c.head, "q")),), ops=ops)


def _kv_tables(c: StepContext) -> Tables:
    of, words = c.of_kv_head, c.key_words
    k_parts, k_ops = _projection_parts(c, "k", of)
    v_parts, v_ops = _projection_parts(c, "v", of)
    source = c.table("x", "X", c.trace.x, cols=c.features) if c.trace.key_x is None else \
        c.table("key_x", "H (encoder)", c.key_x, rows=words, cols=c.features)
    return Tables((source, *k_parts, *v_parts),
                  (c.table("k", "K" + of, projected(c.head, "k"), rows=words),
                   c.table("v", "V" + of, c.head.v, rows=words)),
                  ops=(*k_ops, ",", *v_ops[1:]))


KV_EXPLANATION = ("A word's key says what it can be found by, its value what it hands over when found. W_K is a "
                  "second matrix, not W_Q again, so that A looking for B need not mean B looking for A; W_V "
                  "separates what a word passes on from how it is matched.")


def _kv_title(trace: Trace) -> str:
    if trace.key_x is None:
        return "Keys and values: K = X·W_K, V = X·W_V"
    return "Keys and values of the source: K = H·W_K, V = H·W_V (H: the encoder's last hidden states)"


def _kv_explanation(trace: Trace) -> str:
    if trace.key_x is None:
        return KV_EXPLANATION
    return ("Cross-attention: the target's words ask and the source's words answer. q comes from the decoder's "
            "stream (X); k and v come from the encoder's last hidden states (H), one row per source word, the "
            "same H for every decoder layer; W_K and W_V are this layer's own.")


def _projection_formula(*names: str) -> Callable[[Trace], str]:
    """The rule of a projection step, with "+ b[j]" when the model has biases (BERT, GPT-2)."""
    def formula(trace: Trace) -> str:
        return ",   ".join(f"{n}_w[j] = {'h' if trace.key_x is not None and n in ('k', 'v') else 'x'}_w · "
                           f"W_{n.upper()}[:, j]"
                           + ("" if _bias(trace.heads[0], n) is None else f" + b_{n.upper()}[j]")
                           + (", then RMS-normalised" if trace.qk_norm and n in ("q", "k") else "") for n in names)
    return formula


QK_NORMS = {"head": "RMS-normalised over the head's numbers", "whole": "RMS-normalised over the whole projection"}


def _projection_cell(name: str, c: StepContext, row: int, col: int) -> CellArithmetic:
    keyed = name in ("k", "v")  # made from what the keys read: another text's states for cross-attention
    a = c.key_words[row] if keyed else c.trace.labels[row]
    x, x_key, x_name = (c.key_x, "key_x", "H") if keyed and c.trace.key_x is not None else (c.trace.x, "x", "X")
    weights, value = getattr(c.head, f"w_{name}"), projected(c.head, name)[row, col]
    terms, used = dot(x[row], weights[:, col]), (Used(x_key, row, None), Used(f"w_{name}", None, col))
    bias = _bias(c.head, name)
    if bias is not None:
        terms, used = f"{terms} + {factor(bias[col])}", (*used, Used(f"b_{name}", 0, col))
    what = f"row {a} of {x_name} times column {col} of W_{name.upper()}" + \
        ("" if bias is None else f", plus b_{name.upper()}")
    normed = QK_NORMS.get(c.trace.qk_norm) if name in ("q", "k") else None
    if normed:  # Qwen3, OLMo 2: the table holds q and k after their norm, so the sum is said, then the norm
        raw = float(np.dot(x[row].astype(np.float64), weights[:, col]) + (0.0 if bias is None else bias[col]))
        return CellArithmetic(f"{what}, then {normed} (the model's {name}_norm)",
                              f"{name}_{a}[{col}] = norm({terms} = {fmt(raw)}) = {fmt(value)}", used)
    return CellArithmetic(what, f"{name}_{a}[{col}] = {terms} = {fmt(value)}", used)


def _kv_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    name = result or "k"
    if name not in ("k", "v"):
        raise ValueError(f"the results of step 'kv' are k and v, not {name!r}")
    return _projection_cell(name, c, row, col)


# --- 4. rotary positions (RoPE): engine.step_real ----------------------------------------------------


# --- 5–7. scores, scaling, mask -----------------------------------------------------------------------
def _scaled_title(trace: Trace) -> str:
    return "scaled scores" if trace.options.scale else "scores (not scaled)"


def _pair(c: StepContext, row: int, col: int) -> tuple[str, str]:
    """The words of a cell: the word looking (row) and the word looked at (col)."""
    return c.trace.labels[row], c.key_words[col]


def _scores_tables(c: StepContext) -> Tables:
    h, d = c.head, dims(c.head.d_k)
    return Tables((c.table("q", "Q" + c.of_head, h.q), c.table("kt", "Kᵀ" + c.of_kv_head, h.k.T, d, c.key_words)),
                  (c.table("scores", "scores QKᵀ" + c.of_head, h.scores, cols=c.key_words),), ops=("·",))


def _scores_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    a, b = _pair(c, row, col)
    return CellArithmetic(f"score {a} → {b}",
                          f"q_{a} · k_{b} = {dot(c.head.q[row], c.head.k[col])} = {fmt(c.head.scores[row, col])}",
                          (Used("q", row, None), Used("kt", None, col)))


def _scaled_tables(c: StepContext) -> Tables:
    h = c.head
    return Tables((c.table("scores", "scores QKᵀ" + c.of_head, h.scores, cols=c.key_words),),
                  (c.table("scaled", "scaled scores" + c.of_head, h.scaled, cols=c.key_words),), arrow=f"÷ √{h.d_k} =")


def _root_text(trace: Trace, d_k: int) -> str:
    """"√d_k" as a number: √8, or √12 for a model that divides by √query_pre_attn_scalar (Gemma 2)."""
    return f"√{trace.score_root:g}" if trace.score_root else f"√{d_k}"


def _scaled_formula(trace: Trace) -> str:
    root = f"√{trace.score_root:g}" if trace.score_root else "√d_k"
    if trace.score_cap:
        return f"scaled(a → b) = {trace.score_cap:g} · tanh(score(a → b) ÷ {root} ÷ {trace.score_cap:g})"
    return f"scaled(a → b) = score(a → b) ÷ {root}"


def _scaled_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    a, b = _pair(c, row, col)
    score, root, cap = fmt(c.head.scores[row, col]), _root_text(c.trace, c.head.d_k), c.trace.score_cap
    rule = f"{cap:g} · tanh({score} ÷ {root} ÷ {cap:g})" if cap else f"{score} ÷ {root}"
    return CellArithmetic(f"scaled score {a} → {b}" + (", capped softly" if cap else ""),
                          f"{rule} = {fmt(c.head.scaled[row, col])}", (Used("scores", row, col),))


def _mask_values(mask: np.ndarray) -> np.ndarray | RowMatrix:
    """The trace's boolean mask drawn as what it adds: −∞ or 0 (for a long text, made by the rows shown)."""
    if mask.size <= WHOLE_MASK_CELLS:
        return np.where(mask, -np.inf, 0.0)
    blocks = [(start, min(start + 256, mask.shape[0])) for start in range(0, mask.shape[0], 256)]
    return RowMatrix(mask.shape, np.float32,
                     lambda start, stop: np.where(mask[start:stop], np.float32(-np.inf), np.float32(0)), blocks)


def _has_window_behind(trace: Trace) -> bool:
    """A causal mask that also hides keys too far back (a decoder's sliding window): the last word may
    not look at the first. O(1), not a look at n² cells."""
    return trace.mask is not None and trace.options.causal and len(trace.mask) > 1 and bool(trace.mask[-1, 0])


def _masked_title(trace: Trace) -> str:
    if trace.mask is not None and not trace.options.causal:
        return "Window mask: −∞ outside each word's sliding window"
    if _has_window_behind(trace):
        return "Causal and window mask: −∞ after the diagonal and before the sliding window"
    return "Causal mask: −∞ after the diagonal"


CAUSAL_EXPLANATION = ("The causal mask forbids a word to look at the words after it, as a decoder that writes left "
                      "to right must: those scores become −∞, so softmax gives them exactly zero weight.")
WINDOW_EXPLANATION = (" This layer also has a sliding window: a word sees only the last few words before it, so the "
                      "words further back are hidden too, hatched the other way.")


def _masked_explanation(trace: Trace) -> str:
    if trace.mask is not None and not trace.options.causal:
        return ("This layer has a sliding window: each word sees only the words near it, on either side, which "
                "keeps the cost of a long text down. The scores of the words further away become −∞, so softmax "
                "gives them exactly zero weight.")
    return CAUSAL_EXPLANATION + (WINDOW_EXPLANATION if _has_window_behind(trace) else "")


def _masked_formula(trace: Trace) -> str:
    if trace.options.causal and _has_window_behind(trace):
        return ("masked(a → b) = scaled(a → b) + 0, or + (−∞) when b comes after a or is too far back for a's "
                "sliding window")
    if trace.options.causal:
        return "masked(a → b) = scaled(a → b) + 0, or + (−∞) when b comes after a"
    return "masked(a → b) = scaled(a → b) + 0, or + (−∞) when b is outside a's sliding window (either side)"


def _masked_tables(c: StepContext) -> Tables:
    mask = _mask_values(c.trace.mask)
    return Tables((c.table("scaled", _scaled_title(c.trace) + c.of_head, c.head.scaled, cols=c.key_words),
                   c.table("mask", "mask", mask, cols=c.key_words)),
                  (c.table("masked", "masked scores" + c.of_head, c.head.masked, cols=c.key_words),), ops=("+",))


def _masked_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    a, b = _pair(c, row, col)
    hidden = bool(c.trace.mask[row, col])
    why = why_masked(row, col, a, b, c.trace.options.causal)
    what = f"{a} → {b}: " + (f"{why}, so it is hidden" if hidden else "allowed, kept")
    return CellArithmetic(what, f"{fmt(c.head.scaled[row, col])} + {'(−∞)' if hidden else '0'} = "
                                f"{fmt(c.head.masked[row, col])}",
                          (Used("scaled", row, col), Used("mask", row, col)))


# --- 7, 8. softmax and the weighted values ------------------------------------------------------------
def _softmax_tables(c: StepContext) -> Tables:
    title = "masked scores" if c.trace.mask is not None else _scaled_title(c.trace)
    return Tables((c.table("masked", title + c.of_head, c.head.masked, cols=c.key_words),),
                  (c.table("weights", "weights" + c.of_head, c.head.weights, cols=c.key_words),),
                  arrow="softmax of each row =")


def _softmax_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    a, b = _pair(c, row, col)
    scores = c.head.masked[row]
    return CellArithmetic(f"weight {a} → {b}",
                          f"e^{fmt(scores[col])} ÷ ({sum_of([f'e^{fmt(s)}' for s in scores])}) = "
                          f"{fmt(c.head.weights[row, col])}",
                          (Used("masked", row, None),))


def _output_tables(c: StepContext) -> Tables:
    h = c.head
    return Tables((c.table("weights", "weights" + c.of_head, h.weights, cols=c.key_words),
                   c.table("v", "V" + c.of_head, h.v, rows=c.key_words)),
                  (c.table("output", "output" + c.of_head, h.output),), ops=("·",))


def _output_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    a, h = c.trace.labels[row], c.head
    if h.index in c.trace.ablated_heads:
        return CellArithmetic(f"output of {a}, dimension {col}",
                              f"head {h.index + 1} is switched off: out_{a}[{col}] = {fmt(h.output[row, col])}",
                              (Used("weights", row, None),))
    return CellArithmetic(f"output of {a}, dimension {col}",
                          f"out_{a}[{col}] = {dot(h.weights[row], h.v[:, col])} = {fmt(h.output[row, col])}",
                          (Used("weights", row, None), Used("v", None, col)))


# --- 9, 10. the heads together ------------------------------------------------------------------------
def _concat_table(c: StepContext) -> StepTable:
    return c.table("concat", "concat", c.trace.concat, cols=dims(c.trace.concat.shape[1]))


def _concat_tables(c: StepContext) -> Tables:
    outputs = tuple(c.table(f"out{i}", f"head {i + 1} output", hd.output) for i, hd in enumerate(c.trace.heads))
    return Tables(outputs, (_concat_table(c),), ops=("|",) * (len(outputs) - 1))


def _concat_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    a = c.trace.labels[row]
    index, local = divmod(col, c.head.d_k)
    return CellArithmetic(f"{a}, column {col} of the concatenation",
                          f"concat_{a}[{col}] = out_{a}[{local}] of head {index + 1} = {fmt(c.trace.concat[row, col])}",
                          (Used(f"out{index}", row, local),))


def _w_o_tables(c: StepContext) -> Tables:
    trace, features = c.trace, tuple(c.trace.output_column_labels())
    inputs = (_concat_table(c), c.table("w_o", "W_O", trace.w_o, dims(trace.w_o.shape[0]), features))
    if trace.b_o is not None:
        inputs += (c.table("b_o", "b_O", trace.b_o[None, :], ("b",), features),)
    return Tables(inputs, (c.table("final", "final output", trace.output, cols=features),),
                  ops=("·", "+")[:len(inputs) - 1])


def _w_o_formula(trace: Trace) -> str:
    return "y_a[f] = concat_a · W_O[:, f]" + ("" if trace.b_o is None else " + b_O[f]")


def _w_o_cell(c: StepContext, row: int, col: int, result: str | None) -> CellArithmetic:
    trace, a = c.trace, c.trace.labels[row]
    feature = trace.output_column_labels()[col]
    terms, used = dot(trace.concat[row], trace.w_o[:, col]), (Used("concat", row, None), Used("w_o", None, col))
    if trace.b_o is not None:
        terms, used = f"{terms} + {factor(trace.b_o[col])}", (*used, Used("b_o", 0, col))
    return CellArithmetic(f"row {a} of the concatenation times column {feature} of W_O",
                          f"y_{a}[{feature}] = {terms} = {fmt(trace.output[row, col])}", used)


STEPS = (
    Step("embed", "X", "Embed: X = embedding (+ positions)",
         "Each word becomes a row of numbers, one per feature: its embedding. Attention alone cannot tell word "
         "order apart, so with positions switched on a wave pattern unique to each place in the sentence is added.",
         _embed_formula, _embed_tables, _embed_cell),
    Step("q", "Q", "Queries: Q = X·W_Q",
         "A word's query says what it is looking for. Multiplying its features by W_Q turns \"I am a verb\" into "
         "\"I look for an animal\".",
         _projection_formula("q"), _q_tables, lambda c, row, col, result: _projection_cell("q", c, row, col),
         per_head=True),
    Step("kv", "K, V", "Keys and values: K = X·W_K, V = X·W_V", KV_EXPLANATION,
         _projection_formula("k", "v"), _kv_tables, _kv_cell, per_head=True, note=shared_kv_note,
         title_of=_kv_title, explanation_of=_kv_explanation),
    Step("rope", "RoPE", "Rotary positions: turn q and k by position",
         "Llama-style models add no positions to the embedding. Instead each pair of a query's (and a key's) "
         "numbers is turned by an angle that grows with the word's position, so q·k depends on how far apart "
         "two words are, not on where they stand.",
         rope_formula, rope_tables, rope_cell, per_head=True, skip_reason=rope_skip, note=shared_kv_note,
         passes_on=lambda c: c.table("q", "Q, unchanged" + c.of_head, c.head.q)),
    Step("scores", "QKᵀ", "Scores: QKᵀ",
         "Every query meets every key in a dot product: the larger q·k, the better the match. Rows are the words "
         "looking, columns the words looked at: n² numbers, which is why attention costs O(n²).",
         "score(a → b) = q_a · k_b", _scores_tables, _scores_cell, per_head=True, heatmap="scores"),
    Step("scaled", "÷ √d_k", "Scale: QKᵀ ÷ √d_k",
         "A dot product of d_k numbers grows like √d_k, and large scores make softmax give almost all weight to "
         "one word, where learning stalls. Dividing by √d_k keeps the scores' spread near 1 whatever d_k is.",
         _scaled_formula, _scaled_tables, _scaled_cell, per_head=True, heatmap="scaled",
         skip_reason=lambda trace: "" if trace.options.scale else "skipped: scaling is off",
         passes_on=lambda c: c.table("scores", "scores, unchanged" + c.of_head, c.head.scores, cols=c.key_words)),
    Step("masked", "mask", "Mask: −∞ where a word may not look",
         CAUSAL_EXPLANATION,
         _masked_formula, _masked_tables, _masked_cell,
         per_head=True, heatmap="masked",
         skip_reason=lambda trace: "" if trace.mask is not None else "skipped: no causal mask",
         title_of=_masked_title, explanation_of=_masked_explanation,
         passes_on=lambda c: c.table("scaled", "scores, unchanged" + c.of_head, c.head.scaled, cols=c.key_words)),
    Step("softmax", "softmax", "Softmax: each row becomes weights",
         "Softmax turns each row of scores into weights that are positive and add up to 1: e to the score, "
         "divided by the row's sum. Larger scores win more than their share, yet every visible word keeps some "
         "weight, and the curve is smooth enough to learn.",
         "weight(a → b) = e^score(a → b) ÷ Σ_c e^score(a → c), summed over every word c",
         _softmax_tables, _softmax_cell, per_head=True, heatmap="weights", fill_by_row=True),
    Step("output", "× V", "Output: weights · V",
         "Each word's output is an average of all the value rows, weighted by its row of weights: it takes a "
         "little from every word and most from the words it attends to.",
         "out_a[j] = Σ_b weight(a → b) × v_b[j], summed over every word b", _output_tables, _output_cell,
         per_head=True, heatmap="weights"),
    Step("concat", "concat", "Concatenate the heads",
         "Several heads run the same steps on their own slices of the columns, so each can ask its own question "
         "(one looks for the subject, another for the object). Their outputs are set side by side.",
         "concat_a = out_a of head 1 | out_a of head 2 | …", _concat_tables, _concat_cell, heatmap="weights",
         skip_reason=lambda trace: "skipped: one head, nothing to concatenate" if len(trace.heads) == 1 else "",
         passes_on=lambda c: c.table("output", "the head's output, unchanged", c.head.output)),
    Step("w_o", "× W_O", "Mix the heads: concat · W_O",
         "W_O mixes the heads' outputs back into the model's features, so each word leaves the layer as one "
         "vector that combines what every head found.",
         _w_o_formula, _w_o_tables, _w_o_cell, heatmap="weights",
         skip_reason=lambda trace: ("skipped: this model has no W_O, so the output is the concatenation"
                                    if trace.w_o is None else ""),
         passes_on=lambda c: c.table("output", "output, unchanged", c.trace.output,
                                     cols=dims(c.trace.output.shape[1]))),
)
STEP_KEYS = tuple(step.key for step in STEPS)
LAST_STEP = len(STEPS) - 1
ARCS_FROM_STEP = STEP_KEYS.index("softmax")  # the arc diagram draws weights, which exist from here on


def step_index(key: str) -> int:
    return STEP_KEYS.index(key)


def skip_reason(trace: Trace, key: str) -> str:
    """Why step `key` does nothing on this trace, or "" when it runs."""
    return STEPS[step_index(key)].skip_reason(trace)


def heatmap_matrix(key: str) -> str | None:
    """The heatmap's matrix at step `key`: the scores of that stage, the weights from softmax on."""
    return STEPS[step_index(key)].heatmap


def _context(trace: Trace, head: int) -> StepContext:
    return StepContext(trace, trace.heads[head], f" (head {head + 1})" if len(trace.heads) > 1 else "")


def step_view(trace: Trace, key: str, head: int = 0) -> StepView:
    """The tables of step `key` for `head` (0-based) of `trace`."""
    step, context = STEPS[step_index(key)], _context(trace, head)
    skipped = step.skip_reason(trace)
    if skipped:
        return StepView(step, (step.passes_on(context),), (), skipped=skipped)
    tables = step.tables(context)
    return StepView(step, tables.inputs, tables.results, tables.ops, tables.arrow, formula=step.formula_for(trace),
                    note=step.note(context) if step.note else "")


def cell_arithmetic(trace: Trace, step: str, head: int, row: int, col: int,
                    result: str | None = None) -> CellArithmetic:
    """The arithmetic of cell (row, col) of a result of `step` (a key of STEPS) for `head`.

    `result` picks one of several results ("k" or "v" at the "kv" step). Raises ValueError for a
    skipped step, which has no result cells, and for an unknown step.
    """
    if step not in STEP_KEYS:
        raise ValueError(f"unknown step {step!r}")
    found = STEPS[step_index(step)]
    if found.skip_reason(trace):
        raise ValueError(f"step {step!r} is skipped on this trace: it has no result cells")
    return found.arithmetic(_context(trace, head), row, col, result)
