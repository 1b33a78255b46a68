"""A matrix's cells as one image: it reports the cell under the mouse, and in SVG paints one
rectangle per cell (an embedded image would be blurred by viewers that smooth scaled images).

The image may hold only the part of a large matrix in view, a pixel for a block of cells (see
matrix_plot): the cell under the mouse is found in the plot's coordinates, where cell (row, col) is
centred on (col, row), whatever the image holds."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .array_corners import is_corner_of
from .pixel_grid import steady_rect

SEAM_OVERLAP = 1.02  # of a cell
MAX_DEVICE_SIDE = 8192  # px: a viewport larger than this (an export of a huge figure) is drawn by Qt's own scaling


class _Coloured(NamedTuple):
    """An image coloured whole: its colours (read-only when a corner may be drawn from them), the levels
    and table they were coloured with, and the pixels made, in `format`."""
    colours: np.ndarray
    levels: tuple
    table: np.ndarray
    pixels: np.ndarray
    format: QtGui.QImage.Format


class CellImage(pg.ImageItem):
    """An ImageItem that reports the cell under the mouse."""

    def __init__(self, on_cell):
        super().__init__(axisOrder="row-major")
        self._on_cell = on_cell
        self.matrix_shape = (0, 0)  # rows and columns of the whole matrix
        self._scaled: QtGui.QImage | None = None  # the cells in sight at the device's pixels (_paint_in_device_pixels)
        self._scaled_key: tuple | None = None
        self._drawn: _Coloured | None = None  # the last image coloured whole, whose corners are drawn from it
        self.setAcceptHoverEvents(True)

    def render(self):
        """pyqtgraph colours a float image that holds NaN (a decoder's masked half: every cell after the
        diagonal) by listing each NaN's position and writing a zero alpha through the list, then converts
        the result for drawing: 7.3 ms at 1,014 tokens, where colouring the cells takes 2.7. The same
        colours (the same levels, table and rounding), made from the NaN mask in one pass
        (masked_colours); any other image as pyqtgraph makes it."""
        image, lut, levels = self.image, self.lut, self.levels
        ours = (image is not None and image.ndim == 2 and image.dtype.kind == "f" and isinstance(lut, np.ndarray)
                and lut.dtype == np.uint8 and lut.ndim == 2 and lut.shape[1] in (3, 4) and 0 < len(lut) <= 256
                and levels is not None and np.ndim(levels) == 1 and not self.autoDownsample)
        drawn = self._drawn
        if ours and drawn is not None and is_corner_of(image, drawn.colours) and drawn.levels == tuple(levels) \
                and np.array_equal(drawn.table, lut):
            # the corner of the colours last drawn (cell_colours.WidestColours): the corner of their pixels
            pixels = drawn.pixels
            self.qimage = QtGui.QImage(pixels, image.shape[1], image.shape[0], pixels.strides[0], drawn.format)
            self.qimage.data = pixels  # the pixels live as long as the image on them
        else:
            if ours:
                hidden = np.isnan(image)
                ours = bool(hidden.any())
            if not ours:
                self._drawn = None
                super().render()
                return
            self.qimage = masked_colours(image, hidden, levels, lut)
            self._drawn = _Coloured(image, tuple(levels), lut.copy(), self.qimage.data, self.qimage.format())
        self._processingBuffer = self._displayBuffer = None
        self._renderRequired = self._unrenderable = False

    def paint(self, painter, *args):
        if painter.paintEngine().type() == QtGui.QPaintEngine.Type.SVG and self.qimage is not None:
            self._paint_cells_as_rects(painter)
        elif not self._paint_in_device_pixels(painter):
            super().paint(painter, *args)

    def _paint_in_device_pixels(self, painter) -> bool:
        """The cells in sight, each device pixel coloured by the cell under its centre, then copied
        pixel for pixel. Qt's scaled drawImage steps through the source from the left edge of whatever
        region is repainted, so a repaint of one row of cells (a focus frame) drew a cell's boundary
        column one pixel off from a full repaint; a pixel's cell found from its own position is the
        same in any repaint. Only the part of the matrix on the painter's viewport is made: a zoomed
        128-token heatmap is 2,296 pixels a side, and scaling all of it again whenever a hover panned
        the view by a fraction of a pixel cost 15 ms. False where this does not apply (nothing drawn
        yet, a rotation, or a viewport larger than MAX_DEVICE_SIDE)."""
        if self.image is None:
            return False
        if self._renderRequired:
            self.render()
        transform = painter.transform()
        if self._unrenderable or self.qimage is None or transform.isRotating() or painter.device() is None:
            return False
        rows, cols = self.image.shape[:2]
        ratio = painter.device().devicePixelRatioF()
        target = steady_rect(transform.mapRect(QtCore.QRectF(0, 0, cols, rows)))
        sight = target.intersected(QtCore.QRectF(painter.viewport()))
        if sight.isEmpty():
            return True  # nothing of the matrix in sight: nothing to draw
        left, top = math.floor(sight.left() * ratio), math.floor(sight.top() * ratio)
        right, bottom = math.ceil(sight.right() * ratio), math.ceil(sight.bottom() * ratio)
        if not (0 < right - left <= MAX_DEVICE_SIDE and 0 < bottom - top <= MAX_DEVICE_SIDE):
            return False
        key = (self.qimage.cacheKey(), target.getRect(), left, top, right, bottom, ratio,
               transform.m11() < 0, transform.m22() < 0)
        if key != self._scaled_key:
            self._scaled = _cells_in_pixels(self.qimage, target, (left, top, right, bottom), ratio,
                                            transform.m11() < 0, transform.m22() < 0)
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


def masked_colours(values: np.ndarray, hidden: np.ndarray, levels, lut: np.ndarray) -> QtGui.QImage:
    """`values` (rows × cols, float) coloured through `lut` (uint8, entries × RGB or RGBA) over `levels`
    exactly as pyqtgraph colours a float image (its rescaleData: entries ÷ the levels' span, clipped to
    the table, truncated), the `hidden` cells transparent, as a 32-bit ARGB image: premultiplied (what
    _cells_in_pixels draws from, no conversion) when the table is opaque."""
    low, high = float(levels[0]), float(levels[1])
    entries = len(lut)
    index = pg.functions.rescaleData(values, entries / ((high - low) or 1), low, dtype=np.uint8, clip=(0, entries - 1))
    alpha = lut[:, 3].astype(np.uint32) if lut.shape[1] == 4 else np.full(entries, 255, dtype=np.uint32)
    table = alpha << 24 | lut[:, 0].astype(np.uint32) << 16 | lut[:, 1].astype(np.uint32) << 8 | lut[:, 2]
    pixels = table[index]
    pixels[hidden] = 0
    formats = QtGui.QImage.Format
    kind = formats.Format_ARGB32_Premultiplied if (alpha == 255).all() else formats.Format_ARGB32
    return pg.functions.ndarray_to_qimage(pixels, kind)  # on the array's memory, which it holds


def _cells_in_pixels(qimage: QtGui.QImage, target: QtCore.QRectF, pixels: tuple[int, int, int, int], ratio: float,
                     flip_x: bool, flip_y: bool) -> QtGui.QImage:
    """The device pixels `pixels` (left, top, right, bottom; device pixels, not logical) of the cells
    drawn over `target` (logical pixels), each pixel the colour of the cell under its centre
    (transparent outside the matrix). The image is on pixels of its own, which it holds."""
    colours = qimage.convertToFormat(QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    rows, cols = colours.height(), colours.width()
    cells = np.frombuffer(colours.constBits(), dtype=np.uint32).reshape(rows, colours.bytesPerLine() // 4)[:, :cols]
    left, top, right, bottom = pixels
    col = np.floor(((np.arange(left, right) + 0.5) / ratio - target.left()) * cols / target.width()).astype(np.intp)
    row = np.floor(((np.arange(top, bottom) + 0.5) / ratio - target.top()) * rows / target.height()).astype(np.intp)
    if flip_x:
        col = cols - 1 - col
    if flip_y:
        row = rows - 1 - row
    col_inside, row_inside = (col >= 0) & (col < cols), (row >= 0) & (row < rows)
    # columns picked first, then rows of that: two one-axis takes, a sixth of the time of one
    # two-axis index (1.8 against 0.3 ms for 700 × 700 pixels), and a fresh array the image keeps
    out = cells[:, np.clip(col, 0, cols - 1)][np.clip(row, 0, rows - 1)]
    out[~row_inside, :] = 0
    out[:, ~col_inside] = 0
    image = pg.functions.ndarray_to_qimage(out, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(ratio)
    return image
