"""The arc diagram: words looking on the left, words looked at on the right, a line per pair whose
width and opacity grow with the attention weight; one colour per head when several are shown.

Built for long sentences: the lines are chosen in NumPy, each word's strongest found once per
trace, drawn in batches and kept as an image (see arc_lines), so a hover only dims that image and
draws the focused word's few lines over it. Beyond AUTO_LIMIT_ABOVE words only the strongest arcs
per word are kept, with a control to change that. Word labels are thinned to the ones that fit,
always keeping the focused word, which is drawn in full in its own layer.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import LOOKED_AT, LOOKING, Controller
from . import theme
from .arc_lines import (
    ArcLinesItem,
    HeadArcs,
    arcs_of_word,
    batches_of,
    head_colors,
    selected_arcs,
    strongest_first,
)
from .message_label import message_label
from .plot_style import refit_scene_after_layout
from .resting_pointer import RestingPointer
from .text_layer import Label, TextLayer
from .token_axis import GAP_PX, MAX_LABEL_PX

AUTO_LIMIT_ABOVE = 24  # words; longer sentences keep only the strongest arcs per word
AUTO_STRONGEST = 3
# Every head's arcs are drawn while the pane has, for each word, at least this many pixels a head (4 px
# a word at twelve heads), else the selected head's alone. Below it every head's strongest lines from one
# word's spot (36 at twelve heads in 4 px) cannot be told apart: 128 words in a 280-px pane drew a smear
# of 4,600 lines, and drawing them was the largest cost of a layer change or a reading.
ALL_HEADS_PX_PER_HEAD = 1 / 3
ALL_HEADS_TIP = "Draw every head in its own colour, or only the selected head"
ONE_HEAD_TIP = ("Too many words for this height to tell every head's arcs apart: the arcs show the selected "
                "head. Make the view taller to see them all, or untick this to draw one head in figures too")
ONE_HEAD_NOTE = "(every head needs more height)"  # in the legend, beside the one head drawn
LEFT, RIGHT = "left", "right"
ROLE_OF_SIDE = {LEFT: LOOKING, RIGHT: LOOKED_AT}
LABEL_OFFSET_PX = 8.0  # between a line's end and its word
DIMMED_OPACITY = 0.25  # the other words' lines while one word is focused
X_MARGIN = 0.45  # room for the words on each side, in widths of the lines' span: more in a narrow pane
LINES_LEAST_PX = 40.0  # the lines keep at least this width when the words take the rest
Y_MARGIN_ROWS = 0.7  # room above the first word and below the last, in rows, or half a label where rows are thin


class QtArcDiagram(QtWidgets.QWidget):
    """Hover a word's left end to see where it looks, its right end to see who looks at it; click to
    pin it; click again or press Esc to unpin."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self._orders: dict[tuple[int, int], np.ndarray] = {}  # (head, limit) → strongest columns, this trace
        self._selection: list[HeadArcs] = []  # the chosen lines of each head shown
        self._selection_of = None  # the trace they were chosen from
        self._drawn: list[HeadArcs] = []  # the lines drawn at full strength
        self._focus_shown: tuple | None = None  # (the selection, focus, role) the focus was drawn for
        # the words as each end's regular labels show them (long ones shortened): the same words at both
        # ends, but for cross-attention, whose target words look (left) at the source's (right)
        self._texts: dict[str, list[str]] = {LEFT: [], RIGHT: []}
        self._label_px = 0.0  # the widest of them, bold, with its gap to the lines
        self._legend_html: tuple[str, str] | None = None  # (text, colour) the legend shows

        self.all_heads = QtWidgets.QCheckBox("All heads")
        self.all_heads.setChecked(True)
        self.all_heads.setToolTip(ALL_HEADS_TIP)
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
        self.legend.item.document().setDefaultTextOption(QtGui.QTextOption(QtCore.Qt.AlignmentFlag.AlignHCenter))
        self.view = self.graphics.addViewBox(row=1, col=0, enableMenu=False)  # no menu built: faster start
        self.view.setMouseEnabled(False, False)
        self.view.invertY(True)
        self.lines = ArcLinesItem()          # every chosen line; dimmed while a word is focused
        self.focus_lines = ArcLinesItem()    # the focused word's lines, drawn strongly on top
        self.labels = {LEFT: TextLayer(anchor=(1.0, 0.5), offset_px=LABEL_OFFSET_PX),
                       RIGHT: TextLayer(anchor=(0.0, 0.5), offset_px=LABEL_OFFSET_PX)}
        self.focus_labels = {side: TextLayer(anchor=layer.anchor, offset_px=LABEL_OFFSET_PX)
                             for side, layer in self.labels.items()}
        for item in (self.lines, self.focus_lines, *self.labels.values(), *self.focus_labels.values()):
            self.view.addItem(item)
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
        RestingPointer(self.graphics)
        self.graphics.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        # the legend wraps to the plot's own new size (this widget's resize comes before the plot's)
        self.graphics.sigDeviceRangeChanged.connect(lambda *_: self._fit_legend())
        self.view.sigResized.connect(self._fit_y_range)
        self.view.sigResized.connect(self._fit_x_range)
        self.graphics.sigDeviceRangeChanged.connect(self._on_resized)
        self.view.sigResized.connect(self._place_labels)
        self.all_heads.toggled.connect(self._draw_lines)
        self.strongest.valueChanged.connect(self._draw_lines)
        controller.trace_changed.connect(self._rebuild)
        controller.matrix_changed.connect(self._rebuild)  # weights, or weight × moved norm
        controller.head_changed.connect(self._draw_lines)
        controller.focus_changed.connect(self._show_focus)
        self._rebuild()

    # --- queries for tests and export -----------------------------------------------------------
    def drawn_arcs(self) -> list[tuple[int, int, int, float]]:
        """Every line drawn at full strength, as (head, looking word, looked-at word, weight): all the
        chosen lines, or while a word is focused only its lines (the rest are dimmed)."""
        return [row for arcs in self._drawn for row in arcs.rows()]  # made when asked: up to 18,432 at 512 words

    def label(self, side: str, index: int) -> Label | None:
        """The label drawn for word `index` at one end (its text, colour and boldness), or None when
        it was thinned out to leave room for its neighbours."""
        layer, position = self._label_place(side, index)
        return None if layer is None else layer.labels()[position]

    def label_scene_rect(self, side: str, index: int) -> QtCore.QRectF:
        """Where the label of word `index` is drawn (it must be drawn), in scene coordinates."""
        layer, position = self._label_place(side, index)
        if layer is None:
            raise LookupError(f"word {index} has no label drawn on the {side}")
        return layer.scene_rect(position)

    def drawn_labels(self, side: str) -> list[tuple[int, QtCore.QRectF]]:
        """Every label drawn at one end as (word index, rectangle in scene coordinates)."""
        return [(int(label.y), layer.scene_rect(position))
                for layer in (self.labels[side], self.focus_labels[side])
                for position, label in enumerate(layer.labels())]

    def heads_shown(self) -> list[int]:
        trace = self.controller.trace
        if trace is None:
            return []
        if self.all_heads.isChecked() and self._room_for_every_head(trace):
            return list(range(len(trace.heads)))
        return [self.controller.head]

    def _room_for_every_head(self, trace) -> bool:
        """Whether the pane has room for every head's lines: ALL_HEADS_PX_PER_HEAD a head for each word.
        Measured on the whole pane, not on the lines' part of it: every head's legend takes more rows
        than one head's, so a choice made on the lines' height would undo itself at the next layout."""
        return self.graphics.height() / _rows(trace) >= len(trace.heads) * ALL_HEADS_PX_PER_HEAD

    def _label_place(self, side: str, index: int) -> tuple[TextLayer | None, int]:
        for layer in (self.focus_labels[side], self.labels[side]):
            for position, label in enumerate(layer.labels()):
                if int(label.y) == index:
                    return layer, position
        return None, -1

    # --- building -------------------------------------------------------------------------------
    def _rebuild(self, *_):
        trace = self.controller.trace
        self._orders = {}
        self._lines_key = None
        if trace is None:
            self._texts = {LEFT: [], RIGHT: []}
            self._selection = []
            self._drawn = []
            self.lines.set_batches([], 0)
            self.focus_lines.set_batches([], 0)
            self._place_labels()
            self.graphics.hide()
            self.message.setText(self.controller.error or "Type a sentence to see its attention.")
            self.message.show()
            return
        self.message.hide()
        self.graphics.show()
        size = 10 if trace.n <= 20 else 8
        self._texts = {LEFT: [_shortened(text, size) for text in trace.labels],
                       RIGHT: [_shortened(text, size) for text in trace.looked_at_labels]}
        self._label_px = max(_bold_width(text, size) for texts in self._texts.values() for text in texts) \
            + LABEL_OFFSET_PX
        for layer in (*self.labels.values(), *self.focus_labels.values()):
            layer.set_point_size(size)
        self._fit_y_range()
        self._fit_x_range()
        if trace.n > AUTO_LIMIT_ABOVE and self.strongest.value() == 0:
            self.strongest.setValue(AUTO_STRONGEST)  # draws the lines through its signal
        else:
            self._draw_lines()

    def _draw_lines(self, *_):
        trace = self.controller.trace
        if trace is None:
            return
        tip = ALL_HEADS_TIP if self._room_for_every_head(trace) else ONE_HEAD_TIP
        if self.all_heads.toolTip() != tip:
            self.all_heads.setToolTip(tip)
        heads = self.heads_shown()
        colors = head_colors(heads, self.controller.head)
        # the box too: ticked or not, one head may be drawn, and the legend says whether every head was asked for
        key = (tuple(heads), tuple(color.rgba() for color in colors), self.strongest.value(),
               self.all_heads.isChecked())
        if key == self._lines_key:
            return  # another head chosen while every head is shown: the same lines, nothing to redraw
        self._lines_key = key
        self._selection, self._selection_of = [], trace
        for head, color in zip(heads, colors, strict=True):
            weights = self._strengths(trace, head)
            key = (head, self.strongest.value())
            if key not in self._orders:
                self._orders[key] = strongest_first(weights, key[1])
            chosen = selected_arcs(weights, self._orders[key])
            self._selection.append(HeadArcs(head, color, *chosen))
        self.lines.set_batches(batches_of(self._selection), _rows(trace))
        self._update_legend(heads)
        self._show_focus()

    def _on_resized(self, *_):
        """A new height may leave room for every head's lines, or no longer. Not while a new trace is being
        announced (a view heard of it first and laid the window out): the rebuild that follows draws it."""
        if self.controller.trace is not None and self.controller.trace is self._selection_of:
            self._draw_lines()

    def _show_focus(self, *_):
        """Draw the focused word's lines strongly over the dimmed rest: out of it while it is the
        word looking, into it while it is the word looked at."""
        trace = self.controller.trace
        if trace is not None and trace is not self._selection_of:
            # a focus set while the controller announces a new trace (an encoder–decoder's other attention
            # has fewer heads): the lines are still the old trace's, and the redraw that follows shows it
            return
        focus = self.controller.focus if trace is not None else None
        shown = (self._selection, focus, self.controller.focus_role)
        if self._focus_shown is not None and self._focus_shown[0] is shown[0] and self._focus_shown[1:] == shown[1:]:
            return  # drawn already with these lines (a new trace's lines show the focus, then hear of it)
        self._focus_shown = shown
        selection = self._selection
        if focus is not None:
            looking = self.controller.focus_role == LOOKING
            selection = [HeadArcs(arcs.head, arcs.color, *arcs_of_word(self._strengths(trace, arcs.head), focus,
                                                                        looking)) for arcs in selection]
        self.focus_lines.set_batches([] if focus is None else batches_of(selection), _rows(trace) if trace else 0)
        self.lines.setOpacity(1.0 if focus is None else DIMMED_OPACITY)
        self._drawn = selection
        self._place_labels()

    def _strengths(self, trace, head: int) -> np.ndarray:
        """What a head's lines show: its weights, or, with the norm-based matrix chosen, what it moves
        (weight × moved norm) over the most any shown head moves, so the thickest line is the most moved.
        Only the heads shown are read: a long text's heads are each an n × n matrix made on demand."""
        if self.controller.matrix != "norm" or not trace.has_matrix("norm"):
            return trace.heads[head].weights
        most = max(float(trace.heads[other].norm.max()) for other in self.heads_shown()) or 1.0
        return trace.heads[head].norm / most

    def _update_legend(self, heads: list[int]) -> None:
        # entries break only between each other, so a dozen heads wrap onto a second line
        spans = [f'<span style="color:{theme.head_color(h).name()}">■</span>&nbsp;head&nbsp;{h + 1}' for h in heads]
        trace = self.controller.trace
        if self.all_heads.isChecked() and len(heads) < len(trace.heads):  # every head asked for, no room for them
            spans.append(ONE_HEAD_NOTE)
        if self.controller.matrix == "norm":
            spans.insert(0, "lines: weight × moved norm, the largest thickest:")
        html = " &nbsp; ".join(spans)
        if (html, theme.foreground().name()) != self._legend_html:  # a new text re-lays out the scene
            self._legend_html = (html, theme.foreground().name())
            self._fit_legend()
            self.legend.setText(html, color=theme.foreground().name())

    def _fit_legend(self) -> None:
        """The legend wraps at the view's width: unwrapped, a real model's twelve heads made the plot
        wider than its panel and pushed the right-hand words out of sight."""
        left, _top, right, _bottom = self.graphics.ci.layout.getContentsMargins()
        # the view's own width (it has no frame): its viewport takes the new size only after this resize
        width = max(80.0, self.graphics.width() - left - right)
        if self.legend.item.textWidth() != width:
            self.legend.item.setTextWidth(width)
            self.legend.updateMin()
            self.legend.resizeEvent(None)  # pyqtgraph centres the text only when the label itself resizes
            refit_scene_after_layout(self.graphics)  # the wider legend had widened the plot past the pane

    # --- labels ---------------------------------------------------------------------------------
    def _fit_y_range(self, *_):
        """The rows from the first word to the last, with room above and below: Y_MARGIN_ROWS rows, or
        half a label where rows are thinner than that (a 200-token text's first label was cut in half at
        the view's top edge)."""
        trace = self.controller.trace
        if trace is None:
            return
        rows, height = _rows(trace), self.view.height()
        half_label = QtGui.QFontMetricsF(self.labels[LEFT].font).height() / 2
        margin = Y_MARGIN_ROWS
        if height > 2 * half_label and margin * height / (rows - 1 + 2 * margin) < half_label:
            margin = half_label * (rows - 1) / (height - 2 * half_label)  # so that margin × a row's px = half_label
        if self.view.viewRange()[1] != [-margin, rows - 1 + margin]:
            self.view.setYRange(-margin, rows - 1 + margin, padding=0)
            # now, not as the next paint begins: the items' bounds follow the new scale before the scene
            # is drawn (at the paint they changed during it, and every text so far was drawn twice)
            self.view.updateMatrix()

    def _fit_x_range(self, *_):
        """Lines from 0 to 1 with room on each side for the widest word (bold, as when focused): a
        fixed share of the width left "because" cut in a pane beside the model view."""
        width = self.view.width()
        margin = X_MARGIN
        if width > 2 * self._label_px:
            margin = max(X_MARGIN, self._label_px / max(width - 2 * self._label_px, LINES_LEAST_PX))
        if self.view.viewRange()[0] != [-margin, 1 + margin]:
            self.view.setXRange(-margin, 1 + margin, padding=0)
            self.view.updateMatrix()  # now, not at the next paint: the labels are placed from it next

    def _place_labels(self, *_):
        """Regular labels every `stride` words, as many as fit without touching; the focused word in
        full, bold, in its own layer, with the regular labels it would touch left out."""
        trace = self.controller.trace
        rows = max(len(texts) for texts in self._texts.values())
        font = self.labels[LEFT].font
        line_px = QtGui.QFontMetricsF(font).height() + GAP_PX
        low, high = self.view.viewRange()[1]
        row_px = self.view.height() / (high - low) if rows else 1.0
        stride = max(1, math.ceil(line_px / max(row_px, 1e-6)))
        ink = theme.foreground()
        for side, x in ((LEFT, 0.0), (RIGHT, 1.0)):
            n, focus = len(self._texts[side]), self._focus_at(side)
            if focus is not None and focus >= n:
                focus = None
            shown = [i for i in range(0, n, stride) if focus is None or abs(i - focus) * row_px >= line_px]
            full = (trace.labels if side == LEFT else trace.looked_at_labels) if trace is not None else []
            _set_labels_if_changed(self.labels[side], [Label(x, i, self._texts[side][i], ink) for i in shown])
            _set_labels_if_changed(self.focus_labels[side],
                                   [] if focus is None else [Label(x, focus, full[focus], theme.highlight(), True)])

    def _focus_at(self, side: str) -> int | None:
        """The focused word's index at one end: at both while both ends are the same words; for
        cross-attention only at the end of its text (left: looking, right: looked at)."""
        trace, focus = self.controller.trace, self.controller.focus
        if focus is None or trace is None or trace.key_tokens is None:
            return focus
        return focus if (self.controller.focus_role == LOOKING) == (side == LEFT) else None

    # --- hover and click ------------------------------------------------------------------------
    def _end_at(self, scene_pos: QtCore.QPointF) -> tuple[str, int] | None:
        """The word whose end (left or right) is under the mouse, labelled or thinned out."""
        if not any(self._texts.values()):
            return None
        point = self.view.mapSceneToView(scene_pos)
        index = math.floor(point.y() + 0.5)
        left, right = self.view.viewRange()[0]
        px_per_unit = self.view.width() / (right - left)
        reach = (LABEL_OFFSET_PX + MAX_LABEL_PX) / max(px_per_unit, 1e-6)
        side = LEFT if -reach <= point.x() < 0 else RIGHT if 1 < point.x() <= 1 + reach else None
        if side is None or not 0 <= index < len(self._texts[side]):
            return None
        # A word drawn under the pointer is the word meant: in a long text a label is taller than its
        # row, and the row under the pointer named a neighbour ("all" hovered, "of₇" focused).
        for layer in (self.focus_labels[side], self.labels[side]):
            for position, label in enumerate(layer.labels()):
                if layer.scene_rect(position).contains(scene_pos):
                    return side, int(label.y)
        return side, index

    def _on_mouse_moved(self, scene_pos: QtCore.QPointF) -> None:
        end = self._end_at(scene_pos)
        # the controller ignores the same word in the same role: a mouse resting on a word redraws nothing
        if end is None:
            self.controller.set_hovered(None, source=self)
        else:
            self.controller.set_hovered(end[1], ROLE_OF_SIDE[end[0]], self)

    def _on_mouse_clicked(self, event) -> None:
        end = self._end_at(event.scenePos())
        if end is not None and event.button() == QtCore.Qt.MouseButton.LeftButton:
            self.controller.toggle_pinned(end[1], ROLE_OF_SIDE[end[0]])

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        return self.graphics

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        theme.set_graphics_background(self.graphics, color)


@functools.lru_cache(maxsize=4 * 8192)
def _shortened(text: str, point_size: float) -> str:
    """The word as a regular label shows it: ending in "…" where longer than MAX_LABEL_PX. Cached:
    sentences repeat words, and measuring 512 of them on every edit cost 8 ms."""
    font = QtGui.QFont()
    font.setPointSizeF(point_size)
    return QtGui.QFontMetricsF(font).elidedText(text, QtCore.Qt.TextElideMode.ElideRight, MAX_LABEL_PX)


@functools.lru_cache(maxsize=4 * 8192)
def _bold_width(text: str, point_size: float) -> float:
    font = QtGui.QFont()
    font.setPointSizeF(point_size)
    font.setBold(True)
    return QtGui.QFontMetricsF(font).horizontalAdvance(text)


def _rows(trace) -> int:
    """The rows the lines' ends stand on: the longer text's (cross-attention's two texts are each laid
    from the top, one word a row)."""
    return max(trace.n, trace.n_keys)


def _set_labels_if_changed(layer: TextLayer, labels: list[Label]) -> None:
    """A new set of labels re-renders the layer's cached image: skip it when nothing changed."""
    old = layer.labels()
    same = len(old) == len(labels) and all((a.x, a.y, a.text, a.color, a.bold) == (b.x, b.y, b.text, b.color, b.bold)
                                           for a, b in zip(old, labels, strict=True))
    if not same:
        layer.set_labels(labels)
