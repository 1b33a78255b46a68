"""Device coordinates made steady before drawing.

The same view reached by two histories (zooms, resizes, a layout settling twice) can carry transforms
that differ in their last bits (1e-14 px). A 1-pixel line or a rectangle's edge that falls exactly on
a pixel boundary is then antialiased over one pixel or two depending on those bits, and the two
pictures differ visibly. Snapped to a 1/256-pixel grid first, both histories draw the same.
"""

from __future__ import annotations

from PySide6 import QtCore

GRID = 256


def steady(value: float) -> float:
    return round(value * GRID) / GRID


def steady_rect(rect: QtCore.QRectF) -> QtCore.QRectF:
    return QtCore.QRectF(QtCore.QPointF(steady(rect.left()), steady(rect.top())),
                         QtCore.QPointF(steady(rect.right()), steady(rect.bottom())))
