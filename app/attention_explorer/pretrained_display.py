"""What the main views show of a real model: one layer's Trace, read as pieces or words, with or without
the special tokens and sinks, the layer's own heads or the rollout up to it.

Pure NumPy (no Qt), so the window and the command line share it. The views draw a Trace; a choice here
gives them a Trace of the same shape rules (every n × n matrix the same size, every row array one row a
token), so none of them needs to know about real models. The weights come from the engine's own
functions (merge_words, hide_tokens, attention_rollout): nothing is recomputed here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .engine import pretrained  # its analysis loads on first use, once a real model is open
from .engine.census.norm_attention import with_norm_attention
from .engine.reading import HiddenStage, Reading, RolloutStage, WordsStage
from .engine.tokenizer import token_labels
from .engine.trace import HeadTrace, Trace

if TYPE_CHECKING:  # types only: the modules load once a real model is opened
    from .engine.pretrained import PretrainedTrace

MERGE_RULE = "words: a word looks with the mean of its pieces and is looked at with the sum over its pieces"
ROLLOUT_RULE = ("rollout: the heads averaged, the residual added and multiplied through the layers up to "
                "this one (Abnar & Zuidema 2020); every head shows the same matrix")


@dataclass(frozen=True)
class RealView:
    """How a real model's layer is read. All off: the layer's heads over the model's own pieces."""

    merge_words: bool = False
    hide_specials: bool = False
    hide_first: bool = False    # the first token, where decoders park most of their weight (a sink)
    rollout: bool = False

    def with_changes(self, **changes) -> RealView:
        return replace(self, **changes)


def hidden_indices(ptrace: PretrainedTrace, view: RealView) -> list[int]:
    """The tokens this view hides: the specials, the first token, or both."""
    hidden = set(np.flatnonzero(ptrace.special).tolist()) if view.hide_specials else set()
    if view.hide_first:
        hidden.add(0)
    if len(hidden) >= ptrace.n:  # nothing would be left to show: hide nothing
        return []
    return sorted(hidden)


def shown_trace(ptrace: PretrainedTrace, layer: int, view: RealView) -> tuple[Trace, str]:
    """Layer `layer` as the views draw it under `view`, and one line saying what was done to it.
    A trace read otherwise than head by head over the model's tokens carries its Reading: the
    layer's own trace, and how each shown weight was made from it."""
    source = trace = with_norm_attention(ptrace.layer_trace(layer))
    notes, stages = [], []
    groups: tuple[tuple[int, ...], ...] = tuple((i,) for i in range(ptrace.n))
    if view.rollout:
        rolled = ptrace.rollout()
        trace = replace(trace, heads=tuple(replace(h, weights=rolled[layer], norm=None, moved_norm=None)
                                           for h in trace.heads))  # norms are of one head's vectors
        stages.append(RolloutStage(layer, len(trace.heads), ptrace.weights[layer].mean(axis=0, dtype=np.float64),
                                   pretrained.rollout_mix(ptrace.weights[layer]),
                                   rolled[layer - 1] if layer > 0 else None))
        notes.append(ROLLOUT_RULE)
    hidden = hidden_indices(ptrace, view)
    words = ptrace.words
    if hidden:
        before = tuple(h.weights for h in trace.heads)
        trace, removed, kept = _hide(trace, hidden)
        words = pretrained.words_after_hiding(words, kept)
        groups = tuple(groups[i] for i in kept)
        names = ", ".join(dict.fromkeys(ptrace.labels[i] for i in hidden))
        stages.append(HiddenStage(before, kept, names))
        notes.append(f"hidden: {names} — they had {removed:.0%} of the weight on average; rows renormalised")
    if view.merge_words:
        before = tuple(h.weights for h in trace.heads)
        trace = _merge(trace, words)
        stages.append(WordsStage(before, words))
        groups = tuple(tuple(i for piece in word for i in groups[piece]) for word in words)
        notes.append(MERGE_RULE)
    note = "; ".join(notes)
    if stages:
        trace = replace(trace, reading=Reading(source, tuple(stages), groups, note))
    return trace, note


def shown_weights(ptrace: PretrainedTrace, view: RealView) -> tuple[np.ndarray, list[str]]:
    """Every layer's and head's weights as the main views read them (hidden tokens, words), and the
    labels: (layers, heads, n', n'). The same arithmetic as hide_tokens and merge_words, done on all
    cells at once (a loop over 270 cells of a decoder took over a second).
    Rollout is one matrix per layer, not per head, so the cells always show the heads."""
    weights = ptrace.weights  # float32 as the forward made it; float64 once hiding or merging does arithmetic
    tokens = list(ptrace.tokens)
    words = ptrace.words
    hidden = hidden_indices(ptrace, view)
    if hidden:
        kept = np.setdiff1d(np.arange(ptrace.n), hidden)
        weights = weights[:, :, kept][:, :, :, kept].astype(np.float64)
        remaining = weights.sum(axis=-1, keepdims=True)
        weights = np.divide(weights, remaining, out=np.zeros_like(weights), where=remaining > 0)
        words = pretrained.words_after_hiding(words, kept)
        tokens = [tokens[i] for i in kept]
    if view.merge_words:
        starts, sizes = _runs(words, len(tokens))
        looked_at = np.add.reduceat(weights.astype(np.float64), starts, axis=-1)   # sum over its pieces
        weights = np.add.reduceat(looked_at, starts, axis=-2) / sizes[:, None]      # mean over its pieces
        tokens = [_word_text(tokens, word) for word in words]
    return weights, token_labels(tokens)


def _word_text(tokens: list[str], word: tuple[int, ...]) -> str:
    return "".join(tokens[i].removeprefix(pretrained.CONTINUATION) for i in word)


def _hide(trace: Trace, hidden: list[int]) -> tuple[Trace, float, np.ndarray]:
    """Every matrix of the trace without the hidden tokens; weights renormalised by hide_tokens."""
    kept = np.setdiff1d(np.arange(trace.n), hidden)
    removed = []
    heads = []
    for head in trace.heads:
        result = pretrained.hide_tokens(head.weights, hidden)
        removed.append(float(result.removed.mean()) if len(result.removed) else 0.0)
        block = pretrained.kept_block(kept)
        # norms are lengths of what each token moves, not shares of a row: kept as they are
        square = {name: getattr(head, name)[block] for name in ("scores", "scaled", "masked", "norm")
                  if getattr(head, name) is not None}
        rows = _row_arrays(head, lambda a: a[kept])
        if head.moved_norm is not None:
            rows["moved_norm"] = head.moved_norm[kept]
        heads.append(replace(head, weights=result.weights, **square, **rows))
    tokens = [trace.tokens[i] for i in kept]
    mask = None if trace.mask is None else trace.mask[pretrained.kept_block(kept)]
    return _with_rows(trace, heads, tokens, lambda a: a[kept], mask), float(np.mean(removed)), kept


def _merge(trace: Trace, words: tuple[tuple[int, ...], ...]) -> Trace:
    """Pieces into words: weights by merge_words; the other n × n matrices and the row arrays averaged
    over each word's pieces (a mean keeps them on the scale of one piece)."""
    starts, sizes = _runs(words, trace.n)

    def rows(a: np.ndarray) -> np.ndarray:
        return np.add.reduceat(a, starts, axis=0) / sizes[:, None]

    def blocks(a: np.ndarray) -> np.ndarray:
        return np.add.reduceat(np.add.reduceat(a, starts, axis=0), starts, axis=1) / np.outer(sizes, sizes)

    mask = None
    if trace.mask is not None:  # a word may not look at another when none of its pieces may
        mask = blocks(trace.mask.astype(np.float64)) == 1.0
    heads = []
    for head in trace.heads:
        scaled = blocks(head.scaled)
        masked = scaled.copy() if mask is None else np.where(mask, -np.inf, scaled)
        heads.append(replace(head, weights=pretrained.merge_words(head.weights, words), scores=blocks(head.scores),
                             scaled=scaled, masked=masked, **_row_arrays(head, rows),
                             norm=None, moved_norm=None))  # the lengths of pieces' vectors do not add
    tokens = [_word_text(trace.tokens, word) for word in words]
    return _with_rows(trace, heads, tokens, rows, mask)


def _runs(words: tuple[tuple[int, ...], ...], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each word starts and how many pieces it has: a real model's words are always runs."""
    runs = pretrained.word_runs(words, n)
    if runs is None:
        raise ValueError("words must be runs of neighbouring tokens covering all of them")
    return runs


def _row_arrays(head: HeadTrace, pick) -> dict[str, np.ndarray]:
    names = ("q", "k", "v", "output", "q_before_rope", "k_before_rope")
    return {name: pick(getattr(head, name)) for name in names if getattr(head, name) is not None}


def _with_rows(trace: Trace, heads: list[HeadTrace], tokens: list[str], pick, mask) -> Trace:
    rope = {name: pick(getattr(trace, name)) for name in ("rope_cos", "rope_sin") if getattr(trace, name) is not None}
    return replace(trace, tokens=tokens, labels=token_labels(tokens), heads=tuple(heads), mask=mask,
                   embedding=pick(trace.embedding), x=pick(trace.x), concat=pick(trace.concat),
                   output=pick(trace.output), **rope)
