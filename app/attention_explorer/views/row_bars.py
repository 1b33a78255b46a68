"""Where one word looks, as bars: the focus word's row of attention weights for the selected head."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from ..controller import Controller
from . import theme
from .plot_style import make_static
from .token_axis import TokenAxis


class QtRowBars(QtWidgets.QWidget):
    """Bars of the hovered (or pinned) word's weights; a hint when no word is in focus."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.axis = TokenAxis("bottom")
        self.plot = self.graphics.addPlot(axisItems={"bottom": self.axis})
        make_static(self.plot)
        self.plot.setYRange(0, 1, padding=0.02)
        self.plot.setLabel("left", "weight")
        self.plot.getAxis("left").setTicks([[(0, "0"), (0.5, "0.5"), (1, "1")]])  # few: the pane is short
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7)
        self.plot.addItem(self.bars)
        self.setMinimumHeight(90)
        self.setMaximumHeight(170)  # a glance at one row; the heatmap keeps the room
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)
        self.axis.token_hovered.connect(controller.set_hovered)
        self.axis.token_clicked.connect(controller.toggle_pinned)
        for signal in (controller.trace_changed, controller.head_changed, controller.focus_changed):
            signal.connect(self._redraw)
        self._redraw()

    def shown_row(self) -> np.ndarray | None:
        """The weights drawn as bars, or None when no word is in focus."""
        return self._row

    def _redraw(self, *_):
        trace, focus = self.controller.trace, self.controller.focus
        self._row = None
        if trace is None or focus is None or focus >= trace.n:
            self.bars.setOpts(x=[], height=[])
            self.plot.setTitle("Hover a word to see where it looks", color=theme.muted(), size="9pt")
            if trace is not None:
                self.axis.set_tokens(trace.labels)
                self.plot.setXRange(-0.6, trace.n - 0.4, padding=0)
            return
        self._row = trace.heads[self.controller.head].weights[focus]
        brushes = [theme.highlight() if j == focus else theme.head_color(self.controller.head) for j in range(trace.n)]
        self.bars.setOpts(x=np.arange(trace.n), height=self._row, width=0.7, brushes=brushes, pen=None)
        self.axis.set_tokens(trace.labels)
        self.axis.set_focus(focus)
        self.plot.setXRange(-0.6, trace.n - 0.4, padding=0)
        self.plot.setTitle(f"where “{trace.labels[focus]}” looks (head {self.controller.head + 1})",
                           color=theme.foreground(), size="9pt")
