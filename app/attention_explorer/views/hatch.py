"""Hatching over masked cells, so a forbidden pair reads as "masked", never as a weight of 0.

Drawn in device pixels (not with a pattern brush or cosmetic pens) so that it looks the same on
screen, in PNG and in SVG, whose generator knows neither pattern transforms nor cosmetic pens.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .pixel_grid import steady_rect

SPACING_PX = 7.0


class MaskHatchItem(pg.GraphicsObject):
    """Diagonal lines over the cells where `mask` is True; cells are 1 × 1, centred on indices."""

    def __init__(self):
        super().__init__()
        self._rects: list[QtCore.QRectF] = []
        self._bounds = QtCore.QRectF()
        self.color = QtGui.QColor(128, 128, 128)

    def set_mask(self, mask: np.ndarray | None) -> None:
        """Merge each row's runs of masked cells into rectangles (a causal mask: one per row)."""
        self.prepareGeometryChange()
        self._rects = []
        if mask is not None:
            for row, cells in enumerate(mask):
                col = 0
                while col < len(cells):
                    if cells[col]:
                        start = col
                        while col < len(cells) and cells[col]:
                            col += 1
                        self._rects.append(QtCore.QRectF(start - 0.5, row - 0.5, col - start, 1.0))
                    else:
                        col += 1
        self._bounds = QtCore.QRectF()
        for rect in self._rects:
            self._bounds = self._bounds.united(rect)
        self.update()

    def masked_rects(self) -> list[QtCore.QRectF]:
        return list(self._rects)

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 - Qt API
        return self._bounds

    def paint(self, painter, *_):
        if not self._rects:
            return
        to_device = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QtGui.QPen(self.color, 1.0))
        lines = []
        for rect in self._rects:
            lines.extend(_diagonals(steady_rect(to_device.mapRect(rect))))  # see pixel_grid
        painter.drawLines(lines)
        painter.restore()


def _diagonals(rect: QtCore.QRectF) -> list[QtCore.QLineF]:
    """Lines x + y = c across `rect` ("/" direction), SPACING_PX apart, clipped to it."""
    left, top, right, bottom = rect.left(), rect.top(), rect.right(), rect.bottom()
    lines = []
    c = left + top + SPACING_PX / 2
    while c < right + bottom:
        x1, y1 = max(left, c - bottom), min(bottom, c - left)
        x2, y2 = min(right, c - top), max(top, c - right)
        lines.append(QtCore.QLineF(x1, y1, x2, y2))
        c += SPACING_PX
    return lines
