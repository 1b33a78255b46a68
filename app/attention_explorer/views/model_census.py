"""The model view's cells coloured by a census measure instead of the weights on the text: the census
grid (views/census_view.py) where the heads already are, so what a head does over many texts and
where it looks on this one sit side by side, a click away.

Every cell is one colour, the measure's mean score on one scale for the whole grid (shares of
attention 0–1; entropy from 0 to the uniform baseline, as in the census window), with its value
written in it while the cell is large enough; a head no text could measure is grey with "–". The
choice (figure_census.CensusChoice) names the measure and what the census ran on, so a figure of it
is drawn again from its view state.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui

from ..figure_census import CensusChoice
from .census_view import grid_levels, head_name

UNMEASURED = QtGui.QColor(150, 150, 150)
VALUE_MIN_PX = 26   # cells smaller than this show the colour alone


class CensusCells:
    """One census measure of one model, as the model view's cells."""

    def __init__(self, choice: CensusChoice, result):
        self.choice, self.result = choice, result
        self.grid = result.grid(choice.measure)
        self.low, self.high = grid_levels(choice.measure, result)

    def colour(self, layer: int, head: int, colors: tuple[int, ...]) -> QtGui.QColor:
        value = self.grid[layer, head]
        if not np.isfinite(value):
            return UNMEASURED
        share = (value - self.low) / (self.high - self.low) if self.high > self.low else 0.0
        return QtGui.QColor.fromRgb(colors[int(round(min(max(share, 0.0), 1.0) * (len(colors) - 1)))])

    def value_text(self, layer: int, head: int) -> str:
        value = self.grid[layer, head]
        return f"{value:.2f}" if np.isfinite(value) else "–"

    def paint_cell(self, painter: QtGui.QPainter, rect: QtCore.QRectF, layer: int, head: int,
                   colors: tuple[int, ...]) -> None:
        colour = self.colour(layer, head, colors)
        painter.fillRect(rect, colour)
        if rect.width() >= VALUE_MIN_PX:
            painter.setPen(QtGui.QColor("black" if colour.lightnessF() > 0.55 else "white"))
            painter.drawText(rect, QtCore.Qt.AlignmentFlag.AlignCenter, self.value_text(layer, head))

    def readout(self, layer: int, head: int) -> str:
        """What hovering a cell says: the head, its mean score and how many texts it is the mean of."""
        value = self.grid[layer, head]
        why = self.result.not_applicable.get(self.choice.measure)
        if why is not None:
            return f"{head_name(layer, head)}: {self.choice.title} does not apply ({why})"
        if not np.isfinite(value):
            return f"{head_name(layer, head)}: no text could measure {self.choice.title} here"
        count = int(self.result.counts[self.choice.measure][layer, head])
        return f"{head_name(layer, head)}: {self.choice.title} {value:.3f} (mean of {count} texts)"

    def source(self) -> str:
        """What the census read, in a few words."""
        where = f"the texts of {self.choice.texts}" if self.choice.texts else f"built-in, seed {self.choice.seed}"
        return f"{self.result.texts} texts ({where})"

    def title(self, model_name: str) -> str:
        return f"{model_name}: census, {self.choice.title} over {self.source()}"

    def caption(self, model) -> str:
        scale = (f"from 0 to {self.high:.2f} nats" if self.choice.measure == "entropy"
                 else "from 0 to 1")
        return (f"{model.name}: {model.n_layers} layers × {model.n_heads} heads, each coloured by its "
                f"{self.choice.title} score over {self.source()}, {scale} for the whole grid. Hover a cell for "
                f"its score; click it to open the head on this text; right-click to switch it off or on.")
