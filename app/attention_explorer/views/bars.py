"""pyqtgraph's bar item, drawn from its array of rectangles without trusting Shiboken's wrapper at
that array's address (views/line_array.first_of says why: a stale wrapper of another type crashed
PySide inside a paint)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .line_array import first_of


class BarGraphItem(pg.BarGraphItem):
    """pg.BarGraphItem, its one-colour bars drawn through first_of. That path reads pyqtgraph's own
    attributes (_singleColor, _rectarray, _sharedPen, _sharedBrush: pyqtgraph ≥ 0.13.7); without
    them it draws as pyqtgraph does."""

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        rects = getattr(self, "_rectarray", None)
        if not getattr(self, "_singleColor", False) or rects is None or not hasattr(self, "_sharedPen"):
            super().paint(painter, *args)
            return
        painter.setPen(self._sharedPen)
        painter.setBrush(self._sharedBrush)
        array = rects.ndarray()
        if len(array):
            first, _memory = first_of(array, QtCore.QRectF)
            painter.drawRects(first, len(array))
