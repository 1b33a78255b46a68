"""The census grid: every layer (rows) × head (columns) of a model coloured by one measure, on one
shared scale with its colour bar, the value written in each cell while it fits and read out on hover;
beside it the heads ranked by that measure ("L19 H7 0.82") and the heads most like the chosen one
over every measure.

It draws from the census controls (controller_census) and never measures anything itself. A click
on a cell or a list entry opens that head in the main window on the text where it fires most.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ..engine.census import BY_KEY
from ..engine.census.result import ASCENDING
from .elided_label import ElidedLabel
from .matrix_plot import MatrixPlot

SIMILAR_HEADS = 8
HEAD_ROLE = QtCore.Qt.ItemDataRole.UserRole


def head_name(layer: int, head: int) -> str:
    return f"L{layer + 1} H{head + 1}"


def grid_levels(measure: str, result) -> tuple[float, float]:
    """One scale for the whole grid: shares of attention from 0 to 1; entropy from 0 to the uniform
    baseline (or the largest value, if a head spreads wider)."""
    if measure != "entropy":
        return 0.0, 1.0
    grid = result.grid(measure)
    top = max(float(np.nanmax(grid)) if np.isfinite(grid).any() else 0.0, result.uniform_entropy or 0.0)
    return 0.0, top or 1.0


class QtCensusView(QtWidgets.QWidget):
    """The grid, its readout, the ranked list and the similar heads of the census controls' result."""

    def __init__(self, census, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.census = census
        self.plot = MatrixPlot(min_size=(260, 260), title_size="10pt", colormap=census.controller.colormap,
                               cell_tips=False)  # the readout says more, and a tooltip window costs a frame
        self.plot.plot.setLabel("left", "layer")
        self.plot.plot.setLabel("top", "head")
        self.readout = QtWidgets.QLabel(" ")
        self.readout.setObjectName("censusReadout")
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        # two lines, whatever it says: a readout that grew or shrank re-laid out (and repainted) the grid
        self.readout.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Fixed)
        self.readout.setFixedHeight(2 * self.readout.fontMetrics().lineSpacing() + 4)
        # cut with … in a narrow column, whole in the tooltip (a measure's title can be long)
        self.ranked_title = ElidedLabel("")
        self.ranked = QtWidgets.QListWidget()
        self.ranked.setObjectName("censusRanked")
        self.similar_title = ElidedLabel("Heads like this one: click a head")
        for title in (self.ranked_title, self.similar_title):  # a new text never moves the grid beside them
            title.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Fixed)
        self.similar = QtWidgets.QListWidget()
        self.similar.setObjectName("censusSimilar")
        self.similar.setToolTip("The heads whose scores over every measure are nearest this head's "
                                "(each measure scaled to the same spread); the number is the distance")

        grid_side = QtWidgets.QWidget()
        grid_layout = QtWidgets.QVBoxLayout(grid_side)
        grid_layout.setContentsMargins(0, 0, 0, 0)
        grid_layout.addWidget(self.plot, 1)
        self.fit_button = self.plot.make_fit_button()  # a short window opens the grid zoomed in, some layers off it
        under_grid = QtWidgets.QHBoxLayout()
        under_grid.addWidget(self.readout, 1)
        under_grid.addWidget(self.fit_button, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        grid_layout.addLayout(under_grid)
        lists = QtWidgets.QWidget()
        lists_layout = QtWidgets.QVBoxLayout(lists)
        lists_layout.setContentsMargins(0, 0, 0, 0)
        for widget, stretch in ((self.ranked_title, 0), (self.ranked, 3), (self.similar_title, 0), (self.similar, 2)):
            lists_layout.addWidget(widget, stretch)
        splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        splitter.addWidget(grid_side)
        splitter.addWidget(lists)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self.plot.cell_hovered.connect(self._on_cell_hovered)
        self.plot.graphics.scene().sigMouseClicked.connect(self._on_grid_clicked)
        for widget in (self.ranked, self.similar):
            widget.itemClicked.connect(lambda item: self.census.open_head(*item.data(HEAD_ROLE)))
        census.result_changed.connect(self.redraw)
        census.measure_changed.connect(self.redraw)
        census.selected_changed.connect(self._on_selected_changed)
        census.controller.colormap_changed.connect(self.redraw)
        self.redraw()

    # --- drawing --------------------------------------------------------------------------------
    def redraw(self, *_) -> None:
        result, measure = self.census.result, self.census.measure
        self.ranked.clear()
        if result is None:
            self.plot.show_message(f"Run the census to measure every head of {self.census.model_name()}: "
                                   "Run, at the top. The window keeps answering while it runs.")
            self.ranked_title.set_full_text("")
            self.readout.setText(" ")
            self._on_selected_changed(self.census.selected)
            return
        title = BY_KEY[measure].title
        if measure in result.not_applicable:
            self.plot.show_message(f"{title} does not apply to {result.model_name}: "
                                   f"{result.not_applicable[measure]}. Choose another measure above.")
            self.ranked_title.set_full_text("")
            self.readout.setText(" ")
            self._on_selected_changed(self.census.selected)
            return
        grid = result.grid(measure)
        self.plot.show_matrix(grid, [f"L{i + 1}" for i in range(result.n_layers)],
                              [f"H{i + 1}" for i in range(result.n_heads)],
                              title=f"{title} — {result.model_name}, {result.texts} texts",
                              levels=grid_levels(measure, result), colormap=self.census.controller.colormap,
                              masked_text="–")
        order = "lowest first" if measure in ASCENDING else "strongest first"
        self.ranked_title.set_full_text(f"{title}, {order}:")
        for score in result.ranked(measure):
            item = QtWidgets.QListWidgetItem(f"{head_name(score.layer, score.head)}  {score.score:.2f}")
            item.setData(HEAD_ROLE, (score.layer, score.head))
            self.ranked.addItem(item)
        self._on_selected_changed(self.census.selected)

    def _on_selected_changed(self, head) -> None:
        result = self.census.result
        self.similar.clear()
        if result is None or head is None:
            self.plot.set_outlined([])
            self.similar_title.set_full_text("Heads like this one: click a head")
            return
        self.plot.set_outlined([head])
        self.similar_title.set_full_text(f"Heads like {head_name(*head)} over every measure:")
        for score in result.similar_heads(*head, SIMILAR_HEADS):
            item = QtWidgets.QListWidgetItem(f"{head_name(score.layer, score.head)}  (distance {score.score:.2f})")
            item.setData(HEAD_ROLE, (score.layer, score.head))
            self.similar.addItem(item)

    # --- reading ----------------------------------------------------------------------------------
    def cell_text(self, layer: int, head: int) -> str:
        """What hovering a cell says: the head, its score, and where it scored best."""
        result, measure = self.census.result, self.census.measure
        value = result.grid(measure)[layer, head]
        if not np.isfinite(value):
            return f"{head_name(layer, head)}: no text could measure {BY_KEY[measure].title} here"
        count = int(result.counts[measure][layer, head])
        text = f"{head_name(layer, head)} · {BY_KEY[measure].title} {value:.3f} (mean of {count} texts)"
        best = result.best_example(measure, layer, head)
        if best is not None:
            words = best[0].strip()
            text += f" · most on “{words[:60] + '…' if len(words) > 60 else words}” ({best[1]:.2f})"
        return text

    def _on_cell_hovered(self, cell, _screen_pos) -> None:
        if cell is None or self.census.result is None:
            self.readout.setText(" ")
            return
        self.readout.setText(self.cell_text(*cell))

    def cell_at_scene(self, scene_pos: QtCore.QPointF) -> tuple[int, int] | None:
        result = self.census.result
        if result is None or not self.plot.view.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.plot.view.mapSceneToView(scene_pos)
        layer, head = int(round(point.y())), int(round(point.x()))
        if 0 <= layer < result.n_layers and 0 <= head < result.n_heads:
            return layer, head
        return None

    def _on_grid_clicked(self, event) -> None:
        if event.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        cell = self.cell_at_scene(event.scenePos())
        if cell is not None:
            event.accept()
            self.census.open_head(*cell)

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        """What an image export renders: the grid with its labels, title and colour bar."""
        return self.plot.export_widget()

    def set_export_background(self, color) -> None:
        self.plot.set_export_background(color)
