"""Lesson: why divide the scores by √d_k? Random queries and keys, scored raw, ÷√d_k and ÷d_k.

Everything shown comes from one engine.scaling_experiment; the panel only bins the score samples
into histograms and formats the averages. The histograms keep one fixed x axis on purpose: with
an axis that followed the data, the raw scores widening with d_k would be invisible.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ..controller import Controller
from ..engine import SCALING_MODES, ScalingExperiment, scaling_experiment
from ..engine.lesson_scaling import MAX_DK, MAX_KEYS, MAX_TRIALS, MIN_DK
from ..views import theme
from ..views.bars import BarGraphItem
from ..views.plot_style import make_static
from .lesson_panel import LessonPanel, number_box
from .number_table import QtNumberTable

MODE_NAMES = {"raw": "none (raw q·k)", "scaled": "÷√d_k", "divided_by_dk": "÷d_k"}
HIST_LIMIT = 40.0  # the fixed x axis of both histograms: −40 … 40 (raw spread at d_k = 1024 is 32)
HIST_EDGES = np.linspace(-HIST_LIMIT, HIST_LIMIT, 161)
# d_k values the slider steps through: eight steps per doubling, 1 … 1024, each once.
DK_STEPS = sorted({round(2 ** (i / 8)) for i in range(8 * int(math.log2(MAX_DK)) + 1)})
# Up to this many random scores (keys × trials) the slider recomputes while it moves (about 30 ms at
# d_k = 1024); above it, only where it is let go, so dragging never stalls (10⁷ scores take about 1 s).
LIVE_SAMPLES = 200_000
TABLE_HEADERS = ("scaling", "spread of q·k", "theory", "mean top weight", "mean slope a(1−a)",
                 "gradient vs none")


class QtScalingLesson(LessonPanel):
    follows_controller = False  # random vectors: nothing here depends on the sentence or the model
    explanation = (
        "A dot product of two random vectors with d_k entries adds up d_k products, so its spread grows "
        "like √d_k. Fed such large scores, softmax puts almost all the weight on one key, and its slope "
        "a(1−a), the gradient that reaches the scores, nearly vanishes. Dividing by √d_k brings the spread "
        "back to about 1 whatever d_k is; dividing by d_k overdoes it and makes every weight nearly equal.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.experiment: ScalingExperiment | None = None
        self.dk_slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.dk_slider.setRange(0, len(DK_STEPS) - 1)
        self.dk_slider.setToolTip("d_k, on a log scale: each step multiplies it by about 2^(1/8)")
        self.dk_box = number_box(MIN_DK, MAX_DK, 64, "d_k: entries in each query and key")
        self.keys_box = number_box(1, MAX_KEYS, 10, "How many keys each query is scored against")
        self.trials_box = number_box(1, MAX_TRIALS, 400, "How many random queries to average over")
        self.seed_box = number_box(0, 2**31 - 1, 0, "Seed of the random numbers: same seed, same numbers")
        self.mode_box = QtWidgets.QComboBox()
        for mode in SCALING_MODES:
            self.mode_box.addItem(MODE_NAMES[mode], mode)
        self.mode_box.setCurrentIndex(SCALING_MODES.index("scaled"))
        self.mode_box.setToolTip("Which division the lower histogram shows")
        self._set_slider_to(64)

        controls = QtWidgets.QHBoxLayout()
        controls.addWidget(QtWidgets.QLabel("d_k"))
        controls.addWidget(self.dk_slider, 2)
        controls.addWidget(self.dk_box)
        for label, widget in (("keys", self.keys_box), ("trials", self.trials_box), ("seed", self.seed_box),
                              ("scaling", self.mode_box)):
            controls.addSpacing(8)
            controls.addWidget(QtWidgets.QLabel(label))
            controls.addWidget(widget)
        self.body.addLayout(controls)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.shares: dict[str, np.ndarray] = {}  # per histogram ("raw", "divided"): share of scores per bin
        self.raw_plot = self._histogram_plot(0, "raw")
        self.mode_plot = self._histogram_plot(1, "divided")
        self.mode_plot.setXLink(self.raw_plot)
        self.bars_plot = self.graphics.addPlot(row=0, col=1, rowspan=2)
        make_static(self.bars_plot)
        self.bars_plot.setYRange(0, 1, padding=0.02)
        self.bars_plot.setLabel("left", "softmax weight")
        self.bars_plot.setLabel("bottom", "key")
        self.bars_plot.setTitle("one query's weights over its keys", color=theme.foreground(), size="9pt")
        self.bars_plot.addLegend(offset=(-10, 10))  # lists every item added with a name
        self.bars = {}
        for i, mode in enumerate(SCALING_MODES):
            self.bars[mode] = BarGraphItem(x=[], height=[], width=0.27, brush=theme.head_color(i), pen=None,
                                              name=MODE_NAMES[mode])
            self.bars_plot.addItem(self.bars[mode])
        self.graphics.ci.layout.setColumnStretchFactor(0, 3)
        self.graphics.ci.layout.setColumnStretchFactor(1, 2)
        self.body.addWidget(self.graphics, 1)

        self.outside_note = self.note()
        self.body.addWidget(self.outside_note)
        self.table = QtNumberTable(TABLE_HEADERS)
        self.body.addWidget(self.table)
        self.summary = self.finding()
        self.body.addWidget(self.summary)

        self.dk_slider.valueChanged.connect(self._on_slider_moved)
        self.dk_box.valueChanged.connect(self._on_dk_typed)
        for box in (self.keys_box, self.trials_box, self.seed_box):
            box.valueChanged.connect(self.request_refresh)
        self.mode_box.currentIndexChanged.connect(self.request_refresh)

    # --- controls -------------------------------------------------------------------------------
    def _set_slider_to(self, dk: int) -> None:
        nearest = min(range(len(DK_STEPS)), key=lambda i: abs(math.log(DK_STEPS[i]) - math.log(dk)))
        with QtCore.QSignalBlocker(self.dk_slider):
            self.dk_slider.setValue(nearest)

    def _on_slider_moved(self, position: int) -> None:
        self.dk_box.setValue(DK_STEPS[position])  # its valueChanged recomputes

    def _on_dk_typed(self, dk: int) -> None:
        self._set_slider_to(dk)
        self.request_refresh()

    @property
    def mode(self) -> str:
        return self.mode_box.currentData()

    # --- drawing --------------------------------------------------------------------------------
    def _histogram_plot(self, row: int, which: str) -> pg.PlotItem:
        plot = self.graphics.addPlot(row=row, col=0)
        make_static(plot)
        plot.setXRange(-HIST_LIMIT, HIST_LIMIT, padding=0)
        plot.setLabel("left", "share of scores")
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.getAxis("left").setWidth(60)  # the same for both, so their x axes line up
        # not antialiased: a smoothed fill leaves hairline white seams where its path is split
        self.curves[which] = plot.plot([0, 1], [0], stepMode="center", fillLevel=0, antialias=False)
        return plot

    def refresh(self) -> None:
        dk, keys, trials = self.dk_box.value(), self.keys_box.value(), self.trials_box.value()
        self.dk_slider.setTracking(keys * trials <= LIVE_SAMPLES)
        self.experiment = result = scaling_experiment(dk, keys, trials, self.seed_box.value())
        mode = self.mode
        self._draw_histogram("raw", result.scores("raw"), 0)
        self._draw_histogram("divided", result.scores(mode), SCALING_MODES.index(mode))
        self.raw_plot.setTitle(f"raw scores q·k, d_k = {dk}", color=theme.foreground(), size="9pt")
        self.mode_plot.setTitle(f"scores {MODE_NAMES[mode]}" if mode != "raw" else "scores, not divided",
                                color=theme.foreground(), size="9pt")
        outside = float(np.mean(np.abs(result.raw_scores) > HIST_LIMIT))
        self.outside_note.setText(
            f"Both histograms keep the axis −{HIST_LIMIT:g} … {HIST_LIMIT:g}, so you can watch the raw scores "
            f"widen as d_k grows. {outside:.0%} of the raw scores fall beyond it and are not drawn.")
        for i, m in enumerate(SCALING_MODES):
            self.bars[m].setOpts(x=np.arange(keys) + 1 + (i - 1) * 0.27, height=result.first_weights[m])
        self.bars_plot.setXRange(0.4, keys + 0.6, padding=0)
        self.table.set_rows([self._table_row(result, m) for m in SCALING_MODES], bold_row=SCALING_MODES.index(mode))
        self.summary.setText(self._summary(result))

    def _draw_histogram(self, which: str, scores: np.ndarray, color_index: int) -> None:
        counts, _ = np.histogram(scores, bins=HIST_EDGES)
        self.shares[which] = counts / scores.size
        color = theme.head_color(color_index)
        self.curves[which].setData(HIST_EDGES, self.shares[which], pen=color, brush=color)

    @staticmethod
    def _table_row(result: ScalingExperiment, mode: str) -> list[str]:
        stats = result.stats[mode]
        ratio = result.slope_ratio(mode)
        ratio_text = "—" if math.isnan(ratio) else ("∞" if math.isinf(ratio) else f"{ratio:#.3g}×")
        return [MODE_NAMES[mode], f"{stats.spread:#.3g}", f"{result.expected_spread(mode):#.3g}",
                f"{stats.top_weight:.1%}", f"{stats.slope:#.3g}", ratio_text]

    @staticmethod
    def _summary(result: ScalingExperiment) -> str:
        raw, scaled, by_dk = (result.stats[m] for m in SCALING_MODES)
        if result.keys == 1:
            return ("With a single key softmax has nothing to choose: its one weight is always 100 % and no "
                    "gradient flows.")
        ratio = result.gradient_ratio
        ratio_text = "infinitely" if math.isinf(ratio) else f"{ratio:#.3g}×"
        return (f"At d_k = {result.dk}, raw scores spread {raw.spread:#.3g} (√{result.dk} = "
                f"{result.expected_spread('raw'):#.3g}); the top key gets {raw.top_weight:.0%} on average and "
                f"its slope is {raw.slope:#.3g}. Divided by √d_k the spread is {scaled.spread:#.3g} and {ratio_text} "
                f"as much gradient gets through. Divided by d_k the spread falls to {by_dk.spread:#.3g} and the top "
                f"key gets only {by_dk.top_weight:.0%}, close to 1/{result.keys} = {1 / result.keys:.0%}: nearly flat.")
