"""Colours shared by the views, following the system's light or dark palette — or, while a figure is
made, the figure's own theme (see figure_theme): an export looks the same whatever the window shows."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets

from ..figure_state import COLORMAPS as FIGURE_COLORMAPS

# Okabe–Ito: distinguishable for colour-blind readers, one per head.
HEAD_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#999999")

# Perceptually uniform colour maps offered for the heatmap (named where the command line reads them too).
COLORMAPS = FIGURE_COLORMAPS
DEFAULT_COLORMAP = COLORMAPS[0]




@dataclass(frozen=True)
class FigureTheme:
    """The colours of an exported figure. A transparent one has no background: its text is dark for
    a light page or slide, light for a dark one."""

    key: str
    label: str
    background: str  # "#rrggbb", or "" for none (transparent)
    foreground: str
    dark: bool

    @property
    def transparent(self) -> bool:
        return not self.background


FIGURE_THEMES = {theme.key: theme for theme in (
    FigureTheme("light", "Light", "#ffffff", "#000000", False),
    FigureTheme("dark", "Dark", "#202124", "#f1f3f4", True),
    FigureTheme("transparent-light", "Transparent, for light backgrounds", "", "#000000", False),
    FigureTheme("transparent-dark", "Transparent, for dark backgrounds", "", "#ffffff", True),
)}
DEFAULT_FIGURE_THEME = "light"

_figure: FigureTheme | None = None  # set while a figure is built and drawn


@contextlib.contextmanager
def figure_theme(key: str) -> Iterator[FigureTheme]:
    """While the block runs, palette(), background(), foreground(), muted(), highlight() and is_dark()
    answer with the figure's theme instead of the system's, so a view built and drawn inside it takes
    the figure's colours without knowing it is being exported."""
    global _figure
    previous, _figure = _figure, FIGURE_THEMES[key]
    try:
        yield _figure
    finally:
        _figure = previous


def _figure_palette(figure: FigureTheme) -> QtGui.QPalette:
    base = _app_palette()
    back = QtGui.QColor(figure.background) if figure.background else QtGui.QColor(QtCore.Qt.GlobalColor.transparent)
    ink = QtGui.QColor(figure.foreground)
    role = QtGui.QPalette.ColorRole
    for which in (role.Window, role.Base, role.AlternateBase, role.Button):
        base.setColor(which, back)
    for which in (role.WindowText, role.Text, role.ButtonText, role.BrightText):
        base.setColor(which, ink)
    return base


def _app_palette() -> QtGui.QPalette:
    """The application's palette, a copy of its own (Qt hands it out by value: changing it changes no
    one else's), asked a few hundred times a scrubber step."""
    app = QtWidgets.QApplication.instance()
    return app.palette() if app is not None else QtGui.QPalette()


def palette() -> QtGui.QPalette:
    return _figure_palette(_figure) if _figure is not None else _app_palette()


def is_dark() -> bool:
    if _figure is not None:
        return _figure.dark
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
