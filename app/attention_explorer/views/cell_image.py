"""A matrix's cells as one image: it reports the cell under the mouse, and in SVG paints one
rectangle per cell (an embedded image would be blurred by viewers that smooth scaled images).

The image may hold only the part of a large matrix in view, a pixel for a block of cells (see
matrix_plot): the cell under the mouse is found in the plot's coordinates, where cell (row, col) is
centred on (col, row), whatever the image holds."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .pixel_grid import steady_rect

SEAM_OVERLAP = 1.02  # of a cell
MAX_DEVICE_SIDE = 8192  # px: cells zoomed larger than this are drawn by Qt's own scaling


class CellImage(pg.ImageItem):
    """An ImageItem that reports the cell under the mouse."""

    def __init__(self, on_cell):
        super().__init__(axisOrder="row-major")
        self._on_cell = on_cell
        self.matrix_shape = (0, 0)  # rows and columns of the whole matrix
        self._scaled: QtGui.QImage | None = None  # the cells at the device's pixels (_paint_in_device_pixels)
        self._scaled_key: tuple | None = None
        self.setAcceptHoverEvents(True)

    def paint(self, painter, *args):
        if painter.paintEngine().type() == QtGui.QPaintEngine.Type.SVG and self.qimage is not None:
            self._paint_cells_as_rects(painter)
        elif not self._paint_in_device_pixels(painter):
            super().paint(painter, *args)

    def _paint_in_device_pixels(self, painter) -> bool:
        """The cells scaled once to the device pixels they cover, then copied pixel for pixel. Qt's
        scaled drawImage steps through the source from the left edge of whatever region is repainted,
        so a repaint of one row of cells (a focus frame) drew a cell's boundary column one pixel off
        from a full repaint. False where this does not apply (nothing drawn yet, a rotation, or a
        zoom that makes the cells larger than MAX_DEVICE_SIDE)."""
        if self.image is None:
            return False
        if self._renderRequired:
            self.render()
        if self._unrenderable or self.qimage is None or painter.transform().isRotating():
            return False
        rows, cols = self.image.shape[:2]
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        target = steady_rect(painter.transform().mapRect(QtCore.QRectF(0, 0, cols, rows)))
        left, top = round(target.left() * ratio), round(target.top() * ratio)
        width, height = round(target.right() * ratio) - left, round(target.bottom() * ratio) - top
        if not (0 < width <= MAX_DEVICE_SIDE and 0 < height <= MAX_DEVICE_SIDE):
            return False
        key = (self.qimage.cacheKey(), width, height, ratio)
        if key != self._scaled_key:
            # Qt scales an indexed image (pyqtgraph's, with a colour table) wider than asked: 8 cells
            # to 586 pixels came out 74.5 pixels each, the last cut short. Converted first, they are even.
            colours = self.qimage.convertToFormat(QtGui.QImage.Format.Format_ARGB32_Premultiplied)
            self._scaled = colours.scaled(width, height, QtCore.Qt.AspectRatioMode.IgnoreAspectRatio,
                                          QtCore.Qt.TransformationMode.FastTransformation)
            self._scaled.setDevicePixelRatio(ratio)
            self._scaled_key = key
        painter.save()
        painter.resetTransform()
        if self.paintMode is not None:
            painter.setCompositionMode(self.paintMode)
        painter.drawImage(QtCore.QPointF(left / ratio, top / ratio), self._scaled)
        painter.restore()
        return True

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
