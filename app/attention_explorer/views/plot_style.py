"""How our pyqtgraph plots are set up: still pictures to read, not charts to pan and zoom."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore


def make_static(plot: pg.PlotItem) -> None:
    """No panning, zooming, auto-range button or pyqtgraph context menu (ours is shown instead).
    No "(×1e-3)" unit prefixes either: pyqtgraph would rewrite every axis title (as HTML) on each
    change of the view's range, an edit's and a hover's included."""
    plot.setMouseEnabled(False, False)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    for side in ("left", "bottom", "right", "top"):
        plot.getAxis(side).enableAutoSIPrefix(False)


def make_matrix(plot: pg.PlotItem) -> None:
    """A matrix plot: labels on the left and top, row 0 at the top, cells flush with the frame."""
    plot.showAxes((True, True, False, False), showValues=(True, True, False, False))
    plot.invertY(True)
    plot.setDefaultPadding(0.0)
    make_static(plot)


def refit_scene_after_layout(graphics: pg.GraphicsLayoutWidget) -> None:
    """Give the scene's layout exactly the visible size again, now and once the layout has settled.

    pyqtgraph sizes its layout to the view only when the view is resized; a layout that was held
    wider for a moment (an unwrapped legend, a long title) keeps that width after its text has
    shrunk, and its right-hand side stays out of sight."""
    def refit():
        graphics.centralWidget.setGeometry(QtCore.QRectF(graphics.viewport().rect()))

    refit()
    QtCore.QTimer.singleShot(0, graphics, refit)
