"""The words around a figure: its caption (which model, text, layer and head, reading and options), the
colour bar's label, the default file name. One place, so the window and the command line write the
same words. No Qt here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .engine.census.norm_attention import FORMULA as NORM_FORMULA
from .figure_state import ViewState

CAPTION_TEXT_CHARS = 140   # a longer text is quoted up to here, with …
NAME_WORDS = 3             # the default file name carries the text's first words

MATRIX_NAMES = {"weights": "attention weights softmax(QKᵀ/√d_k)", "scores": "scores QKᵀ",
                "scaled": "scaled scores QKᵀ/√d_k", "masked": "masked scores (before softmax)",
                "norm": f"norm-based attention {NORM_FORMULA} (Kobayashi et al. 2020)"}
SPAN_NAMES = {"fixed": "colours span 0 – 1", "data": "colours span the shown values",
              "row": "each row coloured from 0 to its largest weight"}
COLOUR_BAR_LABELS = {"weights": "attention weight", "scores": "score q·k", "scaled": "scaled score q·k/√d_k",
                     "masked": "masked score", "norm": "weight × moved norm"}
VIEW_NAMES = {"heatmap": "heatmap", "arcs": "arcs", "bars": "bars", "steps": "steps", "model": "model-view"}


@dataclass(frozen=True)
class FigureFacts:
    """What the caption says about the computation, read off the controller that drew the figure."""

    model_name: str
    n: int                       # tokens (or words) shown
    heads: int
    d_k: int
    unit: str = "words"          # "tokens" for a real model read as its pieces
    layers: int | None = None    # a real model's layer count
    options: dict | None = None  # a toy model's scale, causal, positional
    note: str = ""               # what the reading did (hidden tokens, merged words, rollout)
    unknown: tuple[str, ...] = ()
    visible: tuple[range, range] | None = None  # the rows and columns of a part of the heatmap
    span: str | None = None      # the heatmap's colour span as drawn
    arcs_heads: int | None = None  # the arcs: how many heads' lines were drawn (one when too many words)


def caption(state: ViewState, facts: FigureFacts) -> str:
    """One paragraph: model · text · layer and head · what is drawn · options · focus."""
    text = " ".join(state.sentence.split())
    if len(text) > CAPTION_TEXT_CHARS:
        text = text[:CAPTION_TEXT_CHARS - 1].rstrip() + "…"
    parts = [facts.model_name, f"“{text}” ({facts.n} {facts.unit})", _where(state, facts), _what(state, facts)]
    if facts.options is not None:
        parts.append(_toy_options(facts.options, facts.d_k))
    if state.real and state.reading.get("rollout") and state.grid is None and state.view != "model":
        parts.append("rollout: the heads averaged with the residual, multiplied through the layers")
    if facts.note:
        parts.append(_reading_note(facts.note))
    if state.ablated:
        parts.append("switched off: " + ", ".join(f"L{layer + 1} H{head + 1}" for layer, head in state.ablated))
    if state.focus is not None and state.view != "model":
        role = "who looks at it" if state.focus.role == "looked_at" else "where it looks"
        parts.append(f"focus: “{state.focus.word}” ({role})")
    if facts.visible is not None:
        rows, cols = facts.visible
        parts.append(f"part shown: rows {rows.start + 1}–{rows.stop} and columns {cols.start + 1}–{cols.stop} "
                     f"of {facts.n}")
    if facts.unknown:
        parts.append("left out (not in the model's words): " + ", ".join(facts.unknown))
    return " · ".join(part for part in parts if part)


def _where(state: ViewState, facts: FigureFacts) -> str:
    if state.view == "model":
        return f"every layer ({facts.layers}) and head ({facts.heads})"
    layer = f"layer {state.layer + 1} of {facts.layers}, " if facts.layers is not None else ""
    if state.grid == "heads":
        return f"{layer}every head ({facts.heads})"
    if state.grid == "layers":
        return f"head {state.head + 1} of {facts.heads} in every layer ({facts.layers or 1})"
    if state.view == "arcs" and state.all_heads and facts.heads > 1:
        if facts.arcs_heads is None or facts.arcs_heads > 1:
            return f"{layer}all {facts.heads} heads, one colour each"
        return f"{layer}head {state.head + 1} of {facts.heads} (too many words at this height to tell every head's " \
               f"arcs apart)"
    return f"{layer}head {state.head + 1} of {facts.heads}"


def _what(state: ViewState, facts: FigureFacts) -> str:
    if state.view == "model":
        return "each cell coloured from 0 to its largest weight"
    if state.view == "arcs":
        kept = f", the strongest {state.strongest} per word" if state.strongest else ""
        more = "the more it moves (weight × moved norm)" if state.matrix == "norm" else "more weight"
        return f"arcs: the word looking (left) to the word looked at (right), thicker for {more}{kept}"
    if state.view == "bars":
        return "one word's weight × moved norm as bars" if state.matrix == "norm" else \
            "one word's attention weights as bars"
    if state.view == "steps":
        return _step_words(state.step)
    words = MATRIX_NAMES[state.matrix]
    if state.grid is not None:
        words += ", one colour scale for all"
    if state.matrix == "weights" and facts.span in SPAN_NAMES:
        words += f"; {SPAN_NAMES[facts.span]}"
    return words


def _step_words(key: str | None) -> str:
    from .engine.steps import STEP_KEYS, STEPS  # the registry loads only for a steps figure

    if key not in STEP_KEYS:
        return "the computation, step by step"
    index = STEP_KEYS.index(key)
    return f"step {index + 1} of {len(STEPS)}, {STEPS[index].title}"


def _toy_options(options: dict, d_k: int) -> str:
    return ", ".join([f"scaled by √{d_k}" if options.get("scale") else "not scaled",
                      "causal mask" if options.get("causal") else "no mask",
                      "positional encoding" if options.get("positional") else "no positions"])


def _reading_note(note: str) -> str:
    """The display note without the rollout's long rule (said once above)."""
    return "; ".join(part for part in note.split("; ") if not part.startswith("rollout:"))


def colour_bar_label(state: ViewState, span: str | None) -> str:
    """What the colour bar's numbers are."""
    if state.real and state.reading.get("rollout") and state.matrix == "weights":
        return "rollout weight"
    if state.matrix == "weights" and span == "row":
        return "weight ÷ the row's largest"
    return COLOUR_BAR_LABELS[state.matrix]


def default_file_stem(state: ViewState, model_name: str) -> str:
    """model, view, layer/head and the text's first words: "cat-sat-on-mat-heatmap-head1-the-cat-sat"."""
    where = f"L{state.layer + 1}H{state.head + 1}" if state.real else f"head{state.head + 1}"
    if state.grid == "heads":
        where = f"L{state.layer + 1}-all-heads" if state.real else "all-heads"
    elif state.grid == "layers":
        where = f"H{state.head + 1}-all-layers"
    elif state.view == "model":
        where = "all-layers"
    words = "-".join(state.sentence.split()[:NAME_WORDS])
    parts = [model_name, VIEW_NAMES.get(state.view, state.view), where, words]
    return "-".join(filter(None, (_slug(part) for part in parts)))[:120] or "figure"


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold(), flags=re.UNICODE).strip("-_")
