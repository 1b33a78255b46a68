"""A matrix's cells as one image: it reports the cell under the mouse, and in SVG paints one
rectangle per cell (an embedded image would be blurred by viewers that smooth scaled images).

The image may hold only the part of a large matrix in view, a pixel for a block of cells (see
matrix_plot): the cell under the mouse is found in the plot's coordinates, where cell (row, col) is
centred on (col, row), whatever the image holds."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

SEAM_OVERLAP = 1.02  # of a cell


class CellImage(pg.ImageItem):
    """An ImageItem that reports the cell under the mouse."""

    def __init__(self, on_cell):
        super().__init__(axisOrder="row-major")
        self._on_cell = on_cell
        self.matrix_shape = (0, 0)  # rows and columns of the whole matrix
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
        rows, cols = image.height(), image.width()
        for row in range(rows):
            for col in range(cols):
                color = image.pixelColor(col, row)
                if color.alpha() == 0:
                    continue  # masked: left empty, and hatched by MaskHatchItem
                # each cell reaches a little under its right and lower neighbours (no hairline seams),
                # not past the matrix nor into a masked cell (a 47-pixel cell's overlap drew a pixel
                # of colour over the axis, and a line along the hatching)
                width = SEAM_OVERLAP if col < cols - 1 and image.pixelColor(col + 1, row).alpha() else 1.0
                height = SEAM_OVERLAP if row < rows - 1 and image.pixelColor(col, row + 1).alpha() else 1.0
                painter.fillRect(QtCore.QRectF(col, row, width, height), color)

    def hoverEvent(self, ev):  # noqa: N802 - pyqtgraph API
        if ev.isExit() or self.image is None:
            self._on_cell(None, None)
            return
        pos = self.mapToParent(ev.pos())
        row, col = int(math.floor(pos.y() + 0.5)), int(math.floor(pos.x() + 0.5))
        rows, cols = self.matrix_shape
        inside = 0 <= row < rows and 0 <= col < cols
        self._on_cell((row, col) if inside else None, ev.screenPos() if inside else None)
