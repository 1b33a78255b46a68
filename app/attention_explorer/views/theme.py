"""Colours shared by the views, following the system's light or dark palette."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

# Okabe–Ito: distinguishable for colour-blind readers, one per head.
HEAD_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#999999")

# Perceptually uniform colour maps offered for the heatmap (all ship with pyqtgraph).
COLORMAPS = ("viridis", "cividis", "magma", "inferno", "plasma")
DEFAULT_COLORMAP = COLORMAPS[0]


def palette() -> QtGui.QPalette:
    app = QtWidgets.QApplication.instance()
    return app.palette() if app is not None else QtGui.QPalette()


def is_dark() -> bool:
    return palette().color(QtGui.QPalette.ColorRole.Window).lightness() < 128


def background() -> QtGui.QColor:
    return palette().color(QtGui.QPalette.ColorRole.Base)


def foreground() -> QtGui.QColor:
    return palette().color(QtGui.QPalette.ColorRole.Text)


def muted() -> QtGui.QColor:
    color = QtGui.QColor(foreground())
    color.setAlphaF(0.55)
    return color


def highlight() -> QtGui.QColor:
    """The colour of the word everyone is looking at (hovered or pinned)."""
    return QtGui.QColor("#FF6B35") if is_dark() else QtGui.QColor("#D6336C")


def head_color(index: int) -> QtGui.QColor:
    return QtGui.QColor(HEAD_COLORS[index % len(HEAD_COLORS)])


def readable_text_on(color: QtGui.QColor) -> QtGui.QColor:
    """Black or white, whichever reads better on `color` (for values written inside cells)."""
    light = is_light_rgb(color.redF(), color.greenF(), color.blueF())
    return QtGui.QColor("black") if light else QtGui.QColor("white")


def is_light_rgb(r: float, g: float, b: float) -> bool:
    """Whether a colour (channels 0–1) is light enough for black text: its relative luminance > 0.5."""
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5


def set_graphics_background(graphics_view, color: QtGui.QColor | None) -> None:
    """Paint a pyqtgraph view's background in `color`, or leave it transparent (None) for exports."""
    graphics_view.setBackground(color)
