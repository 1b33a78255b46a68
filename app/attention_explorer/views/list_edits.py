"""The edits that turn one list into another, found in linear time for the changes users make.

The chips keep a widget for each word that stays. Giving every chip after a moved word its
neighbour's text re-measures and re-places all of them (the specials of 512 tokens hidden: about
20 ms, half of the whole toggle). difflib finds the fewest edits, but it is quadratic on a text of
repeated words (12,000 tokens of 25 distinct words: 0.9 s). The changes a user makes are simpler:
a few items in or out at the front (the specials hidden or shown), then one stretch changed (a word
typed, a text cut or extended, a token written). Those are found exactly here; anything else comes
out as one replaced stretch, which is still correct, only not the fewest edits.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

Opcode = tuple[str, int, int, int, int]  # as difflib's: (tag, i1, i2, j1, j2), old[i1:i2] becomes new[j1:j2]


def edits(old: Sequence, new: Sequence, reach: int = 2) -> list[Opcode]:
    """Opcodes that make `new` from `old`: up to `reach` items removed from or added at the front,
    the longest common run after that, the longest common end, and one stretch between them."""
    skip_old, skip_new, start = _front_alignment(old, new, reach)
    i1, j1 = skip_old + start, skip_new + start
    end = _common_end(old, new, min(len(old) - i1, len(new) - j1))
    i2, j2 = len(old) - end, len(new) - end
    opcodes: list[Opcode] = []
    if skip_old:
        opcodes.append(("delete", 0, skip_old, 0, 0))
    if skip_new:
        opcodes.append(("insert", 0, 0, 0, skip_new))
    if start:
        opcodes.append(("equal", skip_old, i1, skip_new, j1))
    if i1 < i2 or j1 < j2:
        tag = "replace" if i1 < i2 and j1 < j2 else "delete" if i1 < i2 else "insert"
        opcodes.append((tag, i1, i2, j1, j2))
    if end:
        opcodes.append(("equal", i2, len(old), j2, len(new)))
    return opcodes


def prefix_kept(old: Sequence, new: Sequence) -> int | None:
    """How many items from the start of `old` `new` keeps when one begins with the other (a text cut
    at its end or written on, as a scrubber steps): the shorter's length; else None. Compared in one
    slice each: a Python loop over a thousand items would cost more than what it saves."""
    shorter = min(len(old), len(new))
    return shorter if old[:shorter] == new[:shorter] else None


def _front_alignment(old: Sequence, new: Sequence, reach: int) -> tuple[int, int, int]:
    """How many items to drop from the front of `old` (or add to the front of `new`) so that the
    most items after them agree, none where nothing gains, and how many agree then."""
    candidates = [(0, 0)] + [(k, 0) for k in range(1, min(reach, len(old)) + 1)] \
        + [(0, k) for k in range(1, min(reach, len(new)) + 1)]
    aligned = [(*skips, _common_start(old, new, *skips)) for skips in candidates]
    return max(aligned, key=lambda alignment: alignment[2])  # max keeps the first of equals


def _common_start(old: Sequence, new: Sequence, skip_old: int, skip_new: int) -> int:
    count = 0
    for a, b in zip(islice(old, skip_old, None), islice(new, skip_new, None), strict=False):  # to the shorter
        if a != b:
            break
        count += 1
    return count


def _common_end(old: Sequence, new: Sequence, limit: int) -> int:
    count = 0
    while count < limit and old[len(old) - 1 - count] == new[len(new) - 1 - count]:
        count += 1
    return count
