"""Many straight lines handed to QPainter as one block of numbers, not as one Python QLineF each.

PySide6 (6.4.3 and later) has QPainter.drawLines(first line, count), which reads `count` QLineF
laid out one after another in memory. A QLineF is four doubles (x1, y1, x2, y2), so an (m, 4)
float64 C-ordered NumPy array already is that layout: wrapping its first row as a QLineF draws
every line with no Python object per line. A QLineF made in Python costs about 4 µs (5,000 lines:
21 ms, against 1 ms for the array), which was a seventh of a layer change at 512 MiniLM tokens.
"""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6 import QtCore, QtGui


def line_array(x0: float, x1: float, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """(m, 4) float64 rows (x0, y0[i], x1, y1[i]): lines from one x to another."""
    lines = np.empty((len(y0), 4), dtype=np.float64)
    lines[:, 0] = x0
    lines[:, 1] = y0
    lines[:, 2] = x1
    lines[:, 3] = y1
    return lines


def draw_line_array(painter: QtGui.QPainter, lines: np.ndarray) -> None:
    """Draw every row (x1, y1, x2, y2) of `lines` with the painter's pen."""
    if not len(lines):
        return
    first, _memory = first_of(np.ascontiguousarray(lines, dtype=np.float64), QtCore.QLineF)
    painter.drawLines(first, len(lines))


def first_of(array: np.ndarray, kind: type) -> tuple[object, np.ndarray]:
    """The first row of C-ordered float64 `array` as a `kind` (QLineF, QRectF) standing on the array's
    memory, and the array it stands on, to keep while Qt reads it.

    Shiboken keeps one wrapper per address: where a wrapper of another type is still registered (its
    C++ object freed, and its memory since handed to NumPy: a QMetaObject, once, in a test run) it
    hands that one back. drawLines then raised TypeError inside a paint, and PySide crashed printing
    it. The numbers are then copied elsewhere in memory, the arrays before held until a copy lands
    where no other wrapper is, so that the allocator cannot hand the same address back."""
    held = []
    first = shiboken6.wrapInstance(array.ctypes.data, kind)
    while type(first) is not kind:
        held.append((array, first))
        array = array.copy()
        first = shiboken6.wrapInstance(array.ctypes.data, kind)
    return first, array
