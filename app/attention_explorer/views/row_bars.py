"""One word's attention weights as bars, in the direction of its role in the focus: where the word
looks (its row of the weights) or who looks at it (its column), for the selected head."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import LOOKED_AT, Controller
from . import theme
from .bars import BarGraphItem
from .page_note import page_note
from .plot_style import make_static, refit_scene_after_layout
from .resting_pointer import RestingPointer
from .text_layer import Label, TextLayer
from .token_axis import TokenAxis

TITLE_POINT_SIZE, TITLE_MARGIN_PX = 9.0, 48  # margin: the layouts' and the label's own
LEFT_AXIS_PX = 46  # the height axis: its name and numbers such as "0.91" or "1.2e+02"
MIN_BAR_PX_FOR_VALUES = 26.0  # write each bar's weight above it while bars are at least this wide
BAR_SHARE = 0.7  # of a word's place on the axis
MIN_BAR_PX = 1.5  # never narrower on screen: 2,048 words' bars in 250 pixels overlap, but every one is seen


HINT = "Hover a word to see where it looks"
IDLE_BUILD_MS = 300  # the plot is built this long after the window first shows, before anyone hovers
PLOT_SIZE_HINT = QtCore.QSize(600, 480)  # what a pyqtgraph view asks for: the pane's share, built or not


class QtRowBars(QtWidgets.QStackedWidget):
    """Bars of the focused word's weights (its row, or its column when it is the word looked at),
    each written above its bar while they fit; a hint when no word is in focus.

    Until a word is first focused the pane holds only the hint: its pyqtgraph plot is built while the
    app is idle after its first paint (or at that first focus), which takes it off the start."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.hint = page_note(HINT, self)
        self._colour_hint()
        self.addWidget(self.hint)
        self.setMinimumWidth(180)  # beside the heatmap, which keeps the height
        self.graphics: pg.GraphicsLayoutWidget | None = None  # the plot and its parts: see _build_plot
        self._row: np.ndarray | None = None
        self._title: tuple[str, int] | None = None  # (text as shown, colour) above the bars
        self._full_title: tuple[str, QtGui.QColor] | None = None
        self._redraws = 0  # redraws begun: one begun inside another (see _redraw) supersedes it
        self._drawn: tuple | None = None  # what the last redraw showed (_shown_state)
        self._hint_timer = QtCore.QTimer(self)
        self._hint_timer.setSingleShot(True)
        self._hint_timer.setInterval(0)
        self._hint_timer.timeout.connect(self._show_hint)
        for signal in (controller.trace_changed, controller.head_changed, controller.focus_changed,
                       controller.matrix_changed):
            signal.connect(self._redraw_if_changed)
        self._redraw()

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        return PLOT_SIZE_HINT

    def _colour_hint(self) -> None:
        """Muted text on the plots' background, as the plot's own hint, in the scheme of the moment."""
        palette = self.hint.palette()
        role = QtGui.QPalette.ColorRole
        if (palette.color(role.WindowText), palette.color(role.Window)) != (theme.muted(), theme.background()):
            palette.setColor(role.WindowText, theme.muted())
            palette.setColor(role.Window, theme.background())
            self.hint.setPalette(palette)
            self.hint.setAutoFillBackground(True)

    def _build_plot(self) -> None:
        if self.graphics is not None:
            return
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        RestingPointer(self.graphics)
        self.axis = TokenAxis("bottom", upright_allowed=False)
        self.plot = self.graphics.addPlot(axisItems={"bottom": self.axis},
                                          viewBox=pg.ViewBox(enableMenu=False))  # a menu never shown: not built
        make_static(self.plot)
        self._scale: tuple[float, str] | None = None  # the height axis's top and name (see _set_scale)
        # a fixed width: ticks of another length ("1" or "0.91") resized the axis only at its next paint,
        # so the bars stood where a fresh pane would not put them
        self.plot.getAxis("left").setWidth(LEFT_AXIS_PX)
        self._set_scale(1.0, "weight")  # few ticks: the pane is short
        # every bar in one brush, the focused word's bar laid over them in its own: with a brush per bar
        # pyqtgraph records and plays a rectangle at a time (9 ms a hover at 512 words), with one it
        # draws them all in one call
        self.bars = BarGraphItem(x=[], height=[], width=BAR_SHARE, pen=None)
        self.focus_bar = BarGraphItem(x=[], height=[], width=BAR_SHARE, pen=None)
        self.plot.addItem(self.bars)
        self.plot.addItem(self.focus_bar)
        self.values = TextLayer(anchor=(0.5, 1.0), point_size=8)
        self.plot.addItem(self.values)
        self.addWidget(self.graphics)
        self.axis.token_hovered.connect(lambda i: self.controller.set_hovered(i, source=self.axis))
        self.axis.token_clicked.connect(self.controller.toggle_pinned)
        self.plot.getViewBox().sigResized.connect(self._update_value_visibility)
        self.plot.getViewBox().sigResized.connect(self._refit_title)  # a plot built late is laid out after

    def showEvent(self, event: QtGui.QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self.graphics is None:
            QtCore.QTimer.singleShot(IDLE_BUILD_MS, self, self._build_plot)

    def shown_row(self) -> np.ndarray | None:
        """The weights drawn as bars, or None when no word is in focus."""
        return self._row

    def title(self) -> str:
        """The whole title over the bars (the pane may show it cut with …), or "" before any focus."""
        return self._full_title[0] if self._full_title is not None else ""

    def _show_hint(self) -> None:
        """No word in focus: the hint, as in a pane built now. Shown once control is back in the event
        loop: the focus goes when the mouse leaves a word on this plot's own axis, and hiding the plot
        inside its own leave event makes Qt send it a second one, which pyqtgraph cannot take (it tells
        the same items twice, and the error escaping Qt's handler crashed PySide6 6.11)."""
        if self._focused_word() is None:
            self._colour_hint()
            self.setCurrentWidget(self.hint)

    def _focused_word(self) -> int | None:
        trace, focus = self.controller.trace, self.controller.focus
        if trace is None or focus is None:
            return None
        return None if focus >= (trace.n_keys if self.controller.focus_role == LOOKED_AT else trace.n) else focus

    def values_written(self) -> bool:
        return self.graphics is not None and bool(self.values.labels()) and self.values.isVisible()

    def _shown_state(self) -> tuple:
        """What the bars show: the trace (held, so compared by identity), head, focus, matrix and colours."""
        c = self.controller
        return (c.trace, c.head, c.focus, c.focus_role, c.matrix, theme.foreground().rgba(),
                theme.background().rgba(), theme.highlight().rgba())

    def _redraw_if_changed(self, *_):
        """Redraw unless the state is the one drawn: a scrubber step announces its text so far and then
        the last row it pinned with it, and both found the same bars."""
        state, drawn = self._shown_state(), self._drawn
        if drawn is None or state[0] is not drawn[0] or state[1:] != drawn[1:]:
            self._redraw()

    def _redraw(self, *_):
        self._redraws += 1
        redraw = self._redraws
        self._drawn = self._shown_state()
        self._row = None
        focus = self._focused_word()
        if focus is None:
            self._hint_timer.start()
            return
        if self.graphics is None or self.currentWidget() is self.hint:
            self._build_plot()
            self.setCurrentWidget(self.graphics)
            if self.isVisible():  # laid out now, so the title below is cut to the real width
                self.graphics.resize(self.size())
                self.graphics.ci.layout.activate()
            if self._redraws != redraw:  # the plot, shown under the pointer, was hovered: that redraw is newer
                return
        trace = self.controller.trace
        looked_at = self.controller.focus_role == LOOKED_AT
        # the bars stand on the words of the other end: who looks at a word, or where a word looks (for
        # cross-attention another text's words, where the focused word itself has no bar)
        labels = trace.labels_of(not looked_at)
        own = trace.key_tokens is None  # the focused word is one of the bars' words too
        count = len(labels)
        self.axis.set_tokens(labels)
        self.plot.setXRange(-0.6, count - 0.4, padding=0)
        norms = self.controller.matrix == "norm" and trace.has_matrix("norm")
        head = trace.heads[self.controller.head]
        weights = head.norm if norms else head.weights
        top = max(float(weights.max()), 1e-12) if norms else 1.0  # norms: the head's most moved, on every word
        self._set_scale(top, "‖α·f(x)‖" if norms else "weight")
        self._row = weights[:, focus] if looked_at else weights[focus]
        width = self._bar_width(count)
        self.bars.setOpts(x=np.arange(count), height=self._row, width=width,
                          brush=QtGui.QBrush(theme.head_color(self.controller.head)))
        self.focus_bar.setOpts(x=[focus] if own else [], height=[self._row[focus]] if own else [], width=width,
                               brush=QtGui.QBrush(theme.highlight()))
        ink = theme.foreground()
        masked = trace.mask[:, focus] if looked_at and trace.mask is not None else (
            trace.mask[focus] if trace.mask is not None else np.zeros(count, bool))
        # written only where they fit: measuring 512 hidden labels cost more than the bars
        fits = self._values_fit(count)
        self.values.set_labels([Label(j, float(w) + 0.02 * top, f"{w:.2f}", ink) for j, w in enumerate(self._row)
                                if not masked[j]] if fits else [])
        self.values.setVisible(fits)
        self.axis.set_focus(focus if own else None)
        word = trace.labels_of(looked_at)[focus]
        title = f"who looks at “{word}”" if looked_at else f"where “{word}” looks"
        self._set_title(f"{title} ({self._which_weights(trace)})", theme.foreground())

    def _set_scale(self, top: float, name: str) -> None:
        """The bars' height axis from 0 to `top` (1 for weights), with room above for the values; set
        only when it changes, as a new axis re-lays out the plot."""
        if (top, name) == self._scale:
            return
        self._scale = (top, name)
        self.plot.setYRange(0, top * 1.15, padding=0)
        self.plot.setLabel("left", name)
        axis = self.plot.getAxis("left")
        axis.setTicks([[(0, "0"), (top / 2, f"{top / 2:.2g}"), (top, f"{top:.2g}")]])
        axis.resizeEvent(None)  # pyqtgraph centres a new name along the axis only when the axis resizes

    def _which_weights(self, trace) -> str:
        """Whose weights the bars are: the head's, or a reading of them (rollout is every head's)."""
        head = f"head {self.controller.head + 1}"
        if self.controller.matrix == "norm" and trace.has_matrix("norm"):
            head += ", weight × moved norm"
        reading = trace.reading
        if reading is None:
            return head
        return reading.short if any(stage.name == "rollout" for stage in reading.stages) else f"{head}, {reading.short}"

    def _set_title(self, text: str, color: QtGui.QColor) -> None:
        """The title, cut with … to the pane's width (a narrow pane beside an open dock would clip it).
        A new title text re-lays out the plot: skipped when the title stays (a hint between hovers)."""
        self._full_title = (text, color)
        font = QtGui.QFont()
        font.setPointSizeF(TITLE_POINT_SIZE)
        # measured from the pane, less the axis beside the bars
        width = max(40, self.width() - int(self.plot.getAxis("left").width()) - TITLE_MARGIN_PX)
        shown = QtGui.QFontMetrics(font).elidedText(text, QtCore.Qt.TextElideMode.ElideRight, width)
        if (shown, color.rgba()) != self._title:
            self._title = (shown, color.rgba())
            # escaped: a token's label ("<s>") is not markup
            self.plot.setTitle(html.escape(shown, quote=False), color=color, size=f"{TITLE_POINT_SIZE:g}pt")

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self.graphics is None:
            return
        self._refit_title()
        refit_scene_after_layout(self.graphics)  # a plot laid out while a longer title held it wide kept that width

    def _refit_title(self, *_):
        if self._full_title is not None:
            self._set_title(*self._full_title)

    def _bar_width(self, n: int) -> float:
        """A bar's width on the axis: its share of a word's place, or MIN_BAR_PX when that is less (at
        0.7 of 0.12 pixels, a long text's bars were not drawn at all)."""
        place_px = self.plot.getViewBox().width() / max(n, 1)
        return max(BAR_SHARE, MIN_BAR_PX / place_px) if place_px > 0 else BAR_SHARE

    def _values_fit(self, count: int) -> bool:
        """Whether `count` bars are wide enough to have their values written above them."""
        return self.plot.getViewBox().width() / max(count, 1) >= MIN_BAR_PX_FOR_VALUES

    def _update_value_visibility(self, *_):
        """The pane resized: the bars' width and whether their values are written follow it. As many bars
        as drawn (a target word's stand on the source's words, not on as many as the target has)."""
        if self._row is None or self.currentWidget() is self.hint:
            return
        count = len(self._row)
        fits = self._values_fit(count)
        if fits and not self.values.labels():
            self._redraw()  # the bars grew wide enough: write their values now
            return
        self.values.setVisible(fits)
        width = self._bar_width(count)
        if width != self.bars.opts["width"]:
            self.bars.setOpts(width=width)
            self.focus_bar.setOpts(width=width)
