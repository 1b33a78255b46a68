"""What the model view shows of a real model: every layer's and head's thumbnail under the reading
chosen (words, hidden tokens), and the exact weight under the mouse.

Pure NumPy (no Qt). With no reading on, the cells are the forward's own thumbnails, pooled as it
went (engine/pretrained/thumbnails.py): nothing is made again. A reading is a new matrix for every
head of every layer, made from the layers' weights again; up to READING_CELLS_MAX_TOKENS that takes
a fraction of a second and is kept with the trace, beyond it (a second or more per layer) the cells
show the tokens' own weights and say so, while the main views show the reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .engine import census, pretrained
from .engine.pretrained.thumbnails import pooled
from .engine.tokenizer import token_labels
from .pretrained_display import RealView, hidden_indices, hidden_key_indices, shown_trace

if TYPE_CHECKING:  # types only: the modules load once a real model is opened
    from .engine.pretrained import PretrainedTrace
    from .engine.pretrained.encoder_decoder_view import EncoderDecoderTrace

READING_CELLS_MAX_TOKENS = 1024
TOKENS_ONLY_NOTE = (f"Above {READING_CELLS_MAX_TOKENS:,} tokens the cells show every token's own weights; the "
                    f"main views show the reading.")
WEIGHTS_ONLY_NOTE = (f"Above {READING_CELLS_MAX_TOKENS:,} tokens the cells show the weights; the main views show "
                     f"norm-based attention.")


@dataclass(frozen=True)
class Cells:
    """The model view's pictures and what their rows and columns stand for."""

    thumbnails: np.ndarray    # (layers, heads, m, m) float32, each block's largest weight
    labels: list[str]         # the tokens or words of the rows and columns
    read: bool                # the reading is drawn (else each token's own weights, with a reading on)
    note: str                 # "" or why the reading is not drawn
    key_labels: list[str] | None = None  # the columns' when they are another text's (cross-attention)

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def column_labels(self) -> list[str]:
        return self.labels if self.key_labels is None else self.key_labels


def model_cells(ptrace: PretrainedTrace, view: RealView, norm: bool = False) -> Cells:
    """The cells for `view` (rollout is one matrix per layer, not per head: cells always show heads),
    with `norm` each weight times the length of what it moves (norm-based attention; never with
    Words, which the main views refuse it with too)."""
    hidden = hidden_indices(ptrace, view)
    merge = view.merge_words and not norm
    if not hidden and not merge and not norm:
        return Cells(ptrace.thumbnails, list(ptrace.labels), True, "")
    if not hidden and merge and _words_are_tokens(ptrace.words, ptrace.n):
        # each word one token: Words sums no weight and changes only the labels, so the cells are the tokens'
        # own (every layer had been read again to sum one token a word, and the model view compared all
        # its pictures with the same numbers: 1.5–3 ms of each toggle at 128 SmolLM2 tokens)
        return Cells(ptrace.thumbnails, token_labels(_word_texts(list(ptrace.tokens), ptrace.words)), True, "")
    if ptrace.n > READING_CELLS_MAX_TOKENS:
        return Cells(ptrace.thumbnails, list(ptrace.labels), False, WEIGHTS_ONLY_NOTE if norm else TOKENS_ONLY_NOTE)
    key = ("cells", tuple(hidden), merge, norm)
    if key not in ptrace.memo:
        ptrace.memo[key] = _read_cells(ptrace, hidden, merge, norm)
    return ptrace.memo[key]


def encoder_decoder_cells(ptrace: EncoderDecoderTrace, view: RealView) -> Cells:
    """The cells of an encoder–decoder's part shown under `view` (rollout is one matrix per layer: the
    cells show heads); cross-attention's columns are the source's tokens, hidden and merged by the
    source's own specials and words. The run holds every weight, so a reading is made at any length."""
    hidden = hidden_indices(ptrace, view)
    hidden_keys = hidden_key_indices(ptrace, view) if ptrace.key_tokens is not None else None
    if not hidden and not hidden_keys and not view.merge_words:
        return Cells(ptrace.thumbnails, list(ptrace.labels), True, "", ptrace.key_labels)
    key = ("cells", tuple(hidden), tuple(hidden_keys or ()), view.merge_words)
    if key not in ptrace.memo:
        ptrace.memo[key] = _read_cells(ptrace, hidden, view.merge_words, False, hidden_keys)
    return ptrace.memo[key]


def _read_cells(ptrace: PretrainedTrace | EncoderDecoderTrace, hidden: list[int], merge: bool, norm: bool,
                hidden_keys: list[int] | None = None) -> Cells:
    """Every head's weights under the reading, pooled: the same arithmetic as hide_tokens and
    merge_words, on a layer's heads at once, in the weights' own float32. Norm-based attention is a
    length, not a share of a row: hidden tokens' rows and columns are dropped and the rest kept as is
    (as the main views do). `hidden_keys` (cross-attention): the columns hidden, the source's tokens,
    whose words are merged by the source's own; None: the columns are the rows' tokens."""
    tokens, words = list(ptrace.tokens), ptrace.words
    cross = hidden_keys is not None
    kept = np.setdiff1d(np.arange(ptrace.n), hidden)
    if hidden:
        words = pretrained.words_after_hiding(words, kept)
        tokens = [tokens[i] for i in kept]
    if cross:
        key_tokens, key_words = list(ptrace.key_tokens), ptrace.key_words
        kept_keys = np.setdiff1d(np.arange(len(key_tokens)), hidden_keys)
        if hidden_keys:
            key_words = pretrained.words_after_hiding(key_words, kept_keys)
            key_tokens = [key_tokens[i] for i in kept_keys]
    else:  # the columns are the rows' tokens
        key_tokens, key_words, kept_keys = tokens, words, None
    runs = pretrained.word_runs(words, len(tokens)) if merge else None
    key_runs = pretrained.word_runs(key_words, len(key_tokens)) if merge else None
    hiding = bool(hidden) or bool(hidden_keys)
    layers = []
    for layer in range(ptrace.n_layers):
        weights = ptrace.layer_weights(layer, keep=False)
        if norm:
            weights = weights * moved_lengths(ptrace, layer)[:, None, :]
        if hiding:
            weights = weights[(slice(None), *pretrained.kept_block(kept, kept_keys))]
        if hiding and not norm:
            remaining = weights.sum(axis=-1, keepdims=True)
            weights = np.divide(weights, remaining, out=np.zeros_like(weights), where=remaining > 0)
        if runs is not None:
            (starts, sizes), (key_starts, key_sizes) = runs, key_runs
            weights = np.stack([pretrained.sum_runs(pretrained.sum_runs(head, key_starts, key_sizes, axis=1), starts,
                                                    sizes, axis=0) for head in weights])
            weights /= sizes.astype(np.float32)[:, None]
        layers.append(pooled(weights))
    if runs is not None:
        tokens, key_tokens = _word_texts(tokens, words), _word_texts(key_tokens, key_words)
    return Cells(np.stack(layers), token_labels(tokens), True, "", token_labels(key_tokens) if cross else None)


def _words_are_tokens(words: tuple[tuple[int, ...], ...], n: int) -> bool:
    """Whether word i is token i alone, for every one of the n tokens."""
    return len(words) == n and all(word == (i,) for i, word in enumerate(words))


def _word_texts(tokens: list[str], words: tuple[tuple[int, ...], ...]) -> list[str]:
    return ["".join(tokens[i].removeprefix(pretrained.CONTINUATION) for i in word) for word in words]


def cell_weight(ptrace: PretrainedTrace, view: RealView, cells: Cells, layer: int, head: int, row: int,
                col: int, norm: bool = False) -> float:
    """The weight at (row, col) of one cell (with `norm`, its norm-based attention when the cells draw
    it), as the main views would show that layer and head: under the reading when the cells draw it,
    else the tokens' own (made one row at a time, so a long text's hover costs a row, not a head)."""
    if cells.read and (view.merge_words or hidden_indices(ptrace, view)):
        head_trace = shown_trace(ptrace, layer, view.with_changes(rollout=False))[0].heads[head]
        return float((head_trace.norm if norm else head_trace.weights)[row, col])
    weight = float(ptrace.weight_row(layer, head, row)[col])
    if norm and cells.read:
        return weight * float(moved_lengths(ptrace, layer)[head, col])
    return weight


def moved_lengths(ptrace: PretrainedTrace, layer: int) -> np.ndarray:
    """‖f_h(x_j)‖ for every head and token of `layer` (heads, n), kept with the trace: a hover reads one."""
    key = ("moved lengths", layer)
    if key not in ptrace.memo:
        ptrace.memo[key] = census.pretrained_moved_lengths(ptrace, layer)
    return ptrace.memo[key]
