"""The one mapping between Qt's text positions and Python string indices.

Qt counts UTF-16 code units: an emoji or any character beyond U+FFFF takes two positions. Python
counts code points: the same character is one index. Every place that passes a position between a
QTextCursor and a Python string (the tokenizer's word offsets, the cursor's place while typing) goes
through `TextPositions`, built once per text: lookups are a binary search, so flagging thousands of
words in a long sentence stays linear.
"""

from __future__ import annotations

from bisect import bisect_left


class TextPositions:
    def __init__(self, text: str):
        self.text = text
        # the Python index of every character that Qt stores as two units (a surrogate pair)
        self._wide = [i for i, ch in enumerate(text) if ord(ch) > 0xFFFF] if not text.isascii() else []
        self._wide_in_qt = [index + count for count, index in enumerate(self._wide)]  # where each starts in Qt

    def to_qt(self, index: int) -> int:
        """The Qt position of Python index `index` (0 … len(text))."""
        return index + bisect_left(self._wide, index)

    def to_python(self, position: int) -> int:
        """The Python index of Qt position `position`; the middle of a surrogate pair maps to its
        character's start."""
        before = bisect_left(self._wide_in_qt, position)  # wide characters starting before `position`
        if before and self._wide_in_qt[before - 1] + 1 == position:
            return self._wide[before - 1]
        return position - before
