"""The heatmap: rows are the words looking, columns the words looked at, one cell per pair.

Drawn by MatrixPlot (the plot every lesson's heatmap uses too) from the controller's trace, never
recomputed: word labels on both axes, a colour bar, values written in the cells while they fit, and
masked cells hatched (a masked cell is not a zero).

Cells are square. When a sentence is so long that the whole matrix would give cells under
MIN_FIT_CELL_PX, the heatmap opens zoomed in (wheel zooms, drag pans, + / − / 0 and Page Up / Down
keys, "Fit" shows all) and keeps the focused word's row or column in sight. This module adds what
only the main window has: the trace it follows, the hover readout, and the colour controls. The weights' colours
span 0–1 (comparable across sentences), the shown data, or each row; a long sentence opens with
each row, since its weights are all near 1/n and would share one colour on 0–1.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..controller import LOOKED_AT, LOOKING, Controller
from ..engine.census.norm_attention import FORMULA as NORM_FORMULA
from ..engine.softmax import why_masked
from ..engine.trace import Trace
from . import theme
from .elided_label import ElidedLabel
from .layout_seals import LayoutSeal
from .matrix_plot import MatrixPlot

MATRIX_TITLES = {
    "weights": "attention weights  softmax(QKᵀ/√d_k)",
    "scores": "scores  QKᵀ",
    "scaled": "scaled scores  QKᵀ/√d_k",
    "masked": "masked scores (before softmax)",
    "norm": f"norm-based attention  {NORM_FORMULA}",
}
LONG_SENTENCE_WORDS = 16  # above this, the weights' colours span each row unless the reader chose otherwise
COLOUR_SCALES = {"fixed": "0 – 1", "data": "fit to the data", "row": "each row"}


AXIS_TITLES = ("word looking", "word looked at")
# cross-attention: rows and columns are two texts' tokens, q from the decoder and k from the encoder. The
# rows' title is one word: a few target tokens under eleven source ones make a short, wide matrix, and a
# longer title ran past its height (drawn otherwise after an update than when built fresh)
CROSS_AXIS_TITLES = ("target", "source token looked at")


def heatmap_title(trace: Trace, matrix: str, head: int) -> str:
    """What the heatmap of `matrix` for `head` (0-based) shows, in words: "attention weights
    softmax(QKᵀ/√d_k) — layer 2, head 1 of 12", or what a real model's reading made of them."""
    layer = "" if trace.layer is None else f"layer {trace.layer + 1}, "  # a real model's layer
    where = f"{layer}head {head + 1} of {trace.options.heads}"
    if trace.key_tokens is not None:  # an encoder–decoder's target reading its source (last: the least cut)
        where = f"{where}, cross-attention"
    if trace.reading is None:
        return f"{MATRIX_TITLES[matrix]} — {where}"
    if matrix == "weights":
        return trace.reading.weights_title(where)
    note = trace.reading.scores_note()
    return f"{MATRIX_TITLES[matrix]} — {where}" + (f" · {note}" if note else "")


def norm_text(head, looking: str, looked_at: str, row: int, col: int) -> str:
    """A norm-based cell written out: what the head moves from `looked_at` to `looking`, as its weight
    times the length of the vector it moves (the weight before any reading renormalised it)."""
    norm, length = head.norm[row, col], head.moved_norm[col]
    if length == 0:
        return f"{looking} → {looked_at}: ‖α·f(x)‖ = 0: {looked_at} moves nothing in this head (‖f(x)‖ = 0)"
    return (f"{looking} → {looked_at}: ‖α·f(x)‖ = {norm / length:.3g} × {length:.3g} = {norm:.3g} "
            f"(its weight × the length of what {looked_at} moves)")


class QtHeatmap(MatrixPlot):
    """The heatmap of the matrix the controller says to show, for the selected head."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent, min_size=None, title_size="10pt", colormap=controller.colormap, square_cells=True,
                         cell_tips=False)  # its own tooltip and readout say more (see cell_text)
        self.controller = controller
        self.hover_text = ""
        self._readout_cell: tuple[int, int] | None = None  # the cell under the mouse, read out below
        self._colour_scale = "fixed"
        self._colour_scale_chosen = False  # until the reader picks one, it follows the sentence's length
        self.plot.setLabel("left", AXIS_TITLES[0])
        self.plot.setLabel("top", AXIS_TITLES[1])
        self._colour_bar_ticks: list | None = None  # None: pyqtgraph's own ticks

        # a long readout (a reading's arithmetic) is cut with … at the pane's edge, whole in its tooltip
        self.readout = ElidedLabel(" ")
        self.readout.setObjectName("heatmapReadout")
        self.readout.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
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
        self.fit_button = self.make_fit_button()

        # The readout has a line of its own: beside the colour controls a narrow pane cut it short
        # ("…÷√32 = -0.5"), and its numbers are what the reader came for. Sealed: its new text at each
        # hover asked the pane, the splitters and the window to lay out again, a pass of the event loop
        # each, and the window was painted again for it.
        self.layout().addWidget(LayoutSeal(self.readout))
        footer = QtWidgets.QHBoxLayout()
        footer.setContentsMargins(0, 0, 0, 0)
        footer.addStretch(1)
        footer.addWidget(self.fit_button)  # first: the room it keeps while hidden joins the stretch's
        footer.addWidget(QtWidgets.QLabel("Colours"))
        footer.addWidget(self.colormap_box)
        footer.addWidget(self.colour_scale_label)
        footer.addWidget(self.colour_scale_box)
        self.layout().addLayout(footer)

        self.left_axis.token_hovered.connect(lambda i: self.controller.set_hovered(i, LOOKING, self.left_axis))
        self.top_axis.token_hovered.connect(lambda i: self.controller.set_hovered(i, LOOKED_AT, self.top_axis))
        self.left_axis.token_clicked.connect(lambda i: self.controller.toggle_pinned(i, LOOKING))
        self.top_axis.token_clicked.connect(lambda i: self.controller.toggle_pinned(i, LOOKED_AT))
        self.colour_scale_box.activated.connect(lambda i: self.set_colour_scale(self.colour_scale_box.itemData(i)))
        self.cell_hovered.connect(self._on_cell_hovered)
        controller.trace_changed.connect(self._redraw)
        controller.matrix_changed.connect(self._redraw)
        controller.head_changed.connect(self._redraw)
        controller.colormap_changed.connect(self._on_colormap_changed)
        controller.focus_changed.connect(self._on_focus_changed)
        self._redraw()

    # --- what is shown --------------------------------------------------------------------------
    def cell_text(self, row: int, col: int) -> str:
        """The words and numbers of one cell, e.g. "sat → cat 75.3 % (score 1.79)"."""
        trace = self.controller.trace
        head = trace.heads[self.controller.head]
        looking, looked_at = trace.labels[row], trace.looked_at_labels[col]
        if trace.mask is not None and trace.mask[row, col]:
            why = why_masked(row, col, looking, looked_at, trace.options.causal)
            return f"{looking} → {looked_at}: masked ({why}), weight 0"
        weight = head.weights[row, col]
        if self.controller.matrix == "norm":
            return norm_text(head, looking, looked_at, row, col)
        if trace.reading is not None:  # not a softmax of these scores: written out from what it was made of
            arithmetic = trace.reading.weight_arithmetic(self.controller.head, row, col, trace.labels, weight,
                                                          trace.key_labels)
            return f"{looking} → {looked_at} {weight * 100:.1f} % — {arithmetic}"
        text = f"{looking} → {looked_at} {weight * 100:.1f} % (score {head.scores[row, col]:.2f}"
        if trace.options.scale:
            text += f", ÷√{head.d_k} = {head.scaled[row, col]:.2f}"
        return text + ")"

    def colour_scale(self) -> str:
        return self._colour_scale

    def colour_scale_chosen(self) -> bool:
        """Whether the reader picked the span (else it follows the sentence's length)."""
        return self._colour_scale_chosen

    def readout_cell(self) -> tuple[int, int] | None:
        return self._readout_cell

    def show_readout(self, cell: tuple[int, int] | None) -> None:
        """Read out `cell` under the heatmap, from the trace shown now: a readout is redrawn with the
        matrix, so it never keeps the numbers of an earlier sentence or setting."""
        trace = self.controller.trace
        if cell is not None and (trace is None or cell[0] >= trace.n or cell[1] >= trace.n_keys):
            cell = None
        self._readout_cell = cell
        self.hover_text = "" if cell is None else self.cell_text(*cell)
        self.readout.set_full_text(self.hover_text or " ", tip=self.hover_tip())

    def hover_tip(self) -> str:
        """The readout in lines, for a tooltip: a reading's arithmetic on a line of its own."""
        return self.hover_text.replace(" — ", "\n").replace("; from ", "\nfrom ")

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
        weights = self.controller.matrix == "weights"
        self.colour_scale_box.setVisible(weights)  # the span is the weights' alone, shown with or without them
        self.colour_scale_label.setVisible(weights)
        self._follow_length(trace.n if trace is not None else 0)
        if trace is None:
            self.show_message(self.controller.error or "Type a sentence to see its attention.")
            self.show_readout(None)
            return
        matrix = trace.matrix(self.controller.matrix, self.controller.head)
        # Masked cells are left empty (transparent) and hatched: the trace holds −∞ in the masked
        # scores and exact zeros in the weights, and a masked pair must not read as 0.
        mask = trace.mask if self.controller.matrix in ("weights", "masked") else None
        fixed = weights and self._colour_scale in ("fixed", "row")  # weights on 0–1, or each row over its largest
        title = heatmap_title(trace, self.controller.matrix, self.controller.head)
        self.show_matrix(matrix, trace.labels, trace.looked_at_labels, title=title, mask=mask,
                         levels=(0.0, 1.0) if fixed else None, by_row=weights and self._colour_scale == "row",
                         colormap=self.controller.colormap, causal=trace.options.causal,
                         axis_titles=CROSS_AXIS_TITLES if trace.key_tokens is not None else AXIS_TITLES)
        self._label_colour_bar(weights)
        self.show_readout(self._readout_cell)
        self._on_focus_changed(self.controller.focus)

    def _label_colour_bar(self, weights: bool) -> None:
        ticks = [[(0.0, "0"), (1.0 - 1e-9, "row max")]] if weights and self._colour_scale == "row" else None
        if ticks != self._colour_bar_ticks:  # the same ticks again would redraw the axis on every edit
            self._colour_bar_ticks = ticks
            self.colorbar.axis.setTicks(ticks)

    # --- hover and highlight --------------------------------------------------------------------
    def _on_cell_hovered(self, cell, screen_pos) -> None:
        self.show_readout(cell)
        if cell is None:
            QtWidgets.QToolTip.hideText()
            self.controller.set_hovered(None, source=self.image)
            return
        row, _col = cell
        if screen_pos is not None:
            self.show_tip(screen_pos, self.hover_tip())
        self.controller.set_hovered(row, LOOKING, self.image)

    def _on_focus_changed(self, index) -> None:
        """The focused word in bold on both axes, and its row (looking) or column (looked at) framed."""
        trace = self.controller.trace
        role = self.controller.focus_role
        if index is None or trace is None or index >= (trace.n_keys if role == LOOKED_AT else trace.n):
            self.set_focus(None, None)
        elif role == LOOKED_AT:  # the word in bold on both axes, but for cross-attention (two texts)
            self.set_focus(None, index, words=(index if trace.key_tokens is None else None, index))
        else:
            self.set_focus(index, None, words=(index, index if trace.key_tokens is None else None))

    def _on_colormap_changed(self, name: str) -> None:
        with QtCore.QSignalBlocker(self.colormap_box):
            self.colormap_box.setCurrentText(name)
        self._redraw()
