"""The arc diagram: words looking on the left, words looked at on the right, a line per pair whose
width and opacity grow with the attention weight; one colour per head when several are shown.

Built for long sentences: lines are batched into a few width/opacity buckets and drawn with
QPainter.drawLines inside pyqtgraph's clipped view (thousands of separate line items, or
semi-transparent lines drawn without a clip, are an order of magnitude slower). Beyond
AUTO_LIMIT_ABOVE words only the strongest arcs per word are kept, with a control to change that.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import Controller
from . import theme
from .message_label import message_label
from .text_layer import Label, TextLayer

BUCKETS = 10
MIN_WEIGHT_DRAWN = 0.005
AUTO_LIMIT_ABOVE = 24  # words; longer sentences keep only the strongest arcs per word
AUTO_STRONGEST = 3
LEFT, RIGHT = "left", "right"
LAYERED_WIDTH_PX = 1.0  # lines at least this wide go through an opaque layer (see ArcLinesItem)


class ArcLinesItem(pg.GraphicsObject):
    """Straight lines from (0, i) to (1, j), drawn in batches, one pen per batch.

    Lines are drawn in device pixels with ordinary pens: antialiased lines of a cosmetic pen under
    the view's scaling cost about three times as much in Qt's raster engine, and SVG has no
    cosmetic pens at all. On screen and in PNGs each batch of wide lines is drawn opaque into a
    transparent layer that is then laid over the view at the batch's opacity: Qt strokes
    semi-transparent, wide, antialiased lines about five times slower than opaque ones. Thin lines
    are cheap either way, and there a layer per batch would cost more than it saves. (Where lines of one batch cross,
    the layer shows them once rather than darker, which reads better anyway.) SVG keeps one
    vector line per arc with a translucent pen. The device-space lines are cached until the view's
    transform changes.
    """

    def __init__(self):
        super().__init__()
        self._batches: list[tuple[QtGui.QPen, list[QtCore.QLineF]]] = []
        self._rect = QtCore.QRectF(0, 0, 1, 1)
        self._device_cache: tuple[QtGui.QTransform, list] | None = None

    def set_batches(self, batches: list[tuple[QtGui.QPen, list[QtCore.QLineF]]], n: int) -> None:
        self.prepareGeometryChange()
        self._batches = batches
        self._device_cache = None
        self._rect = QtCore.QRectF(0, -0.5, 1, max(n, 1))
        self.update()

    def batches(self) -> list[tuple[QtGui.QPen, list[QtCore.QLineF]]]:
        return self._batches

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 - Qt API
        return self._rect

    def paint(self, painter, *_):
        to_device = painter.transform()
        batches = self._device_batches(to_device)
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        if painter.paintEngine().type() == QtGui.QPaintEngine.Type.SVG:
            for pen, lines in batches:
                painter.setPen(pen)
                painter.drawLines(lines)
        else:
            self._paint_in_layers(painter, batches, to_device.mapRect(self._rect).toAlignedRect())
        painter.restore()

    @staticmethod
    def _paint_in_layers(painter: QtGui.QPainter, batches: list, area: QtCore.QRect) -> None:
        wide = [(pen, lines) for pen, lines in batches if pen.widthF() >= LAYERED_WIDTH_PX]
        for pen, lines in batches:
            if pen.widthF() < LAYERED_WIDTH_PX:
                painter.setPen(pen)
                painter.drawLines(lines)
        if not wide:
            return
        area = area.adjusted(-8, -8, 8, 8)  # room for the widest pen
        ratio = painter.device().devicePixelRatioF()
        layer = QtGui.QImage(area.size() * ratio, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        layer.setDevicePixelRatio(ratio)
        for pen, lines in wide:
            layer.fill(QtCore.Qt.GlobalColor.transparent)
            opaque = QtGui.QPen(pen)
            color = QtGui.QColor(pen.color())
            color.setAlpha(255)
            opaque.setColor(color)
            layer_painter = QtGui.QPainter(layer)
            layer_painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
            layer_painter.translate(-area.topLeft())
            layer_painter.setPen(opaque)
            layer_painter.drawLines(lines)
            layer_painter.end()
            painter.setOpacity(pen.color().alphaF())
            painter.drawImage(area.topLeft(), layer)

    def _device_batches(self, to_device: QtGui.QTransform) -> list:
        if self._device_cache is None or self._device_cache[0] != to_device:
            batches = []
            for pen, lines in self._batches:
                plain = QtGui.QPen(pen)
                plain.setCosmetic(False)  # the width is already in device pixels
                batches.append((plain, [to_device.map(line) for line in lines]))
            self._device_cache = (QtGui.QTransform(to_device), batches)
        return self._device_cache[1]


class QtArcDiagram(QtWidgets.QWidget):
    """Hover a word to keep only its lines; click to pin it; click again or press Esc to unpin."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self._local_side: str | None = None  # side of the end under the mouse, when hovered here
        self._drawn: list[tuple[int, int, int, float]] = []  # (head, looking, looked at, weight)

        self.all_heads = QtWidgets.QCheckBox("All heads")
        self.all_heads.setChecked(True)
        self.all_heads.setToolTip("Draw every head in its own colour, or only the selected head")
        self.strongest = QtWidgets.QSpinBox()
        self.strongest.setRange(0, 512)
        self.strongest.setSpecialValueText("all")
        self.strongest.setPrefix("strongest ")
        self.strongest.setSuffix(" per word")
        self.strongest.setToolTip("Keep only the strongest arcs of each word (long sentences)")
        self.strongest.setMaximumWidth(200)
        controls = QtWidgets.QHBoxLayout()
        controls.setContentsMargins(4, 0, 4, 0)
        controls.addWidget(self.all_heads)
        controls.addWidget(self.strongest)
        controls.addStretch(1)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.legend = self.graphics.addLabel("", row=0, col=0, size="9pt")  # inside: exports show it
        self.view = self.graphics.addViewBox(row=1, col=0)
        self.view.setMouseEnabled(False, False)
        self.view.setMenuEnabled(False)
        self.view.invertY(True)
        self.lines = ArcLinesItem()
        self.view.addItem(self.lines)
        self.labels = {LEFT: TextLayer(anchor=(1.0, 0.5), offset_px=8),
                       RIGHT: TextLayer(anchor=(0.0, 0.5), offset_px=8)}
        for layer in self.labels.values():
            self.view.addItem(layer)
        self.message = message_label()

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.message, 1)

        esc = QtGui.QShortcut(QtGui.QKeySequence(QtCore.Qt.Key.Key_Escape), self)
        esc.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        esc.activated.connect(lambda: controller.set_pinned(None))
        self.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.graphics.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        self.all_heads.toggled.connect(self._draw_lines)
        self.strongest.valueChanged.connect(self._draw_lines)
        controller.trace_changed.connect(self._rebuild)
        controller.head_changed.connect(self._draw_lines)
        controller.focus_changed.connect(self._on_focus_changed)
        self._rebuild()

    # --- queries for tests and export -----------------------------------------------------------
    def drawn_arcs(self) -> list[tuple[int, int, int, float]]:
        """Every line on screen as (head, looking word, looked-at word, weight)."""
        return list(self._drawn)

    def label(self, side: str, index: int) -> Label:
        """The word label at one end: its text, colour and boldness as drawn."""
        return self.labels[side].labels()[index]

    def label_scene_rect(self, side: str, index: int) -> QtCore.QRectF:
        return self.labels[side].scene_rect(index)

    def heads_shown(self) -> list[int]:
        trace = self.controller.trace
        if trace is None:
            return []
        if self.all_heads.isChecked():
            return list(range(len(trace.heads)))
        return [self.controller.head]

    # --- building -------------------------------------------------------------------------------
    def _rebuild(self, *_):
        trace = self.controller.trace
        if trace is None:
            for layer in self.labels.values():
                layer.set_labels([])
            self.graphics.hide()
            self.message.setText(self.controller.error or "Type a sentence to see its attention.")
            self.message.show()
            self._drawn = []
            return
        self.message.hide()
        self.graphics.show()
        if trace.n > AUTO_LIMIT_ABOVE and self.strongest.value() == 0:
            self.strongest.setValue(AUTO_STRONGEST)  # triggers one redraw of the lines
        size = 10 if trace.n <= 20 else 8 if trace.n <= 40 else 6.5
        for side, x in ((LEFT, 0.0), (RIGHT, 1.0)):
            self.labels[side].set_point_size(size)
            self.labels[side].set_labels([Label(x, i, text, theme.foreground()) for i, text in enumerate(trace.labels)])
        self.view.setRange(xRange=(-0.45, 1.45), yRange=(-0.7, trace.n - 0.3), padding=0)
        self._draw_lines()

    def _draw_lines(self, *_):
        trace = self.controller.trace
        if trace is None:
            return
        heads = self.heads_shown()
        focus = self.controller.focus
        side = self._local_side if focus == self.controller.hovered else None
        keep = self.strongest.value()
        buckets: dict[tuple[int, int], list[QtCore.QLineF]] = {}
        drawn = []
        for h in heads:
            weights = trace.heads[h].weights
            strongest_first = np.argsort(-weights, axis=1, kind="stable")
            columns = strongest_first[:, :keep] if keep else strongest_first
            for i, row_columns in enumerate(columns):
                if focus is not None and side != RIGHT and i != focus:
                    continue
                for j in row_columns:
                    w = float(weights[i, j])
                    if w < MIN_WEIGHT_DRAWN or (focus is not None and side == RIGHT and j != focus):
                        continue
                    bucket = min(int(w * BUCKETS), BUCKETS - 1)
                    buckets.setdefault((h, bucket), []).append(QtCore.QLineF(0.0, i, 1.0, float(j)))
                    drawn.append((h, i, int(j), w))
        several = len(heads) > 1
        batches = []
        for (h, bucket), lines in sorted(buckets.items(), key=lambda kv: kv[0][1]):
            strength = (bucket + 0.5) / BUCKETS
            color = theme.head_color(h) if several else theme.head_color(self.controller.head)
            color.setAlphaF(0.18 + 0.8 * strength)
            pen = QtGui.QPen(color, 0.6 + 7.0 * strength)
            pen.setCosmetic(True)
            pen.setCapStyle(QtCore.Qt.PenCapStyle.FlatCap)  # round caps triple the antialiased stroking time
            batches.append((pen, lines))
        self._drawn = drawn
        self.lines.set_batches(batches, trace.n)
        self._update_legend(heads)
        self._style_labels(focus)

    def _update_legend(self, heads: list[int]) -> None:
        spans = [f'<span style="color:{theme.head_color(h).name()}">■</span> head {h + 1}' for h in heads]
        self.legend.setText("&nbsp;&nbsp;".join(spans), color=theme.foreground().name())

    def _style_labels(self, focus: int | None) -> None:
        for layer in self.labels.values():
            for i in range(len(layer.labels())):
                active = i == focus
                layer.restyle(i, theme.highlight() if active else theme.foreground(), active)

    # --- hover and click ------------------------------------------------------------------------
    def _end_at(self, scene_pos: QtCore.QPointF) -> tuple[str, int] | None:
        for side, layer in self.labels.items():
            for i in range(len(layer.labels())):
                if layer.scene_rect(i).adjusted(-3, -1, 3, 1).contains(scene_pos):
                    return side, i
        return None

    def _on_mouse_moved(self, scene_pos: QtCore.QPointF) -> None:
        end = self._end_at(scene_pos)
        self._local_side = end[0] if end else None
        index = end[1] if end else None
        if index == self.controller.hovered:
            self._draw_lines()  # same word, maybe the other side
        self.controller.set_hovered(index)

    def _on_mouse_clicked(self, event) -> None:
        end = self._end_at(event.scenePos())
        if end is not None and event.button() == QtCore.Qt.MouseButton.LeftButton:
            self.controller.toggle_pinned(end[1])

    def _on_focus_changed(self, _focus) -> None:
        self._draw_lines()

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        return self.graphics

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        theme.set_graphics_background(self.graphics, color)
