"""A matrix's cells as one image: it reports the cell under the mouse, and in SVG paints one
rectangle per cell (an embedded image would be blurred by viewers that smooth scaled images)."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore, QtGui


class CellImage(pg.ImageItem):
    """An ImageItem that reports the cell under the mouse."""

    def __init__(self, on_cell):
        super().__init__(axisOrder="row-major")
        self._on_cell = on_cell
        self.setAcceptHoverEvents(True)

    def paint(self, painter, *args):
        if painter.paintEngine().type() == QtGui.QPaintEngine.Type.SVG and self.qimage is not None:
            self._paint_cells_as_rects(painter)
        else:
            super().paint(painter, *args)

    def _paint_cells_as_rects(self, painter) -> None:
        """In SVG, one rectangle per cell: an embedded n × n image would be blurred by viewers
        that smooth scaled images. Colours come from the image pyqtgraph already mapped."""
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)  # no seams between cells
        image = self.qimage
        for row in range(image.height()):
            for col in range(image.width()):
                color = image.pixelColor(col, row)
                if color.alpha() == 0:
                    continue  # masked: left empty, and hatched by MaskHatchItem
                painter.fillRect(QtCore.QRectF(col, row, 1.02, 1.02), color)  # overlap: no hairline seams

    def hoverEvent(self, ev):  # noqa: N802 - pyqtgraph API
        if ev.isExit() or self.image is None:
            self._on_cell(None, None)
            return
        pos = ev.pos()
        row, col = int(math.floor(pos.y())), int(math.floor(pos.x()))
        rows, cols = self.image.shape[:2]
        inside = 0 <= row < rows and 0 <= col < cols
        self._on_cell((row, col) if inside else None, ev.screenPos() if inside else None)
