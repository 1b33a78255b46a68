"""Ways of reading attention weights beyond one head: rollout, words instead of pieces, hiding sinks.

Pure functions of a weights matrix (rows: tokens looking, columns: tokens looked at, rows sum to 1),
so they work the same on any layer, head or average, and on the toy models too. They keep the
matrix's own float type: a real model's float32 weights are not copied into float64 ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MERGED_ROWS = 256  # words whose rows are merged in one go

def attention_rollout(weights: Sequence[np.ndarray]) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020) after each layer: (layers, n, n), from each layer's
    weights (heads, n, n) in turn.

    Per layer: average the heads, add the identity for the residual connection and renormalise the
    rows, Â = (mean_h A + I) / 2 row-normalised; then multiply through the layers,
    R_l = Â_l · R_(l−1). Row i of R_l says how much of token i's representation after layer l comes
    from each input token.
    """
    result = []
    rolled = None
    for layer_weights in weights:
        mixed = rollout_mix(layer_weights)
        rolled = mixed if rolled is None else mixed @ rolled
        result.append(rolled)
    return np.stack(result)


def rollout_mix(layer_weights: np.ndarray) -> np.ndarray:
    """Â of one layer for the rollout: its heads' weights (heads, n, n) averaged, the identity added
    for the residual connection, each row normalised to sum to 1."""
    mixed = layer_weights.mean(axis=0, dtype=np.float64) + np.eye(layer_weights.shape[-1])
    mixed /= mixed.sum(axis=1, keepdims=True)
    return mixed


def merge_words(weights: np.ndarray, words: Sequence[Sequence[int]],
                key_words: Sequence[Sequence[int]] | None = None) -> np.ndarray:
    """Word-level weights from piece-level ones: (words, key words).

    The rule: a word looks at another with the SUM of the weights its pieces give to the other
    word's pieces (attention to a word is everything that lands on it), averaged over its own
    pieces (each piece looks once). Rows still sum to 1. `key_words` are the columns' words when
    they are another text's (cross-attention: the rows are the target, the columns the source);
    None: the rows' own.
    """
    weights = _floats(weights)
    key_words = words if key_words is None else key_words
    runs, key_runs = word_runs(words, weights.shape[0]), word_runs(key_words, weights.shape[1])
    if runs is not None and key_runs is not None:  # the usual case, pieces in order: sums over slices, 512 tokens
        starts, sizes = runs                           # in a millisecond
        key_starts, key_sizes = key_runs
        merged = np.empty((len(starts), len(key_starts)), dtype=weights.dtype)
        for first in range(0, len(starts), MERGED_ROWS):  # a few hundred words' rows at a time: no n × words copy
            chunk = slice(first, first + MERGED_ROWS)
            rows = slice(starts[first], starts[first] + int(sizes[chunk].sum()))
            looked_at = sum_runs(weights[rows], key_starts, key_sizes, axis=1)
            merged[chunk] = sum_runs(looked_at, starts[chunk] - starts[first], sizes[chunk], axis=0)
        merged /= sizes.astype(merged.dtype)[:, None]
        return merged
    looked_at = np.stack([weights[:, list(word)].sum(axis=1) for word in key_words], axis=1)   # (n, key words)
    return np.stack([looked_at[list(word)].mean(axis=0) for word in words], axis=0)           # (words, key words)


def sum_runs(values: np.ndarray, starts: np.ndarray, sizes: np.ndarray, axis: int) -> np.ndarray:
    """Sums over runs of neighbouring rows (axis 0) or columns (axis 1) starting at `starts`, each
    `sizes` long, added left to right: each run's first row (column) taken, then its second added where
    it has one, and so on. Most words are one piece, so this is mostly a copy: np.add.reduceat walked
    the matrix column by column along rows (2 s at 8,192 tokens, here 0.1 s) and took three times as
    long along columns (512 tokens: 1.8 against 0.5 ms)."""
    sizes = np.asarray(sizes, dtype=np.intp)
    summed = np.take(values, starts, axis=axis)
    for extra in range(1, int(sizes.max(initial=1))):
        longer = np.flatnonzero(sizes > extra)
        index = (slice(None), longer) if axis else longer
        summed[index] += np.take(values, starts[longer] + extra, axis=axis)
    return summed


def _floats(weights) -> np.ndarray:
    """The weights as an array of their own float type (float64 for anything else, e.g. a list)."""
    weights = np.asarray(weights)
    return weights if np.issubdtype(weights.dtype, np.floating) else weights.astype(np.float64)


def word_runs(words: Sequence[Sequence[int]], n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Where each word starts and how many pieces it has (as floats, to divide by), when the words
    are runs of neighbouring tokens covering 0 … n−1 in order (as the tokenizer and
    words_after_hiding give them), so sums over a word are np.add.reduceat slices; else None."""
    if any(len(word) == 0 for word in words) or [i for word in words for i in word] != list(range(n)):
        return None
    return (np.array([word[0] for word in words], dtype=np.intp),
            np.array([len(word) for word in words], dtype=np.float64))


@dataclass(frozen=True)
class HiddenTokens:
    """Weights with some tokens taken out and every remaining row renormalised to sum to 1."""

    weights: np.ndarray   # (kept, kept)
    kept: np.ndarray      # indices of the tokens still shown, in order
    removed: np.ndarray   # per kept row: the share of its weight that went to hidden tokens (0–1)


def hide_tokens(weights: np.ndarray, hidden: Sequence[int], hidden_keys: Sequence[int] | None = None
                ) -> HiddenTokens:
    """Drop the rows and columns of `hidden` (e.g. [CLS], [SEP] or a first-token sink) and renormalise.
    `hidden_keys` are the columns to drop when they are another text's tokens (cross-attention);
    None: the columns of `hidden`.

    A row whose whole weight went to hidden tokens has nothing left to share: it stays all zeros.
    """
    weights = _floats(weights)
    keep = _kept(weights.shape[0], hidden)
    keep_keys = None if hidden_keys is None else _kept(weights.shape[1], hidden_keys)
    shown = weights[kept_block(keep, keep_keys)]
    remaining = shown.sum(axis=1, keepdims=True)
    renormalised = np.divide(shown, remaining, out=np.zeros_like(shown), where=remaining > 0)
    totals = weights.sum(axis=1)[keep]
    removed = np.divide(totals - remaining[:, 0], totals, out=np.zeros_like(totals), where=totals > 0)
    return HiddenTokens(renormalised, keep, removed)


def _kept(n: int, hidden: Sequence[int]) -> np.ndarray:
    return np.setdiff1d(np.arange(n), np.asarray(hidden, dtype=int))


def kept_block(keep: np.ndarray, keep_keys: np.ndarray | None = None) -> tuple:
    """The index that takes rows `keep` and columns `keep_keys` (both sorted; None: columns `keep`, of a
    square matrix): slices, so no copy, when each is one run (specials at the ends, a first-token
    sink), else np.ix_."""
    keep_keys = keep if keep_keys is None else keep_keys
    rows, cols = _run(keep), _run(keep_keys)
    if isinstance(rows, slice) and isinstance(cols, slice):
        return rows, cols
    return np.ix_(keep, keep_keys)


def _run(keep: np.ndarray) -> slice | None:
    """`keep` as a slice when it is one run of neighbouring indices, else None."""
    if len(keep) and keep[-1] - keep[0] == len(keep) - 1:
        return slice(int(keep[0]), int(keep[-1]) + 1)
    return None


def words_after_hiding(words: Sequence[Sequence[int]], kept: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The words in the numbering of `hide_tokens(...).weights`, to merge after hiding: each word's
    kept pieces by their new index; a word with no piece left (a hidden special) is dropped."""
    new_index = {old: new for new, old in enumerate(kept)}
    remapped = (tuple(new_index[i] for i in word if i in new_index) for word in words)
    return tuple(word for word in remapped if word)
