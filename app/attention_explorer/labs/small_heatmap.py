"""The small heatmap every lesson draws its matrices with: labels on both axes, a colour bar,
values in the cells when they fit, and masked cells hatched.

A masked cell is not a zero: its score is −∞ and its weight is 0 only because it was forbidden, so
it is painted grey and hatched, never in the colour of 0, and can carry a word ("−∞", "0") saying
what the engine holds there. Unlike the main window's heatmap this one knows nothing about the
controller: a lesson hands it a matrix and labels, so the same widget shows weights, scores,
differences, rectangular cross-attention and positional encodings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..views import theme
from ..views.message_label import message_label
from ..views.plot_style import make_matrix

CELL_PADDING_PX = 4  # room around a written value inside its cell


class _CellOverlay(pg.GraphicsObject):
    """Paints, over the image, the masked cells (hatched), the values and outlined cells.

    It draws in device pixels (the painter's transform undone), so text and hatching keep their
    size whatever the zoom, and decides in paint() whether the values fit their cells.
    """

    def __init__(self):
        super().__init__()
        self.shape = (0, 0)
        self.texts: np.ndarray = np.empty((0, 0), dtype=object)
        self.text_colors: list[list[QtGui.QColor]] = []
        self.masked = np.zeros((0, 0), dtype=bool)
        self.outlined: list[tuple[int, int]] = []
        self.focus: tuple[int | None, int | None] = (None, None)  # the app's focused word: a row or a column
        self.font = QtGui.QFont()
        self.font.setPointSizeF(max(self.font.pointSizeF() * 0.85, 6.0))

    def set_cells(self, texts: np.ndarray, colors, masked: np.ndarray) -> None:
        self.prepareGeometryChange()
        self.shape = texts.shape
        self.texts, self.text_colors, self.masked = texts, colors, masked
        self.update()

    def set_outlined(self, cells: Sequence[tuple[int, int]]) -> None:
        self.outlined = list(cells)
        self.update()

    def widest_text_px(self) -> tuple[int, int]:
        metrics = QtGui.QFontMetrics(self.font)
        widest = max((metrics.horizontalAdvance(t) for t in self.texts.flat if t), default=0)
        return widest + CELL_PADDING_PX, metrics.height()

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 - Qt API
        rows, cols = self.shape
        return QtCore.QRectF(-0.5, -0.5, cols, rows)

    def paint(self, p: QtGui.QPainter, *_):
        rows, cols = self.shape
        if not rows or not cols:
            return
        to_device = p.transform()
        p.save()
        p.resetTransform()
        p.setFont(self.font)
        cell = to_device.mapRect(QtCore.QRectF(0, 0, 1, 1))
        need_w, need_h = self.widest_text_px()
        write = cell.width() >= need_w and cell.height() >= need_h
        hatch = QtGui.QBrush(theme.muted(), QtCore.Qt.BrushStyle.BDiagPattern)
        for row in range(rows):
            for col in range(cols):
                rect = to_device.mapRect(QtCore.QRectF(col - 0.5, row - 0.5, 1, 1))
                if self.masked[row, col]:
                    p.fillRect(rect, theme.background())
                    p.fillRect(rect, hatch)
                text = self.texts[row, col]
                if write and text:
                    if self.masked[row, col]:  # a plain patch under the word so the hatching does not cross it
                        box = QtCore.QRectF(0, 0, need_w, need_h)
                        box.moveCenter(rect.center())
                        p.fillRect(box, theme.background())
                    p.setPen(self.text_colors[row][col])
                    p.drawText(rect, QtCore.Qt.AlignmentFlag.AlignCenter, text)
        pen = QtGui.QPen(theme.highlight(), 2.5)
        p.setPen(pen)
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        for row, col in self.outlined:
            p.drawRect(to_device.mapRect(QtCore.QRectF(col - 0.5, row - 0.5, 1, 1)).adjusted(1, 1, -1, -1))
        focus_row, focus_col = self.focus
        if focus_row is not None and focus_row < rows:
            p.drawRect(to_device.mapRect(QtCore.QRectF(-0.5, focus_row - 0.5, cols, 1)).adjusted(1, 1, -1, -1))
        if focus_col is not None and focus_col < cols:
            p.drawRect(to_device.mapRect(QtCore.QRectF(focus_col - 0.5, -0.5, 1, rows)).adjusted(1, 1, -1, -1))
        p.restore()


class QtSmallHeatmap(QtWidgets.QWidget):
    """One matrix as coloured cells. `shown_matrix()` is exactly what it was given (−∞ kept);
    `image.image` is what is coloured (NaN where masked)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None, *, min_size: tuple[int, int] = (220, 200)):
        super().__init__(parent)
        self._shown: np.ndarray | None = None
        self._labels: tuple[list[str], list[str]] = ([], [])
        self._colormap = ""
        self._column_ticks: list[tuple[int, str]] = []

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.graphics.setMinimumSize(*min_size)
        self.plot = self.graphics.addPlot()
        make_matrix(self.plot)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setTransform(QtGui.QTransform().translate(-0.5, -0.5))
        self.plot.addItem(self.image)
        self.cells = _CellOverlay()
        self.cells.setZValue(5)
        self.plot.addItem(self.cells)
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get(theme.DEFAULT_COLORMAP),
                                        interactive=False, width=12)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)

        self.message = message_label()
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.message, 1)
        self.plot.getViewBox().sigResized.connect(self._place_column_labels)

    # --- what is shown --------------------------------------------------------------------------
    def shown_matrix(self) -> np.ndarray | None:
        return self._shown

    def row_labels(self) -> list[str]:
        return list(self._labels[0])

    def column_labels(self) -> list[str]:
        return list(self._labels[1])

    def title(self) -> str:
        return self.plot.titleLabel.text

    def levels(self) -> tuple[float, float]:
        return tuple(float(x) for x in self.colorbar.levels())

    def masked_cells(self) -> np.ndarray:
        return self.cells.masked.copy()

    def cell_text(self, row: int, col: int) -> str:
        return str(self.cells.texts[row, col])

    def values_fit(self) -> bool:
        """Whether the values are written (every cell wide and high enough for the widest one)."""
        rows, cols = self.cells.shape
        if not rows or not cols:
            return False
        view = self.plot.getViewBox()
        need_w, need_h = self.cells.widest_text_px()
        return view.width() / cols >= need_w and view.height() / rows >= need_h

    def outlined_cells(self) -> list[tuple[int, int]]:
        return list(self.cells.outlined)

    def set_focus(self, row: int | None = None, col: int | None = None) -> None:
        """Frame the main window's focused word: its row (the word looking) or its column (looked at)."""
        if (row, col) != self.cells.focus:
            self.cells.focus = (row, col)
            self.cells.update()

    def focus(self) -> tuple[int | None, int | None]:
        return self.cells.focus

    # --- drawing --------------------------------------------------------------------------------
    def show_matrix(self, matrix: np.ndarray, row_labels: Sequence[str], column_labels: Sequence[str], *,
                    title: str = "", mask: np.ndarray | None = None, levels: tuple[float, float] | None = None,
                    colormap: str = theme.DEFAULT_COLORMAP, masked_text: str = "", value_format: str = "{:.2f}",
                    axis_titles: tuple[str, str] = ("", "")) -> None:
        """Draw `matrix` (rows × columns). Cells that are not finite, or True in `mask`, are masked
        and carry `masked_text`. `levels` fixes the colour scale (e.g. (0, 1) for weights, or one
        scale shared by two heatmaps set side by side); by default it spans the finite values."""
        matrix = np.asarray(matrix, dtype=np.float64)
        rows, cols = matrix.shape
        masked = ~np.isfinite(matrix)
        if mask is not None:
            masked |= np.asarray(mask, dtype=bool)
        display = np.where(masked, np.nan, matrix)
        self._shown = matrix
        self._labels = (list(row_labels), list(column_labels))
        self.message.hide()
        self.graphics.show()
        self.graphics.setBackground(theme.background())  # follows a light/dark switch of the system

        if colormap != self._colormap:
            self._colormap = colormap
            self.colorbar.setColorMap(pg.colormap.get(colormap))
        low, high = levels if levels is not None else _span(display)
        self.image.setImage(display, autoLevels=False)
        self.colorbar.setLevels((low, high))
        self.cells.set_cells(*self._cell_texts(display, masked, masked_text, value_format, (low, high)), masked)
        self.cells.set_outlined([])

        self.plot.getAxis("left").setTicks([list(enumerate(self._labels[0])), []])
        self.plot.setLabel("left", axis_titles[0])
        self.plot.setLabel("top", axis_titles[1])
        self._column_ticks = []
        self._place_column_labels()
        self.plot.setTitle(title, color=theme.foreground(), size="9pt")
        self.plot.setXRange(-0.5, cols - 0.5, padding=0)
        self.plot.setYRange(-0.5, rows - 0.5, padding=0)

    def column_labels_staggered(self) -> bool:
        return any(text.endswith("\n") for _, text in self._column_ticks)

    def _place_column_labels(self, *_) -> None:
        """Column labels side by side while they fit, else every second one raised a line (so long
        words such as feature names never run into each other)."""
        labels = self._labels[1]
        metrics = QtGui.QFontMetrics(self.graphics.font())
        cell_w = self.plot.getViewBox().width() / max(len(labels), 1)
        widths = [metrics.horizontalAdvance(text) for text in labels]
        crowded = any((a + b) / 2 + 6 > cell_w for a, b in zip(widths, widths[1:], strict=False))
        ticks = [(i, text + "\n" if crowded and i % 2 else text) for i, text in enumerate(labels)]
        if ticks == self._column_ticks:
            return
        self._column_ticks = ticks
        axis = self.plot.getAxis("top")
        axis.setTicks([ticks, []])
        if crowded:  # room for two lines of labels (pyqtgraph sizes the axis for a bit less)
            title = axis.label.boundingRect().height() * 0.8 if axis.label.isVisible() else 0
            axis.setHeight(int(2 * metrics.height() + axis.style["tickTextOffset"][1]
                               + max(0, axis.style["tickLength"]) + title))
        else:
            axis.setHeight(None)

    def outline(self, cells: Sequence[tuple[int, int]]) -> None:
        """Draw a highlight frame around these (row, column) cells, e.g. the pair a lesson talks about."""
        self.cells.set_outlined(cells)

    def show_message(self, text: str) -> None:
        self._shown = None
        self.message.setText(text)
        self.message.show()
        self.graphics.hide()

    def _cell_texts(self, display, masked, masked_text, value_format, levels):
        cmap = pg.colormap.get(self._colormap)
        low, high = levels
        span = (high - low) or 1.0
        texts = np.empty(display.shape, dtype=object)
        colors = []
        for row in range(display.shape[0]):
            row_colors = []
            for col in range(display.shape[1]):
                if masked[row, col]:
                    texts[row, col] = masked_text
                    row_colors.append(theme.foreground())
                    continue
                value = display[row, col]
                texts[row, col] = value_format.format(value)
                where = min(max((value - low) / span, 0.0), 1.0)
                row_colors.append(theme.readable_text_on(cmap.map(where, mode="qcolor")))
            colors.append(row_colors)
        return texts, colors


def _span(display: np.ndarray) -> tuple[float, float]:
    """The range of the finite values, widened when they are all equal (a colour bar needs a span)."""
    finite = display[np.isfinite(display)]
    if not finite.size:
        return 0.0, 1.0
    low, high = float(finite.min()), float(finite.max())
    return (low - 0.5, high + 0.5) if high - low < 1e-12 else (low, high)


def symmetric_levels(*matrices: np.ndarray) -> tuple[float, float]:
    """(−m, m) for the largest finite |value| m across `matrices`: a diverging map centred on 0."""
    m = max((float(np.abs(a[np.isfinite(a)]).max(initial=0.0)) for a in matrices), default=0.0)
    return (-m, m) if m > 0 else (-1.0, 1.0)


def shared_levels(*matrices: np.ndarray) -> tuple[float, float]:
    """One colour scale spanning the finite values of all `matrices` (to set heatmaps side by side)."""
    finite = [np.asarray(a)[np.isfinite(a)] for a in matrices]
    return _span(np.concatenate(finite) if finite else np.empty(0))
