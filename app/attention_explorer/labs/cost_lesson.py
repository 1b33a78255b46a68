"""Lesson: what attention costs. The paper's Table 1, how each layer's work grows with the length n,
and the memory of the n × n weight matrix.

The numbers come from engine.cost (the formulas of Table 1 with constants taken as 1); the panel
only picks the lengths to plot and formats the results.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from .. import engine
from ..controller import Controller
from ..engine import LAYER_KEYS, TABLE_1
from ..views import theme
from ..views.plot_style import make_static
from .lesson_panel import LessonPanel, number_box
from .number_table import QtNumberTable

# n = 1 … 100 000 for the plot; a set, not np.unique, which imports numpy.ma (16 ms) while the window starts
PLOT_LENGTHS = np.array(sorted(set(np.round(np.logspace(0, 5, 200)))))
NAMES = {row.key: row.name for row in TABLE_1}
LABEL_OF = {"self_attention": "self-attention n²·d", "recurrent": "recurrent n·d²",
            "convolutional": "convolutional k·n·d²", "restricted_self_attention": "restricted r·n·d"}


class QtCostLesson(LessonPanel):
    explanation = (
        "Self-attention compares every word with every word: n² pairs, each a dot product of length d. A "
        "recurrent layer does n steps of d × d work instead, cheaper while the sentence is shorter than d, but "
        "its steps must run one after another, and a word's information needs up to n of them to reach a "
        "distant word. Attention does everything at once and links any two words in one step; the price is "
        "the n × n matrix, which fills memory as n grows.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.paper_table = QtNumberTable(("layer type", "work per layer", "sequential operations",
                                          "maximum path length"), numbers=False)
        self.paper_table.set_rows([[row.name, row.complexity, row.sequential, row.path_length] for row in TABLE_1])
        self.body.addWidget(QtWidgets.QLabel("<b>Table 1 of the paper</b> (n = words, d = width, k = kernel "
                                             "width, r = neighbourhood)"))
        self.body.addWidget(self.paper_table)

        self.d_box = number_box(1, 8192, 512, "d: the width of each word's vector (512 in the paper)")
        self.k_box = number_box(2, 64, 3, "k: the kernel width of the convolution")
        self.r_box = number_box(1, 4096, 16, "r: how many neighbours restricted self-attention looks at")
        self.n_box = number_box(1, 1_000_000, 1024, "n: the sentence length for the memory and the table below")
        self.dtype_box = QtWidgets.QComboBox()
        self.dtype_box.addItems(["float32", "float64"])
        self.dtype_box.setToolTip("4 bytes (float32) or 8 bytes (float64) per number")
        controls = QtWidgets.QHBoxLayout()
        for label, widget in (("d", self.d_box), ("k", self.k_box), ("r", self.r_box), ("n", self.n_box),
                              ("numbers", self.dtype_box)):
            controls.addWidget(QtWidgets.QLabel(label))
            controls.addWidget(widget)
            controls.addSpacing(10)
        controls.addStretch(1)
        self.body.addLayout(controls)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.plot = self.graphics.addPlot()
        self.plot.setLogMode(True, True)
        make_static(self.plot)
        self.plot.setLabel("bottom", "sentence length n")
        self.plot.setLabel("left", "operations per layer")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.addLegend(offset=(-10, -10))  # bottom right: the one corner no line reaches
        self.curves = {key: self.plot.plot([], [], pen=pg.mkPen(theme.head_color(i), width=2), name=LABEL_OF[key])
                       for i, key in enumerate(LAYER_KEYS)}
        label_opts = {"position": 0.97, "color": theme.foreground(), "anchors": [(0, 0), (0, 0)]}
        self.n_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(theme.muted(), style=QtCore.Qt.PenStyle.DashLine),
                                      label=" ", labelOpts=label_opts)
        self.sentence_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(theme.highlight(), width=1.5), label=" ",
                                             labelOpts={**label_opts, "position": 0.90})
        self.plot.addItem(self.n_line)
        self.plot.addItem(self.sentence_line)

        right = QtWidgets.QVBoxLayout()
        self.at_n_table = QtNumberTable(("layer type", "operations", "sequential steps", "longest path"))
        self.memory_line = self.finding()
        self.crossover_line = self.finding()
        right.addWidget(self.at_n_table)
        right.addWidget(self.memory_line)
        right.addWidget(self.crossover_line)
        right.addStretch(1)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.graphics, 3)
        row.addLayout(right, 2)
        self.body.addLayout(row, 1)

        for box in (self.d_box, self.k_box, self.r_box, self.n_box):
            box.valueChanged.connect(self.request_refresh)
        self.dtype_box.currentIndexChanged.connect(self.request_refresh)

    def plotted(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(n, operations) as plotted for one row of Table 1."""
        return self.curves[key].xData, self.curves[key].yData

    def refresh(self) -> None:
        d, k, r, n = self.d_box.value(), self.k_box.value(), self.r_box.value(), self.n_box.value()
        counts = engine.operation_counts(PLOT_LENGTHS, d, k, r)
        for key, curve in self.curves.items():
            curve.setData(PLOT_LENGTHS, counts[key])
        self.plot.setTitle(f"work per layer for d = {d:,}", color=theme.foreground(), size="9pt")
        self.n_line.setPos(np.log10(n))  # the plot's axes are log10 of n
        self.n_line.label.setFormat(f" n = {n:,}")
        trace = self.controller.trace
        self.sentence_line.setVisible(trace is not None)
        if trace is not None:
            self.sentence_line.setPos(np.log10(trace.n))
            self.sentence_line.label.setFormat(f" your sentence: n = {trace.n}")

        at_n = engine.operation_counts(n, d, k, r)
        steps = engine.sequential_operations(n)
        paths = engine.maximum_path_length(n, k, r)
        self.at_n_table.set_rows([[NAMES[key], f"{float(at_n[key]):,.0f}", f"{float(steps[key]):,.0f}",
                                   f"{float(paths[key]):,.0f}"] for key in LAYER_KEYS])
        dtype = self.dtype_box.currentText()
        size = float(engine.attention_matrix_bytes(n, dtype))
        self.memory_line.setText(f"At n = {n:,} the weight matrix holds n² = {n * n:,} numbers: "
                                 f"<b>{_bytes_text(size)}</b> in {dtype}, for one head of one layer.")
        cheaper = "self-attention" if at_n["self_attention"] < at_n["recurrent"] else "the recurrent layer"
        if at_n["self_attention"] == at_n["recurrent"]:
            cheaper = "neither (n = d)"
        self.crossover_line.setText(f"Self-attention does less work than a recurrent layer while n < d. At "
                                    f"n = {n:,}, d = {d:,} the cheaper one is {cheaper}.")


def _bytes_text(size: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit} ({size:,.0f} bytes)"
    return f"{size:,.0f} bytes"
