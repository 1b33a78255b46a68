"""The heatmap: rows are the words looking, columns the words looked at, one cell per pair.

Drawn with pyqtgraph from the controller's trace (never recomputed): an ImageItem shifted by half a
cell so cells centre on integer indices, word labels on both axes, a colour bar, values written in
the cells while they fit, and masked cells hatched (a masked cell is not a zero).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import Controller
from . import theme
from .hatch import MaskHatchItem
from .message_label import message_label
from .plot_style import make_matrix
from .text_layer import Label, TextLayer
from .token_axis import TokenAxis

MATRIX_TITLES = {
    "weights": "attention weights  softmax(QKᵀ/√d_k)",
    "scores": "scores  QKᵀ",
    "scaled": "scaled scores  QKᵀ/√d_k",
    "masked": "masked scores (before softmax)",
}
MIN_CELL_PX_FOR_VALUES = (30.0, 16.0)  # write values in cells at least this wide and high
MAX_WRITTEN_CELLS = 40 * 40


class _CellImage(pg.ImageItem):
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


class QtHeatmap(QtWidgets.QWidget):
    """The heatmap of the matrix the controller says to show, for the selected head."""

    cell_hovered = QtCore.Signal(object)  # (row, col) or None

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.hover_text = ""
        self._shown: np.ndarray | None = None

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.left_axis = TokenAxis("left")
        self.top_axis = TokenAxis("top")
        self.plot = self.graphics.addPlot(axisItems={"left": self.left_axis, "top": self.top_axis})
        make_matrix(self.plot)
        self.plot.getViewBox().setAspectLocked(False)  # fill the pane; a locked square leaves the axes adrift
        self.plot.setLabel("left", "word looking")
        self.plot.setLabel("top", "word looked at")
        self.plot.setTitle("")

        self.hatch = MaskHatchItem()
        self.hatch.setZValue(5)  # over the image, whose masked cells are transparent
        self.plot.addItem(self.hatch)
        self.image = _CellImage(self._on_cell_hovered)
        self.image.setTransform(QtGui.QTransform().translate(-0.5, -0.5))
        self.plot.addItem(self.image)
        self.values = TextLayer(anchor=(0.5, 0.5), point_size=9)
        self.values.setZValue(6)
        self.plot.addItem(self.values)
        self.row_highlight = self._highlight_rect()
        self.col_highlight = self._highlight_rect()
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get(controller.colormap),
                                        interactive=False, width=16)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)

        self.readout = QtWidgets.QLabel(" ")
        self.readout.setObjectName("heatmapReadout")
        self.readout.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = message_label()

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.readout)

        for axis in (self.left_axis, self.top_axis):
            axis.token_hovered.connect(self._on_label_hovered)
            axis.token_clicked.connect(controller.toggle_pinned)
        self.plot.getViewBox().sigResized.connect(self._update_value_visibility)
        controller.trace_changed.connect(self._redraw)
        controller.matrix_changed.connect(self._redraw)
        controller.head_changed.connect(self._redraw)
        controller.colormap_changed.connect(self._on_colormap_changed)
        controller.focus_changed.connect(self._on_focus_changed)
        self._redraw()

    # --- what is shown --------------------------------------------------------------------------
    def shown_matrix(self) -> np.ndarray | None:
        """The matrix on screen, exactly as the trace holds it (−∞ where masked)."""
        return self._shown

    def cell_text(self, row: int, col: int) -> str:
        """The words and numbers of one cell, e.g. "sat → cat 75.3 % (score 1.79)"."""
        trace = self.controller.trace
        head = trace.heads[self.controller.head]
        looking, looked_at = trace.labels[row], trace.labels[col]
        if trace.mask is not None and trace.mask[row, col]:
            return f"{looking} → {looked_at}: masked (a later word), weight 0"
        text = f"{looking} → {looked_at} {head.weights[row, col] * 100:.1f} % (score {head.scores[row, col]:.2f}"
        if trace.options.scale:
            text += f", ÷√{head.d_k} = {head.scaled[row, col]:.2f}"
        return text + ")"

    # --- redraw ---------------------------------------------------------------------------------
    def _redraw(self, *_):
        trace = self.controller.trace
        if trace is None:
            self._show_message(self.controller.error or "Type a sentence to see its attention.")
            return
        self.message.hide()
        self.graphics.show()
        matrix = trace.matrix(self.controller.matrix, self.controller.head)
        self._shown = matrix
        n_rows, n_cols = matrix.shape
        hatched = trace.mask if trace.mask is not None and self.controller.matrix in ("weights", "masked") else None
        # Masked cells are left empty (NaN, transparent) and hatched: the trace holds −∞ in the
        # masked scores and exact zeros in the weights, and a masked pair must not read as 0.
        shown = np.isfinite(matrix) if hatched is None else np.isfinite(matrix) & ~hatched
        display = np.where(shown, matrix, np.nan)
        self.image.setImage(display, autoLevels=False)
        self.colorbar.setLevels(self._levels(display))
        self.hatch.color = theme.muted()
        self.hatch.set_mask(hatched)
        self.left_axis.set_tokens(trace.labels)
        self.top_axis.set_tokens(trace.labels)
        self.plot.setTitle(f"{MATRIX_TITLES[self.controller.matrix]} — head {self.controller.head + 1}"
                           f" of {trace.options.heads}", color=theme.foreground(), size="10pt")
        self.plot.setXRange(-0.5, n_cols - 0.5, padding=0)
        self.plot.setYRange(-0.5, n_rows - 0.5, padding=0)
        self._write_values(display)
        self._on_focus_changed(self.controller.focus)

    def _levels(self, display: np.ndarray) -> tuple[float, float]:
        if self.controller.matrix == "weights":
            return 0.0, 1.0
        finite = display[np.isfinite(display)]
        low, high = float(finite.min()), float(finite.max())
        return (low - 0.5, high + 0.5) if high - low < 1e-12 else (low, high)

    def _write_values(self, display: np.ndarray) -> None:
        """Each cell's value in black or white, whichever reads better on the cell's colour."""
        labels = []
        if display.size <= MAX_WRITTEN_CELLS:
            low, high = self.colorbar.levels()
            fraction = np.clip((np.nan_to_num(display, nan=low) - low) / ((high - low) or 1.0), 0.0, 1.0)
            colors = pg.colormap.get(self.controller.colormap).map(fraction.ravel(), mode="float")
            ink = {True: QtGui.QColor("black"), False: QtGui.QColor("white")}
            for (row, col), value in np.ndenumerate(display):
                if not np.isfinite(value):
                    continue
                r, g, b = colors[row * display.shape[1] + col][:3]
                labels.append(Label(col, row, f"{value:.2f}", ink[theme.is_light_rgb(r, g, b)]))
        self.values.set_labels(labels)
        self._update_value_visibility()

    def _update_value_visibility(self, *_):
        if self._shown is None:
            return
        view = self.plot.getViewBox()
        n_rows, n_cols = self._shown.shape
        cell_w = view.width() / max(n_cols, 1)
        cell_h = view.height() / max(n_rows, 1)
        self.values.setVisible(cell_w >= MIN_CELL_PX_FOR_VALUES[0] and cell_h >= MIN_CELL_PX_FOR_VALUES[1])

    def values_written(self) -> bool:
        """Whether numbers are written in the cells (they are while they fit)."""
        return bool(self.values.labels()) and self.values.isVisible()

    def _show_message(self, text: str) -> None:
        self._shown = None
        self.message.setText(text)
        self.message.show()
        self.graphics.hide()
        self.readout.setText(" ")

    # --- hover and highlight --------------------------------------------------------------------
    def _on_cell_hovered(self, cell, screen_pos) -> None:
        self.cell_hovered.emit(cell)
        if cell is None:
            self.hover_text = ""
            self.readout.setText(" ")
            QtWidgets.QToolTip.hideText()
            self.controller.set_hovered(None)
            return
        row, col = cell
        self.hover_text = self.cell_text(row, col)
        self.readout.setText(self.hover_text)
        if screen_pos is not None:
            QtWidgets.QToolTip.showText(QtCore.QPoint(int(screen_pos.x()), int(screen_pos.y())), self.hover_text,
                                        self.graphics)
        self.controller.set_hovered(row)

    def _on_label_hovered(self, index) -> None:
        self.controller.set_hovered(index)

    def _on_focus_changed(self, index) -> None:
        for axis in (self.left_axis, self.top_axis):
            axis.set_focus(index)
        trace = self.controller.trace
        visible = index is not None and trace is not None and index < trace.n
        self.row_highlight.setVisible(visible)
        self.col_highlight.setVisible(visible)
        if visible:
            self.row_highlight.setRect(-0.5, index - 0.5, trace.n, 1)
            self.col_highlight.setRect(index - 0.5, -0.5, 1, trace.n)

    def _highlight_rect(self) -> QtWidgets.QGraphicsRectItem:
        rect = QtWidgets.QGraphicsRectItem()
        pen = QtGui.QPen(theme.highlight(), 2.5)
        pen.setCosmetic(True)
        rect.setPen(pen)
        rect.setZValue(10)
        rect.setVisible(False)
        self.plot.addItem(rect)
        return rect

    def _on_colormap_changed(self, name: str) -> None:
        self.colorbar.setColorMap(pg.colormap.get(name))
        self._redraw()

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        """What an image export renders: the plot with its labels and colour bar."""
        return self.graphics

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        theme.set_graphics_background(self.graphics, color)
