"""Small multiples: every head of the shown layer, or the shown head in every layer, as one grid of
heatmaps on one colour scale, with one colour bar for all of them.

Each panel is the matrix plot the heatmap and the lessons draw with, handed the trace's own matrices
(the reading of a real model applied, as in the main views): nothing is recomputed here.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from .export import ExportError
from .figure_options import FigureOptions
from .figure_state import ViewState
from .figure_text import colour_bar_label
from .views import theme
from .views.cell_colours import hidden_cells
from .views.colour_bar import ColourBar
from .views.matrix_plot import MatrixPlot, shared_levels

PANEL_PX = (300, 620)         # a panel's side: grows with the text's length between these
PANEL_PX_PER_WORD = 12
COLOUR_BAR_PX = 110           # the shared colour bar's strip, with its numbers and label
COLOUR_BAR_AXIS_PX = 64
MAX_GRID_PX = 6000


def grid_matrices(controller, state: ViewState) -> tuple[list[np.ndarray], list[str], list[str],
                                                       list[np.ndarray | None]]:
    """(matrices, panel titles, labels, masks) of the grid `state.grid` asks for: a mask per panel, as
    the layers of a model with sliding windows in some of them (Gemma 2, ModernBERT) mask differently."""
    trace = controller.trace
    if trace is None:
        raise ExportError(controller.error or "there is nothing to draw yet: type a text the model can read")
    if state.grid == "heads":
        return ([trace.matrix(state.matrix, head.index) for head in trace.heads],
                [f"head {head.index + 1}" for head in trace.heads], list(trace.labels),
                [_mask(trace, state)] * len(trace.heads))
    if not controller.is_real:  # a toy model is one layer
        return [trace.matrix(state.matrix, controller.head)], ["layer 1"], list(trace.labels), [_mask(trace, state)]
    from .pretrained_display import shown_trace

    ptrace = controller.pretrained_trace
    layers = [shown_trace(ptrace, layer, controller.real_view)[0] for layer in range(controller.real_model.n_layers)]
    return ([layer.matrix(state.matrix, controller.head) for layer in layers],
            [f"layer {index + 1}" for index in range(len(layers))], list(trace.labels),
            [_mask(layer, state) for layer in layers])


def _mask(trace, state: ViewState) -> np.ndarray | None:
    return trace.mask if state.matrix in ("weights", "masked") else None


def panel_side(n: int, columns: int, options: FigureOptions) -> int:
    natural = min(PANEL_PX[1], max(PANEL_PX[0], 180 + PANEL_PX_PER_WORD * n))
    width = options.size.layout_width(natural * columns + COLOUR_BAR_PX)
    return max(120, (width - COLOUR_BAR_PX) // columns)


def grid_pieces(controller, state: ViewState, options: FigureOptions, made: list) -> tuple[list, QtCore.QSizeF]:
    """The panels and the colour bar, placed; every widget made is appended to `made` (to destroy)."""
    from .figure import Piece

    matrices, titles, labels, masks = grid_matrices(controller, state)
    columns = math.ceil(math.sqrt(len(matrices)))
    rows = math.ceil(len(matrices) / columns)
    keys = controller.trace.looked_at_labels  # the columns: another text's for cross-attention
    side = panel_side(max(len(labels), len(keys)), columns, options)
    if side * max(columns, rows) > MAX_GRID_PX:
        raise ExportError(f"a grid of {len(matrices)} panels this large would be over {MAX_GRID_PX:,} pixels wide; "
                          "choose a smaller width")
    span = state.span or "fixed"
    by_row = state.matrix == "weights" and span == "row"
    shown = [np.where(hidden_cells(m, mask), np.nan, m) for m, mask in zip(matrices, masks, strict=True)]
    levels = (0.0, 1.0) if state.matrix == "weights" and span != "data" else shared_levels(*shown)
    plots = []
    for values, title, mask in zip(matrices, titles, masks, strict=True):
        plot = MatrixPlot(min_size=None, title_size="9pt", colormap=state.colormap, square_cells=True,
                          cell_tips=False)
        plot.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        made.append(plot)
        plots.append(plot)
        _drop_colour_bar(plot)
        plot.show_matrix(values, labels, keys, title=title, mask=mask, levels=levels, by_row=by_row,
                         colormap=state.colormap, causal=controller.trace.options.causal)
        _place(plot, side, side)
    height = _fitted_height(plots, side) if len(labels) != len(keys) else side
    pieces = []
    for index, plot in enumerate(plots):
        if height != side:
            _place(plot, side, height)
        row, column = divmod(index, columns)
        pieces.append(Piece(plot.export_widget(), QtCore.QPointF(column * side, row * height)))
    bar = _colour_bar(state, levels, span, height * min(rows, 2))
    made.append(bar)
    total = max(rows * height, bar.height())
    pieces.append(Piece(bar, QtCore.QPointF(columns * side, (total - bar.height()) / 2)))
    return pieces, QtCore.QSizeF(columns * side + COLOUR_BAR_PX, total)


def _place(plot: MatrixPlot, width: int, height: int) -> None:
    """The panel laid out at this size, its whole matrix in sight."""
    from .figure import settle

    plot.resize(width, height)
    plot.show()
    settle(plot)
    if plot.is_zoomable():
        plot.fit()
        settle(plot)


def _fitted_height(plots: list[MatrixPlot], side: int) -> int:
    """The panels' height cut to their square cells: a rectangle (cross-attention: 3 target tokens under
    11 source ones) left most of a square panel empty below its matrix."""
    fitted = [plot.fitted_size() for plot in plots]
    return side if None in fitted else min(side, max(size.height() for size in fitted))


def _drop_colour_bar(plot: MatrixPlot) -> None:
    """The panels share one colour bar: each panel's own is taken out of its layout."""
    plot.plot.layout.removeItem(plot.colorbar)
    plot.colorbar.hide()
    plot.plot.layout.setColumnFixedWidth(4, 0)


def _colour_bar(state: ViewState, levels: tuple[float, float], span: str, height: int) -> QtWidgets.QWidget:
    from .figure import settle

    graphics = pg.GraphicsLayoutWidget()
    graphics.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
    graphics.setBackground(theme.background())
    bar = ColourBar(pg.ImageItem(), pg.colormap.get(state.colormap), width=16)
    bar.axis.setWidth(COLOUR_BAR_AXIS_PX)
    bar.setLevels(levels)
    if state.matrix == "weights" and span == "row":
        bar.axis.setTicks([[(0.0, "0"), (1.0 - 1e-9, "row max")]])
    bar.set_label(colour_bar_label(state, span))
    graphics.addItem(bar)
    graphics.resize(COLOUR_BAR_PX, max(160, int(height * 0.8)))
    graphics.show()
    settle(graphics)
    return graphics
