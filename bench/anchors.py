"""What the bench compares against, measured in the same run on the same machine.

A bare ImageItem in a one-plot pyqtgraph window: the least any heatmap redraw can cost (set an
n × n image and paint it). The app's figures are printed as a ratio to it, so a table taken on a
slow or busy machine still says how far the app is from the floor.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from settling import settle


class BareImageWindow:
    """One pyqtgraph plot holding one ImageItem, sized like the view it stands in for."""

    def __init__(self, size: QtCore.QSize):
        self.widget = pg.PlotWidget()
        self.image = pg.ImageItem(axisOrder="row-major")
        self.widget.addItem(self.image)
        self.widget.resize(size)
        self.widget.show()
        self._rng = np.random.default_rng(0)
        self._n: int | None = None
        self._matrices: list[np.ndarray] = []
        QtWidgets.QApplication.processEvents()

    def update(self, n: int, i: int) -> None:
        """Set an n × n image (one of two, as an edit alternates two sentences), paint it and settle."""
        if self._n != n:
            self._n, self._matrices = n, [self._rng.random((n, n)) for _ in range(2)]
        self.image.setImage(self._matrices[i % 2], levels=(0.0, 1.0))
        self.widget.setRange(xRange=(0, n), yRange=(0, n), padding=0)
        settle()

    def close(self) -> None:
        self.widget.close()
