"""Lesson: additive (Bahdanau) attention beside the paper's dot-product attention, on the same Q, K, V.

engine.compare_with_dot_product reads the dot-product side from the controller's trace and runs
additive attention on that head's queries and keys with parameters drawn from the chosen seed. Both
heatmaps share their axes and one colour scale, so a colour means the same number on either side.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtWidgets

from .. import engine
from ..controller import Controller
from ..engine import AdditiveComparison
from ..views.matrix_plot import MatrixPlot, shared_levels
from .lesson_panel import LessonPanel
from .number_table import QtNumberTable

AXIS_TITLES = ("word looking", "word looked at")
SHOWN = {"weights": "weights (after softmax)", "scores": "scores (before softmax)"}


class QtAdditiveLesson(LessonPanel):
    explanation = (
        "Before the Transformer, attention scored a query against a key with a tiny neural network: add W₁q and "
        "W₂k, squash with tanh, and read out one number with a vector v. The paper uses a plain dot product "
        "q·k instead, which is one matrix multiplication for all pairs and so much faster. Here both score the "
        "same queries and keys; the additive weights W₁, W₂, v are random (from the seed), not trained.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.comparison: AdditiveComparison | None = None
        self.seed_box = QtWidgets.QSpinBox()
        self.seed_box.setRange(0, 2**31 - 1)
        self.seed_box.setToolTip("Seed of the random W₁, W₂ and v of additive attention")
        self.shown_box = QtWidgets.QComboBox()
        for name, text in SHOWN.items():
            self.shown_box.addItem(text, name)
        row = QtWidgets.QHBoxLayout()
        for label, widget in (("seed", self.seed_box), ("show", self.shown_box)):
            row.addWidget(QtWidgets.QLabel(label))
            row.addWidget(widget)
            row.addSpacing(10)
        self.sizes_line = self.note()
        row.addWidget(self.sizes_line, 1)
        self.body.addLayout(row)
        maps = QtWidgets.QHBoxLayout()
        self.dot_map, self.additive_map = MatrixPlot(), MatrixPlot()
        maps.addWidget(self.dot_map)
        maps.addWidget(self.additive_map)
        self.body.addLayout(maps, 1)
        self.table = QtNumberTable(("word", "dot product looks most at", "additive looks most at"), numbers=False)
        bottom = QtWidgets.QHBoxLayout()
        bottom.addWidget(self.table)
        bottom.addWidget(self.note(
            "Untrained, additive attention usually comes out nearly flat: how sharply any attention picks a word "
            "depends on its parameters, which training would tune. The toy models' W_Q and W_K were set by hand to "
            "tell a story; the additive W₁, W₂ and v here only show the mechanics. Try other seeds."), 1)
        self.body.addLayout(bottom)
        self.seed_box.valueChanged.connect(self.request_refresh)
        self.shown_box.currentIndexChanged.connect(self.request_refresh)

    def refresh(self) -> None:
        trace = self.current_trace()
        h = self.current_head()
        self.comparison = result = engine.compare_with_dot_product(trace, head=h, seed=self.seed_box.value())
        shown = self.shown_box.currentData()
        if shown == "weights":
            dot, additive, levels = result.dot_weights, result.additive_weights, (0.0, 1.0)
        else:
            dot, additive = result.dot_scores, result.additive_scores
            levels = shared_levels(dot, additive)
        masked = "0" if shown == "weights" else "−∞"
        common = {"mask": result.mask, "levels": levels, "colormap": self.controller.colormap,
                  "masked_text": masked, "axis_titles": AXIS_TITLES}
        divided = f"/√{trace.heads[h].d_k}" if trace.options.scale else ""
        self.dot_map.show_matrix(dot, result.labels, result.key_labels,
                                 title=f"dot product: q·k{divided}, {shown}", **common)
        self.additive_map.show_matrix(additive, result.labels, result.key_labels,
                                      title=f"additive: v·tanh(W₁q + W₂k), {shown}", **common)
        p = result.params
        self.sizes_line.setText(f"W₁, W₂: {p.hidden} × {p.d_k}, v: {p.hidden} numbers, random from seed "
                                f"{self.seed_box.value()}; queries and keys from head {h + 1} of the main window.")
        top_dot = np.argmax(result.dot_weights, axis=1)
        top_additive = np.argmax(result.additive_weights, axis=1)
        self.table.set_rows([
            [word, _top(result.key_labels, result.dot_weights[i], top_dot[i]),
             _top(result.key_labels, result.additive_weights[i], top_additive[i])]
            for i, word in enumerate(result.labels)])


def _top(labels: list[str], row: np.ndarray, j: int) -> str:
    return f"{labels[j]} ({row[j]:.0%})"
