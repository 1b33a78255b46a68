"""The heatmap: rows are the words looking, columns the words looked at, one cell per pair.

Drawn with pyqtgraph from the controller's trace (never recomputed): an ImageItem shifted by half a
cell so cells centre on integer indices, word labels on both axes, a colour bar, values written in
the cells while they fit, and masked cells hatched (a masked cell is not a zero).

Cells are square. When a sentence is so long that the whole matrix would give cells under
MIN_FIT_CELL_PX, the heatmap opens zoomed in (wheel zooms, drag pans, + / − / 0 and Page Up / Down
keys, "Fit" shows all) and keeps the focused word's row or column in sight. The weights' colours
span 0–1 (comparable across sentences), the shown data, or each row; a long sentence opens with
each row, since its weights are all near 1/n and would share one colour on 0–1.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import LOOKED_AT, LOOKING, Controller
from . import theme
from .hatch import MaskHatchItem
from .matrix_frame import MatrixFrame
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
COLOUR_BAR_TEXT_PX = 64  # room for the colour bar's numbers, or "row max"
LONG_SENTENCE_WORDS = 16  # above this, the weights' colours span each row unless the reader chose otherwise
COLOUR_SCALES = {"fixed": "0 – 1", "data": "fit to the data", "row": "each row"}


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

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.hover_text = ""
        self._shown: np.ndarray | None = None
        self._colour_scale = "fixed"
        self._colour_scale_chosen = False  # until the reader picks one, it follows the sentence's length

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.graphics.setFocusPolicy(QtCore.Qt.FocusPolicy.ClickFocus)  # + / − / 0 after a click
        self.graphics.installEventFilter(self)
        self.left_axis = TokenAxis("left")
        self.top_axis = TokenAxis("top")
        # the title has its own row: inside the plot it would set the plot's least width, and a short
        # sentence's square matrix would then drift away from its labels
        self.title = self.graphics.addLabel("", row=0, col=0)
        self.plot = self.graphics.addPlot(row=1, col=0, axisItems={"left": self.left_axis, "top": self.top_axis},
                                          viewBox=pg.ViewBox(enableMenu=False))  # a menu never shown: not built
        make_matrix(self.plot)
        self.view = self.plot.getViewBox()
        self.view.setAspectLocked(False)  # square cells come from the plot's size (see _fit_plot)
        self.view.disableAutoRange()  # the range is ours: the value labels' generous bounds must not widen it
        self.plot.setLabel("left", "word looking")
        self.plot.setLabel("top", "word looked at")
        self.graphics.ci.layout.setAlignment(self.plot, QtCore.Qt.AlignmentFlag.AlignCenter)

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
        self.colorbar.axis.setWidth(COLOUR_BAR_TEXT_PX)  # one width for every span, so the plot's size holds
        self.colorbar.axis.setStyle(hideOverlappingLabels=False)  # "row max" sits at the very top: keep it
        self._colour_bar_ticks: list | None = None  # None: pyqtgraph's own ticks

        self.readout = QtWidgets.QLabel(" ")
        self.readout.setObjectName("heatmapReadout")
        self.readout.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        # a long readout is cut at the pane's edge (the tooltip has it whole) rather than widen the window
        self.readout.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.colour_scale_box = QtWidgets.QComboBox()
        for key, text in COLOUR_SCALES.items():
            self.colour_scale_box.addItem(text, key)
        self.colour_scale_box.setToolTip("What the weights' colours span: 0 to 1 (the same for every sentence), "
                                         "the smallest to the largest weight shown, or each row on its own")
        self.colour_scale_box.setFocusPolicy(QtCore.Qt.FocusPolicy.TabFocus)
        self.colour_scale_label = QtWidgets.QLabel("span")
        self.colormap_box = QtWidgets.QComboBox()
        self.colormap_box.addItems(theme.COLORMAPS)
        self.colormap_box.setCurrentText(controller.colormap)
        self.colormap_box.setToolTip("Colour map of the heatmap and the step tables (all perceptually uniform)")
        self.colormap_box.setFocusPolicy(QtCore.Qt.FocusPolicy.TabFocus)
        self.colormap_box.textActivated.connect(controller.set_colormap)
        self.fit_button = QtWidgets.QToolButton()
        self.fit_button.setText("Fit")
        self.fit_button.setToolTip("Show the whole matrix (key 0); wheel or + / − zoom, drag or Page Up / Down moves")
        self.fit_button.clicked.connect(self.fit)
        self.frame = MatrixFrame(self.graphics, self.title, self.plot)
        self.message = message_label()

        footer = QtWidgets.QHBoxLayout()
        footer.setContentsMargins(0, 0, 0, 0)
        footer.addWidget(self.readout, 1)
        footer.addWidget(QtWidgets.QLabel("Colours"))
        footer.addWidget(self.colormap_box)
        footer.addWidget(self.colour_scale_label)
        footer.addWidget(self.colour_scale_box)
        footer.addWidget(self.fit_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.message, 1)
        layout.addLayout(footer)

        self.left_axis.token_hovered.connect(lambda i: self.controller.set_hovered(i, LOOKING))
        self.top_axis.token_hovered.connect(lambda i: self.controller.set_hovered(i, LOOKED_AT))
        self.left_axis.token_clicked.connect(lambda i: self.controller.toggle_pinned(i, LOOKING))
        self.top_axis.token_clicked.connect(lambda i: self.controller.toggle_pinned(i, LOOKED_AT))
        self.colour_scale_box.activated.connect(lambda i: self.set_colour_scale(self.colour_scale_box.itemData(i)))
        self.view.sigResized.connect(self._on_resized)
        self.view.sigRangeChanged.connect(lambda *_: self._update_value_visibility())
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

    def cell_px(self) -> float:
        """The on-screen size of one (square) cell, in pixels."""
        return self.frame.cell_px()

    def visible_cells(self) -> tuple[range, range]:
        """The rows and columns (wholly or partly) on screen."""
        return self.frame.visible_cells()

    def is_zoomable(self) -> bool:
        """Whether the matrix is too large to show whole at a readable size, so it zooms and pans."""
        return self.frame.zoomable

    def colour_scale(self) -> str:
        return self._colour_scale

    def set_colour_scale(self, key: str) -> None:
        """"fixed" (0–1), "data" (the shown weights' span) or "row" (each row from 0 to its largest).
        A choice made here stays; before one is made, see _follow_length."""
        if key not in COLOUR_SCALES:
            raise ValueError(f"a colour scale is one of {', '.join(COLOUR_SCALES)}, not {key!r}")
        self._colour_scale_chosen = True
        if key != self._colour_scale:
            self._set_colour_scale(key)
            self._redraw()

    def _set_colour_scale(self, key: str) -> None:
        self._colour_scale = key
        with QtCore.QSignalBlocker(self.colour_scale_box):
            self.colour_scale_box.setCurrentIndex(list(COLOUR_SCALES).index(key))

    def _follow_length(self, n: int) -> None:
        """0–1 for a short sentence (comparable from one sentence to the next); each row for a long
        one, whose weights are all near 1/n and would share one dark colour on 0–1."""
        if not self._colour_scale_chosen:
            self._set_colour_scale("row" if n > LONG_SENTENCE_WORDS else "fixed")

    # --- redraw ---------------------------------------------------------------------------------
    def _redraw(self, *_):
        trace = self.controller.trace
        if trace is None:
            self._show_message(self.controller.error or "Type a sentence to see its attention.")
            return
        self.message.hide()
        self.graphics.show()
        matrix = trace.matrix(self.controller.matrix, self.controller.head)
        resized = self._shown is None or self._shown.shape != matrix.shape
        self._shown = matrix
        hatched = trace.mask if trace.mask is not None and self.controller.matrix in ("weights", "masked") else None
        # Masked cells are left empty (NaN, transparent) and hatched: the trace holds −∞ in the
        # masked scores and exact zeros in the weights, and a masked pair must not read as 0.
        shown = np.isfinite(matrix) if hatched is None else np.isfinite(matrix) & ~hatched
        display = np.where(shown, matrix, np.nan)
        weights = self.controller.matrix == "weights"
        self._follow_length(trace.n)
        self.colour_scale_box.setVisible(weights)
        self.colour_scale_label.setVisible(weights)
        colours, levels = self._colour_values(display, weights)
        self.image.setImage(colours, autoLevels=False)
        if tuple(self.colorbar.levels()) != tuple(levels):  # new levels redraw the colour bar and its axis
            self.colorbar.setLevels(levels)
        self._label_colour_bar(weights)
        self.hatch.color = theme.muted()
        self.hatch.set_mask(hatched)
        self.left_axis.set_tokens(trace.labels)
        self.top_axis.set_tokens(trace.labels)
        title = f"{MATRIX_TITLES[self.controller.matrix]} — head {self.controller.head + 1} of {trace.options.heads}"
        if title != self.title.text:
            self.title.setText(title, color=theme.foreground(), size="10pt")
        if resized:
            self._on_resized(force=True)
        self._write_values(display, colours)
        self._on_focus_changed(self.controller.focus)

    def _colour_values(self, display: np.ndarray, weights: bool) -> tuple[np.ndarray, tuple[float, float]]:
        """What the colours map (the values themselves, or each row over its largest) and their span."""
        if weights and self._colour_scale == "row":
            with np.errstate(invalid="ignore", divide="ignore"):
                row_max = np.nanmax(np.where(np.isfinite(display), display, np.nan), axis=1, keepdims=True)
            return display / np.where(row_max > 0, row_max, 1.0), (0.0, 1.0)
        if weights and self._colour_scale == "fixed":
            return display, (0.0, 1.0)
        finite = display[np.isfinite(display)]
        if finite.size == 0:
            return display, (0.0, 1.0)
        low, high = float(finite.min()), float(finite.max())
        return display, ((low - 0.5, high + 0.5) if high - low < 1e-12 else (low, high))

    def _label_colour_bar(self, weights: bool) -> None:
        ticks = [[(0.0, "0"), (1.0 - 1e-9, "row max")]] if weights and self._colour_scale == "row" else None
        if ticks != self._colour_bar_ticks:  # the same ticks again would redraw the axis on every edit
            self._colour_bar_ticks = ticks
            self.colorbar.axis.setTicks(ticks)

    def _write_values(self, display: np.ndarray, colours: np.ndarray) -> None:
        """Each cell's value in black or white, whichever reads better on the cell's colour."""
        labels = []
        if display.size <= MAX_WRITTEN_CELLS:
            low, high = self.colorbar.levels()
            fraction = np.clip((np.nan_to_num(colours, nan=low) - low) / ((high - low) or 1.0), 0.0, 1.0)
            mapped = pg.colormap.get(self.controller.colormap).map(fraction.ravel(), mode="float")
            ink = {True: QtGui.QColor("black"), False: QtGui.QColor("white")}
            for (row, col), value in np.ndenumerate(display):
                if not np.isfinite(value):
                    continue
                r, g, b = mapped[row * display.shape[1] + col][:3]
                labels.append(Label(col, row, f"{value:.2f}", ink[theme.is_light_rgb(r, g, b)]))
        self.values.set_labels(labels)
        self._update_value_visibility()

    def _update_value_visibility(self, *_):
        if self._shown is None:
            return
        cell = self.cell_px()
        self.values.setVisible(cell >= MIN_CELL_PX_FOR_VALUES[0] and cell >= MIN_CELL_PX_FOR_VALUES[1])

    def values_written(self) -> bool:
        """Whether numbers are written in the cells (they are while they fit)."""
        return bool(self.values.labels()) and self.values.isVisible()

    def _show_message(self, text: str) -> None:
        self._shown = None
        self.message.setText(text)
        self.message.show()
        self.graphics.hide()
        self.readout.setText(" ")

    # --- zoom and pan ---------------------------------------------------------------------------
    def _on_resized(self, *_, force: bool = False):
        self.frame.update(self._shown.shape if self._shown is not None else (0, 0), self.controller.focus, force)
        self.fit_button.setVisible(self.frame.zoomable)
        self._update_value_visibility()

    def fit(self) -> None:
        """Show the whole matrix."""
        self.frame.fit()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if watched is self.graphics and event.type() == QtCore.QEvent.Type.Resize:
            QtCore.QTimer.singleShot(0, self, self._on_resized)  # after the scene took its new size
        if watched is self.graphics and event.type() == QtCore.QEvent.Type.KeyPress:
            shift = bool(event.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier)
            if self.frame.handle_key(event.key(), shift):
                return True
        return super().eventFilter(watched, event)

    # --- hover and highlight --------------------------------------------------------------------
    def _on_cell_hovered(self, cell, screen_pos) -> None:
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
        self.controller.set_hovered(row, LOOKING)

    def _on_focus_changed(self, index) -> None:
        trace = self.controller.trace
        visible = index is not None and trace is not None and index < trace.n
        for axis in (self.left_axis, self.top_axis):
            axis.set_focus(index if visible else None)
        role = self.controller.focus_role
        self.row_highlight.setVisible(visible and role == LOOKING)
        self.col_highlight.setVisible(visible and role == LOOKED_AT)
        if visible:
            self.row_highlight.setRect(-0.5, index - 0.5, trace.n, 1)
            self.col_highlight.setRect(index - 0.5, -0.5, 1, trace.n)
            self.frame.keep_in_sight(index, role)

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
        with QtCore.QSignalBlocker(self.colormap_box):
            self.colormap_box.setCurrentText(name)
        self.colorbar.setColorMap(pg.colormap.get(name))
        self._redraw()

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        """What an image export renders: the plot with its labels and colour bar."""
        return self.graphics

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        theme.set_graphics_background(self.graphics, color)
