"""What the main views show of a real model: one layer's Trace, read as pieces or words, with or without
the special tokens and sinks, the layer's own heads or the rollout up to it.

Pure NumPy (no Qt), so the window and the command line share it. The views draw a Trace; a choice here
gives them a Trace of the same shape rules (every n × n matrix the same size, every row array one row a
token), so none of them needs to know about real models. The weights come from the engine's own
functions (merge_words, hide_tokens, rollout): nothing is recomputed here. A reading's heads are
lazy like the layer's (engine/lazy_trace.py): a head's n × n matrices are read, hidden or merged when
a view first reads them, so a reading of a 8,192-token text costs the one head on show.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .engine import pretrained  # its analysis loads on first use, once a real model is open
from .engine.lazy_trace import LazyHeadTrace, LazyTrace, LazyTuple
from .engine.limits import ROLLOUT_MAX_TOKENS
from .engine.reading import HiddenStage, Reading, RolloutStage, WordsStage
from .engine.row_matrix import RowMatrix
from .engine.tokenizer import token_labels

if TYPE_CHECKING:  # types only: the modules load once a real model is opened
    from .engine.pretrained import PretrainedTrace
    from .engine.pretrained.encoder_decoder_view import EncoderDecoderTrace

MERGE_RULE = "words: a word looks with the mean of its pieces and is looked at with the sum over its pieces"
ROLLOUT_RULE = ("rollout: the heads averaged, the residual added and multiplied through the layers up to "
                "this one (Abnar & Zuidema 2020); every head shows the same matrix")
ROLLOUT_TOO_LONG = (f"rollout is offered up to {ROLLOUT_MAX_TOKENS:,} tokens (each layer multiplies two "
                    f"n × n matrices); the layer's own heads are shown")
# why cross-attention has no rollout: said in the note under a rollout chosen before, and in the box's tooltip
CROSS_ROLLOUT_WHY = ("rollout multiplies one stack's token-to-token mixes layer by layer, and cross-attention "
                     "mixes two texts")
CROSS_ROLLOUT = f"no rollout for cross-attention ({CROSS_ROLLOUT_WHY}): the layer's own heads are shown"
SQUARE = ("scores", "scaled", "masked", "weights", "norm")
ROWS = ("q", "k", "v", "q_before_rope", "k_before_rope", "moved_norm")
KEY_ROWS = ("k", "v", "k_before_rope", "moved_norm")  # a row per token looked at: the source's in cross-attention
UNNORMED = {"norm": lambda _h: None}  # rollout and words have no norm-based attention: lengths of one token's
                                      # vector in one head do not add over heads or pieces


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
    return _hidden(ptrace.special, view)


def hidden_key_indices(ptrace: EncoderDecoderTrace, view: RealView) -> list[int]:
    """The columns this view hides when they are another text's tokens (cross-attention reading the
    source): the source's specials, its first token, or both, as for the rows."""
    return _hidden(ptrace.key_special, view)


def _hidden(special: np.ndarray, view: RealView) -> list[int]:
    hidden = set(np.flatnonzero(special).tolist()) if view.hide_specials else set()
    if view.hide_first:
        hidden.add(0)
    if len(hidden) >= len(special):  # nothing would be left to show: hide nothing
        return []
    return sorted(hidden)


def shown_trace(ptrace: PretrainedTrace | EncoderDecoderTrace, layer: int, view: RealView) -> tuple[LazyTrace, str]:
    """Layer `layer` as the views draw it under `view`, and one line saying what was done to it.
    A trace read otherwise than head by head over the model's tokens carries its Reading: the
    layer's own trace, and how each shown weight was made from it.

    Cross-attention (an encoder–decoder's target reading its source) is read per axis: its rows are
    the target's tokens or words, its columns the source's, each hidden and merged by its own text's
    specials and words with the same rules as a square matrix's. Rollout is not offered for it
    (CROSS_ROLLOUT says why): the layer's own heads are shown and the note says so. Abnar & Zuidema
    define rollout for one stack, whose residual stream carries each token on; a target token takes in
    the source at every decoder layer, through that layer's cross-attention beside its own residual,
    so a product such as (decoder rollout) · (one layer's cross-attention) · (encoder rollout) would
    drop the other layers' reading of the source and weigh each part by a choice of ours. Rather than
    a number that looks exact and is not, the encoder's and the decoder's stacks are rolled out each."""
    source = trace = ptrace.layer_trace(layer)
    cross = source.key_tokens is not None
    # a reading of a decoder's layer keeps the shared causal mask of its length; a layer with a sliding
    # window reads its own mask through the reading, so the keys too far back stay masked
    windowed = ptrace.arch.is_decoder and ptrace.arch.window(layer) > 0
    # (the masks' own function, not the trace's method: a view holding this reading after the trace was
    # replaced held every layer's input with it)
    causal = ptrace.causal_masks() if source.options.causal and not windowed else None
    notes, stages = [], []
    groups: tuple[tuple[int, ...], ...] = tuple((i,) for i in range(ptrace.n))
    key_groups = tuple((i,) for i in range(source.n_keys)) if cross else None
    rolled = None
    if view.rollout and cross:
        notes.append(CROSS_ROLLOUT)
    elif view.rollout and ptrace.n > ROLLOUT_MAX_TOKENS:
        notes.append(ROLLOUT_TOO_LONG)
    elif view.rollout:
        previous = ptrace.rollout(layer - 1) if layer > 0 else None
        rolled = ptrace.rollout(layer)
        trace = trace.replaced(heads=tuple(_derived(h, dropped=("moved_norm",), weights=lambda _s: rolled, **UNNORMED)
                                           for h in trace.heads))
        stages.append(RolloutStage(layer, ptrace.layer_weights(layer), previous))
        notes.append(ROLLOUT_RULE)
    hidden = hidden_indices(ptrace, view)
    hidden_keys = hidden_key_indices(ptrace, view) if cross else None
    words = ptrace.words
    key_words = ptrace.key_words if cross else None
    if hidden or hidden_keys:
        before = trace
        trace, kept, kept_keys = _hide(trace, hidden, hidden_keys, causal)
        words = pretrained.words_after_hiding(words, kept)
        groups = tuple(groups[i] for i in kept)
        if cross:
            key_words = pretrained.words_after_hiding(key_words, kept_keys)
            key_groups = tuple(key_groups[i] for i in kept_keys)
        names = ", ".join(dict.fromkeys([ptrace.labels[i] for i in hidden] +
                                        [ptrace.key_labels[i] for i in hidden_keys or ()]))
        stages.append(HiddenStage(_weights_of(before), kept, names, kept_keys if cross else None))
        removed = (_removed_share(rolled, kept) if rolled is not None else
                   ptrace.hidden_share(layer, hidden, hidden_keys) if cross else ptrace.hidden_share(layer, hidden))
        notes.append(f"hidden: {names} — they had {removed:.0%} of the weight on average; rows renormalised")
    if view.merge_words:
        before = trace
        trace = _merge(trace, words, key_words, causal)
        stages.append(WordsStage(_weights_of(before), words, key_words))
        groups = tuple(tuple(i for piece in word for i in groups[piece]) for word in words)
        if cross:
            key_groups = tuple(tuple(i for piece in word for i in key_groups[piece]) for word in key_words)
        notes.append(MERGE_RULE)
    note = "; ".join(notes)
    if stages:
        trace = trace.replaced(reading=Reading(source, tuple(stages), groups, note, key_groups))
    return trace, note


def _weights_of(trace: LazyTrace) -> LazyTuple:
    """Each head's weights in `trace`, made when a stage's arithmetic first reads them. A function of its
    own so each stage keeps its own trace (a lambda in shown_trace read the variable's last value: the
    hidden tokens' stage then read the words' input, two tokens short)."""
    return LazyTuple(lambda h: trace.heads[h].weights, len(trace.heads))


def _removed_share(weights: np.ndarray, kept: np.ndarray) -> float:
    """The mean share of a kept row's weight that went to the hidden tokens."""
    rows = weights[kept]
    return float(np.mean(1.0 - rows[:, kept].sum(axis=1) / rows.sum(axis=1)))


def _derived(head: LazyHeadTrace, rows=None, dropped: tuple[str, ...] = (), keys=None, **made) -> LazyHeadTrace:
    """A head that reads `head`'s parts, except those in `made` (name → function of `head`), the row
    arrays picked by `rows` (a function of an array; the keys' and values' rows by `keys` when they
    are another text's tokens, cross-attention) and the row arrays `dropped` (None): what each
    reading builds on the one before. Each is made when first read: the steps show the layer's own
    trace, so a reading's rows of queries, keys and values are seldom read (twelve heads' averaged over
    words took 1.6 ms of each Words switched on at 512 MiniLM tokens)."""
    makers = {name: (lambda _h, name=name: getattr(head, name)) for name in (*SQUARE, *ROWS, "output")}
    if rows is not None:
        makers.update({name: (lambda _h, name=name, pick=(keys or rows if name in KEY_ROWS else rows):
                              _picked(pick, getattr(head, name))) for name in ROWS})
    makers.update({name: (lambda _h, make=make: make(head)) for name, make in made.items()})
    fields = {name: value for name, value in vars(head).items() if name not in (*SQUARE, *ROWS, "output", "_makers")}
    fields.update(dict.fromkeys(dropped))
    return LazyHeadTrace(makers, **fields)


def _picked(pick, values: np.ndarray | None) -> np.ndarray | None:
    return None if values is None else pick(values)


def _hide(trace: LazyTrace, hidden: list[int], hidden_keys: list[int] | None, causal
          ) -> tuple[LazyTrace, np.ndarray, np.ndarray | None]:
    """Every matrix of the trace without the hidden tokens; weights renormalised by hide_tokens. A
    decoder's tokens left keep their order, so its mask stays causal (`causal(n)` gives it; None: the
    kept rows and columns of the trace's own mask, a sliding window's too). `hidden_keys`: the columns
    hidden when they are another text's tokens (cross-attention), else None. Returns the trace and the
    rows and (cross-attention) columns kept."""
    kept = np.setdiff1d(np.arange(trace.n), hidden)
    kept_keys = None if hidden_keys is None else np.setdiff1d(np.arange(trace.n_keys), hidden_keys)
    block = pretrained.kept_block(kept, kept_keys)

    def pick(a: np.ndarray) -> np.ndarray:
        return a[kept]

    def pick_keys(a: np.ndarray) -> np.ndarray:
        return a[kept_keys]

    def square(values):  # a long text's scores stay made by the rows read when the kept tokens are one run
        if isinstance(values, RowMatrix) and isinstance(block[0], slice):
            return values.window(*block)
        return values[block]

    heads = [_derived(head, pick, keys=pick_keys if kept_keys is not None else None,
                      weights=lambda h: pretrained.hide_tokens(h.weights, hidden, hidden_keys).weights,
                      scores=lambda h: square(h.scores), scaled=lambda h: square(h.scaled),
                      masked=lambda h: square(h.masked), output=lambda h: h.output[kept],
                      # norms are lengths of what each token moves, not shares of a row: kept as they are
                      norm=lambda h: None if h.norm is None else h.norm[block]) for head in trace.heads]
    tokens = [trace.tokens[i] for i in kept]
    def mask(_t):
        if causal is not None:
            return causal(len(kept))
        return None if trace.mask is None else trace.mask[block]

    makers = {"mask": mask, "concat": lambda _t: trace.concat[kept], "output": lambda _t: trace.output[kept]}
    keys = None if kept_keys is None else ([trace.key_tokens[i] for i in kept_keys], pick_keys)
    return _with_rows(trace, makers, heads, tokens, pick, keys), kept, kept_keys


def _merge(trace: LazyTrace, words: tuple[tuple[int, ...], ...], key_words: tuple[tuple[int, ...], ...] | None,
           causal) -> LazyTrace:
    """Pieces into words: weights by merge_words; the other n × n matrices and the row arrays averaged
    over each word's pieces (a mean keeps them on the scale of one piece). Words are runs of pieces
    in order, so a decoder's mask over words is causal too (`causal(n)` gives it; None: a word may not
    look at another where none of its pieces may, by the trace's own mask, a sliding window's too).
    `key_words`: the columns' words when they are another text's (cross-attention), else None."""
    starts, sizes = _runs(words, trace.n)
    key_starts, key_sizes = (starts, sizes) if key_words is None else _runs(key_words, trace.n_keys)

    def rows(a: np.ndarray) -> np.ndarray:
        summed = pretrained.sum_runs(a, starts, sizes, axis=0)
        summed /= sizes.astype(summed.dtype)[:, None]
        return summed

    def key_rows(a: np.ndarray) -> np.ndarray:
        summed = pretrained.sum_runs(a, key_starts, key_sizes, axis=0)
        summed /= key_sizes.astype(summed.dtype)[:, None]
        return summed

    def blocks(a: np.ndarray) -> np.ndarray:
        summed = pretrained.sum_runs(pretrained.sum_runs(a, key_starts, key_sizes, axis=1), starts, sizes, axis=0)
        summed /= np.outer(sizes, key_sizes).astype(summed.dtype)
        return summed

    made: dict[str, np.ndarray | None] = {}  # the words' mask, made once (not read back from the trace:
                                             # a maker holding the trace would make a reference cycle)

    def mask(_t=None):  # a word may not look at another when none of its pieces may
        if "mask" not in made:
            if causal is not None:
                made["mask"] = causal(len(words))
            elif trace.mask is None:
                made["mask"] = None
            else:
                made["mask"] = np.logical_and.reduceat(np.logical_and.reduceat(trace.mask, key_starts, axis=1), starts,
                                                       axis=0)
        return made["mask"]

    def masked(head):
        scaled = blocks(head.scaled)
        if mask() is not None:
            scaled[mask()] = -np.inf
        return scaled

    heads = [_derived(head, rows, dropped=("moved_norm",), keys=None if key_words is None else key_rows,
                      weights=lambda h: pretrained.merge_words(h.weights, words, key_words),
                      scores=lambda h: blocks(h.scores), scaled=lambda h: blocks(h.scaled), masked=masked,
                      output=lambda h: rows(h.output), **UNNORMED) for head in trace.heads]
    tokens = [_word_text(trace.tokens, word) for word in words]
    makers = {"mask": mask, "concat": lambda _t: rows(trace.concat), "output": lambda _t: rows(trace.output)}
    keys = None if key_words is None else ([_word_text(trace.key_tokens, word) for word in key_words], key_rows)
    return _with_rows(trace, makers, heads, tokens, rows, keys)


def _word_text(tokens: list[str], word: tuple[int, ...]) -> str:
    return "".join(tokens[i].removeprefix(pretrained.CONTINUATION) for i in word)


def _runs(words: tuple[tuple[int, ...], ...], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each word starts and how many pieces it has: a real model's words are always runs."""
    runs = pretrained.word_runs(words, n)
    if runs is None:
        raise ValueError("words must be runs of neighbouring tokens covering all of them")
    return runs


def _with_rows(trace: LazyTrace, makers: dict, heads: list[LazyHeadTrace], tokens: list[str], pick,
               keys: tuple[list[str], object] | None = None) -> LazyTrace:
    """The trace with its rows' tokens and row arrays read (`pick`) and, for cross-attention, its
    columns' tokens and what their keys read (`keys`: the tokens and their pick)."""
    rope = {name: pick(getattr(trace, name)) for name in ("rope_cos", "rope_sin") if getattr(trace, name) is not None}
    fields = {name: value for name, value in vars(trace).items() if name not in ("mask", "concat", "output",
                                                                                   "_makers")}
    fields.update(tokens=tokens, labels=token_labels(tokens), heads=tuple(heads), embedding=pick(trace.embedding),
                  x=pick(trace.x), **rope)
    if keys is not None:
        key_tokens, pick_keys = keys
        fields.update(key_tokens=key_tokens, key_labels=token_labels(key_tokens), key_x=pick_keys(trace.key_x))
    return LazyTrace(makers, **fields)
