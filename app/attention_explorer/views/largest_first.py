"""The few largest of each row or column, largest first and the first of equal ones first, as a stable
sort of the negated values would order them: by argmax passes, which for a few cost a fraction of
sorting every line (the arcs' strongest words per row, a step table's longest texts per column)."""

from __future__ import annotations

import numpy as np


def take_largest(values: np.ndarray, count: int, axis: int) -> np.ndarray:
    """(count or fewer, lines): for each line along `axis` (0: columns, 1: rows) of 2-D float `values`,
    the indices of its `count` largest, largest first (a NaN counts as largest, as argmax has it).
    `values` is written over, each pick set to −∞: hand it a copy of your own, of values above −∞
    (attention weights, text lengths); among −∞s the picks would not be told from the rest."""
    lines = np.arange(values.shape[1 - axis])
    picked = []
    for _ in range(min(count, values.shape[axis])):
        best = values.argmax(axis=axis)  # the first of equal maxima, as a stable sort puts first
        picked.append(best)
        values[(lines, best) if axis else (best, lines)] = -np.inf
    return np.array(picked, dtype=np.intp).reshape(len(picked), len(lines))
