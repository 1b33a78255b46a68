"""The colour scale beside a matrix: the colour map as a bar, an axis of the values it spans, and in
figures a label saying what those values are ("attention weight").

pyqtgraph's ColorBarItem is a whole PlotItem (a view box, four axes, a context menu's widgets) for
a bar that is never panned or dragged here; it cost about 8 ms of every heatmap's construction, the
window's start included. This one is a gradient and one axis in a two-cell layout, and it keeps
ColorBarItem's contract with the image: the same lookup table and levels are set on both.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .pixel_grid import steady_rect

LABEL_PX = 20  # the room a label takes beside the axis's numbers

class _Gradient(pg.GraphicsWidget):
    """The colour map from the low level (bottom) to the high one (top), framed like an axis."""

    def __init__(self, width: float):
        super().__init__()
        self.setFixedWidth(width)
        self._image = QtGui.QImage()
        self.pen = QtGui.QPen()

    def set_table(self, lut: np.ndarray) -> None:
        """`lut`: 256 RGBA rows, low to high."""
        rows = np.ascontiguousarray(lut[::-1, None, :], dtype=np.uint8)  # top row = the high end
        self._image = QtGui.QImage(rows.data, 1, len(rows), 4, QtGui.QImage.Format.Format_RGBA8888).copy()
        self.update()

    def paint(self, painter: QtGui.QPainter, *_):
        rect = steady_rect(painter.transform().mapRect(self.rect()))  # in device pixels: see pixel_grid
        painter.save()
        painter.resetTransform()
        painter.drawImage(rect, self._image)
        painter.setPen(self.pen)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        painter.drawRect(rect)
        painter.restore()


class _FittingAxis(pg.AxisItem):
    """The bar's numbers, never closer than a line and a half of text. pyqtgraph always writes its
    coarsest level of ticks, and a bar squeezed to 30 pixels (a heatmap beside open step tables on a
    laptop) wrote 1.0, 0.8, 0.6, 0.4 on top of one another."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 - pyqtgraph's API
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or size <= 0:
            return levels
        font = self.style["tickFont"] or QtGui.QFont()
        room = max(1, int(size / (QtGui.QFontMetricsF(font).height() * 1.5)))  # intervals that fit
        spacing, offset = levels[0]
        span = abs(maxVal - minVal)
        while span / spacing > room:
            spacing = _coarser(spacing)
        return [(spacing, offset)] if spacing != levels[0][0] else levels


def _coarser(spacing: float) -> float:
    """The next round spacing up: 1 → 2 → 5 → 10 (times a power of ten)."""
    power = 10.0 ** math.floor(math.log10(spacing))
    return power * {1: 2, 2: 5}.get(round(spacing / power), 10)


class ColourBar(pg.GraphicsWidget):
    """A vertical colour bar that colours `image` (a pyqtgraph ImageItem) with its colour map and levels.
    insert_into(plot) puts it right of the plot's matrix, where ColorBarItem goes."""

    def __init__(self, image: pg.ImageItem, colormap: pg.ColorMap, *, width: float = 16):
        super().__init__()
        self._image = image
        self._levels = (0.0, 1.0)
        self.bar = _Gradient(width)
        self.axis = _FittingAxis("right")
        self.axis.enableAutoSIPrefix(False)  # values under 1 were written as 0 … 900 "(x0.001)"
        self.axis.setRange(*self._levels)
        self.bar.pen = QtGui.QPen(self.axis.pen())
        self.bar.pen.setCosmetic(True)
        layout = QtWidgets.QGraphicsGridLayout()
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addItem(self.bar, 0, 0)
        layout.addItem(self.axis, 0, 1)
        self.setLayout(layout)
        self.setColorMap(colormap)
        self.setLevels(self._levels)

    def set_label(self, text: str) -> None:
        """Name the values beside the numbers (""): the axis grows by the label's room, once."""
        had = bool(self.axis.labelText) and self.axis.label.isVisible()
        self.axis.setLabel(text)
        self.axis.showLabel(bool(text))
        if bool(text) != had and self.axis.fixedWidth is not None:
            self.axis.setWidth(self.axis.fixedWidth + (LABEL_PX if text else -LABEL_PX))

    def label(self) -> str:
        return self.axis.labelText if self.axis.label.isVisible() else ""

    def label_length(self) -> float:
        """How long the label runs along the bar, in pixels (0 without one): a shorter bar cuts it."""
        return self.axis.label.boundingRect().width() if self.label() else 0.0

    def insert_into(self, plot: pg.PlotItem) -> None:
        plot.layout.addItem(self, 2, 5)  # the view box's row, after the right-hand axis
        plot.layout.setColumnFixedWidth(4, 5)  # a gap between the matrix and the bar

    def levels(self) -> tuple[float, float]:
        return self._levels

    def setLevels(self, levels: tuple[float, float]) -> None:  # noqa: N802 - the name ColorBarItem has
        low, high = (float(x) for x in levels)
        self._levels = (low, high)
        self.axis.setRange(low, high)
        self._image.setLevels(self._levels)

    def setColorMap(self, colormap: pg.ColorMap) -> None:  # noqa: N802 - the name ColorBarItem has
        self.bar.set_table(colormap.getLookupTable(nPts=256, alpha=True))
        self._image.setColorMap(colormap)
