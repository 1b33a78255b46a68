"""How much of a heatmap's matrix is on screen, at what size: square cells as large as the pane allows,
or, when the whole matrix would leave them under MIN_FIT_CELL_PX, zoomed in with zoom and pan on.

Kept apart from the heatmap's drawing: this only sizes the plot and moves the view's range.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore

from ..controller import LOOKED_AT, LOOKING
from .pixel_grid import steady

MIN_FIT_CELL_PX = 12.0   # below this, the whole matrix would be unreadable: open zoomed in
ZOOMED_CELL_PX = 18.0    # the cell size a long sentence opens at
MAX_CELL_PX = 120.0      # zooming in stops here
UNLIMITED_PX = 1e6       # "no maximum size" for a graphics item
UPRIGHT_MAX_SHARE = 0.5  # of the height the column words and the cells share, the most upright words take


class SquareZoomViewBox(pg.ViewBox):
    """A view whose zoom stops where its limits would stop one side alone. pyqtgraph holds each side to
    its limits on its own, so with square cells locked, a side already at its least range (a cell as wide
    as a pane only a few pixels wide) or at its whole span stayed there while the other side zoomed on:
    the cells were no longer square, and a view given the same range squared them again."""

    def scaleBy(self, s=None, center=None, x=None, y=None):  # noqa: N802 - pyqtgraph API
        if s is not None:
            x, y = s[0], s[1]
        if self.state["aspectLocked"] is False or (x is None and y is None):
            return super().scaleBy(None, center, x, y)
        factor = self._allowed_scale(y if y is not None else x)  # locked, pyqtgraph scales both sides by y's
        if factor != 1.0:
            super().scaleBy(None, center, factor, factor)

    def _allowed_scale(self, factor: float) -> float:
        """`factor` (of the ranges: under 1 zooms in) cut to what both sides' limits allow, never turned
        from a zoom in to a zoom out or back."""
        limits, shown = self.state["limits"], self.targetRect()
        for span, (least, most), (low, high) in ((shown.width(), limits["xRange"], limits["xLimits"]),
                                                 (shown.height(), limits["yRange"], limits["yLimits"])):
            if span <= 0:
                return 1.0
            if factor < 1.0 and least is not None:
                factor = min(1.0, max(factor, least / span))
            elif factor > 1.0:
                factor = max(1.0, min(factor, (high - low) / span, most / span if most is not None else factor))
        return factor if abs(factor - 1.0) > 1e-9 else 1.0


class MatrixFrame:
    def __init__(self, graphics: pg.GraphicsLayoutWidget, title: pg.LabelItem, plot: pg.PlotItem,
                 square: bool = True):
        self.graphics, self.title, self.plot = graphics, title, plot
        self.square = square  # cells square while the whole matrix fits; else they fill the pane
        self.view = plot.getViewBox()
        self.shape = (0, 0)
        self.zoomable = False
        self._framed_for: tuple | None = None  # (shape, zoomable, view size) the range was last framed for

    # --- what is on screen ----------------------------------------------------------------------
    def cell_px(self) -> float:
        """The on-screen size of one (square) cell, in pixels: its shorter side where not square."""
        return min(self.cell_size())

    def cell_size(self) -> tuple[float, float]:
        """The on-screen width and height of one cell, in pixels."""
        a = self.view.mapViewToScene(QtCore.QPointF(0, 0))
        b = self.view.mapViewToScene(QtCore.QPointF(1, 1))
        return abs(b.x() - a.x()), abs(b.y() - a.y())

    def visible_cells(self) -> tuple[range, range]:
        """The rows and columns (wholly or partly) on screen."""
        n_rows, n_cols = self.shape
        (x0, x1), (y0, y1) = self.view.viewRange()
        return (range(max(0, math.ceil(y0 - 0.5)), min(n_rows, math.floor(y1 + 0.5) + 1)),
                range(max(0, math.ceil(x0 - 0.5)), min(n_cols, math.floor(x1 + 0.5) + 1)))

    # --- sizing ---------------------------------------------------------------------------------
    def update(self, shape: tuple[int, int], focus: int | None, force: bool = False) -> None:
        """Fit the plot to the pane, and re-frame only when the pane or the matrix really changed (or
        `force`): a late resize event must not undo the reader's zoom or Fit."""
        self.shape = shape
        self._fit_plot()
        rect = self.view.boundingRect()
        key = (shape, self.zoomable, round(rect.width()), round(rect.height()))
        if force or key != self._framed_for:
            self._framed_for = key
            self._frame(focus)

    def _fit_plot(self) -> None:
        """Size the plot so that the whole matrix has square cells as large as the pane allows, with the
        labels and colour bar hugging it; when those cells would be under MIN_FIT_CELL_PX, the plot takes
        the whole pane and the matrix zooms instead. Without `square`, cells that fit stretch to fill the
        pane (three lesson matrices side by side would otherwise leave a band of empty pane under them)."""
        n_rows, n_cols = self.shape
        if not n_rows or not n_cols:
            return
        # the axes may just have been given new widths for new words: measure them laid out, or the
        # plot keeps the old words' room and the matrix sits off-centre (or is cut) until a resize.
        # The layouts forget the sizes they cached first: they hear of the axes' new ones an event-loop
        # pass later, and a pane that did not change size then kept the old measure (ten long words
        # after five short in a narrow pane: zoomed, with a Fit button, where a fresh view found no
        # room for cells at all; X11 walk, seed 90). The plot's own layout is laid out too: a plot that
        # kept its size (it filled the pane, zoomed) does not lay out its axes again when it is placed,
        # and longer words measured with the short words' axis left the cells too narrow, fitted again
        # pass after pass (X11 walk, seed 108).
        self._lay_out_plot()
        if self.plot.width() < self.plot.layout.minimumWidth() or self.plot.height() < self.plot.layout.minimumHeight():
            # held by the maximum the previous words were fitted to, narrower than these words' labels
            # need: the layout ran past the plot's edge and the cells took the shortfall, so the plot less
            # its cells was not what the labels and the colour bar take (a long word after short ones: a
            # cell 8 px wide where a fresh view's was 36). Measured with the plot free to take its room.
            self.plot.setMaximumSize(QtCore.QSizeF(UNLIMITED_PX, UNLIMITED_PX))
            self._lay_out_plot()
        over_w = self.plot.width() - self.view.width()    # axes and colour bar: fixed sizes
        over_h = self.plot.height() - self.view.height()
        layout = self.graphics.ci.layout
        left, top, right, bottom = layout.getContentsMargins()
        title_h = self.title.size().height() + layout.verticalSpacing()
        area = self.graphics.viewport().size()
        avail_w = area.width() - left - right - over_w - 2
        avail_h = area.height() - top - bottom - title_h - over_h - 2
        cell = min(avail_w / n_cols, avail_h / n_rows)
        top_axis = self.plot.getAxis("top")
        if self.square and hasattr(top_axis, "decide_rotation"):
            # Upright column words take height from square cells, which may then be too small for them
            # side by side: both layouts would hold, and which one showed depended on the sentence
            # before. Decide from the cells the words would leave lying flat; a matrix too large to fit
            # whole is zoomed, its cells too small for words side by side: upright there.
            # Upright words never take more than UPRIGHT_MAX_SHARE of the height they share with the
            # cells: in a short pane (a 720-pixel window with the step tables open) they took all of it,
            # and the heatmap showed its words and no cells; lying flat, fewer words show, over cells.
            shown_h = top_axis.height()
            flat_h = avail_h + shown_h - top_axis.extent(False)
            flat_cell = min(avail_w / n_cols, flat_h / n_rows)
            upright = ((flat_cell < MIN_FIT_CELL_PX or not top_axis.fit_side_by_side(flat_cell))
                       and top_axis.extent(True) <= UPRIGHT_MAX_SHARE * (flat_h + top_axis.extent(False)))
            top_axis.decide_rotation(upright)
            over_h += top_axis.extent(upright) - shown_h
            cell = min(avail_w / n_cols, (flat_h + top_axis.extent(False) - top_axis.extent(upright)) / n_rows)
        self.zoomable = 0 < cell < MIN_FIT_CELL_PX
        if self.zoomable or cell <= 0 or not self.square:
            size = QtCore.QSizeF(UNLIMITED_PX, UNLIMITED_PX)
        else:  # on a steady grid: the same pane must give the same layout whatever history led to it
            size = QtCore.QSizeF(steady(over_w + cell * n_cols), steady(over_h + cell * n_rows))
        # set whenever it differs at all: with a tolerance, a label axis 1 px wider (a written token's ›)
        # left the cells 0.1 px taller than a fresh view's, and the colour bar drawn otherwise
        if self.plot.maximumSize() != size:
            self.plot.setMaximumSize(size)
        # A pane made shorter than upright column words need left the plot's central item taller than
        # the pane (Qt never makes a graphics widget smaller than its least size), and the words lying
        # flat since did not give it the pane back: the cells' bottom was cut, unlike a fresh view's.
        # Its layout is made to forget the least size it cached before the labels changed (it would
        # until a later pass): narrower words had left the plot as wide as longer ones needed, past
        # the pane's edge, with the cells wider than a fresh view's (X11 walk, seed 66).
        central, pane = self.graphics.ci, self.graphics.range
        if central.geometry() != pane:
            central.layout.invalidate()
            central.setGeometry(pane)
            central.layout.activate()

    def _lay_out_plot(self) -> None:
        self.plot.layout.invalidate()
        self.graphics.ci.layout.invalidate()
        self.graphics.ci.layout.activate()
        self.plot.layout.activate()

    def fitted_area(self) -> QtCore.QSizeF | None:
        """The size of pane that holds the whole matrix at its present square cells, with its title,
        labels and colour bar and nothing more; None while it is zoomed (or its cells stretch)."""
        if self.zoomable or not self.square or not all(self.shape):
            return None
        plot = self.plot.maximumSize()
        if plot.width() >= UNLIMITED_PX:
            return None
        layout = self.graphics.ci.layout
        left, top, right, bottom = layout.getContentsMargins()
        title_h = self.title.size().height() + layout.verticalSpacing()
        return QtCore.QSizeF(plot.width() + left + right + 2, plot.height() + top + bottom + title_h + 2)

    def _frame(self, focus: int | None) -> None:
        """Show the whole matrix, or open zoomed in at the top left (or on the focused word). Cells
        that are not kept square zoom only along the side too crowded to read (a tall, narrow matrix
        keeps all its columns)."""
        n_rows, n_cols = self.shape
        if not n_rows or not n_cols:
            return
        self.plot.setMouseEnabled(self.zoomable, self.zoomable)
        self.view.setAspectLocked(self.zoomable and self.square)  # zoomed: the view fills the pane, square by its lock
        if not self.zoomable:
            self.view.setLimits(xMin=None, xMax=None, yMin=None, yMax=None, minXRange=None, minYRange=None)
            self.fit()
            return
        rect = self.view.boundingRect()
        # With square cells the whole matrix fills the pane in one direction only: let the view reach
        # that far beyond the matrix in the other, or Fit could not show it all.
        fit_scale = min(rect.width() / n_cols, rect.height() / n_rows)  # pixels per cell, everything shown
        pad_x = max(0.0, rect.width() / fit_scale - n_cols) / 2 if self.square else 0.0
        pad_y = max(0.0, rect.height() / fit_scale - n_rows) / 2 if self.square else 0.0
        self.view.setLimits(xMin=-0.5 - pad_x, xMax=n_cols - 0.5 + pad_x, yMin=-0.5 - pad_y, yMax=n_rows - 0.5 + pad_y,
                            minXRange=max(1.0, rect.width() / MAX_CELL_PX),
                            minYRange=max(1.0, rect.height() / MAX_CELL_PX))
        # Square cells in a pane shorter (or narrower) than a zoomed cell are as tall as the pane: one
        # whole row. Taller ones were stretched back to one row by the limits and left not square, a
        # range the view's own lock changed on the next update. The pane is measured as the lock
        # measures it, in whole pixels, and a cell is at least a pixel (a pane not yet laid out has none).
        pane = self.view.rect()
        cell = max(1.0, min(ZOOMED_CELL_PX, pane.width(), pane.height())) if self.square else ZOOMED_CELL_PX
        span_x = min(n_cols, pane.width() / cell)
        span_y = min(n_rows, pane.height() / cell)
        if not self.square:
            span_x = n_cols if rect.width() / n_cols >= MIN_FIT_CELL_PX else span_x
            span_y = n_rows if rect.height() / n_rows >= MIN_FIT_CELL_PX else span_y
        x0 = y0 = -0.5
        if focus is not None:
            x0 = min(max(-0.5, focus - span_x / 2), n_cols - 0.5 - span_x)
            y0 = min(max(-0.5, focus - span_y / 2), n_rows - 0.5 - span_y)
        self.view.setRange(xRange=(x0, x0 + span_x), yRange=(y0, y0 + span_y), padding=0)

    # --- moving ---------------------------------------------------------------------------------
    def fit(self) -> None:
        """Show the whole matrix."""
        n_rows, n_cols = self.shape
        if not n_rows or not n_cols:
            return
        rect = self.view.boundingRect()
        if not self.view.state["aspectLocked"] or rect.width() <= 0 or rect.height() <= 0:
            self.view.setRange(xRange=(-0.5, n_cols - 0.5), yRange=(-0.5, n_rows - 0.5), padding=0)
            return
        # square cells locked: ask for exactly the ranges that keep them square, centred on the matrix
        scale = min(rect.width() / n_cols, rect.height() / n_rows)
        span_x, span_y = rect.width() / scale, rect.height() / scale
        cx, cy = (n_cols - 1) / 2, (n_rows - 1) / 2
        self.view.setRange(xRange=(cx - span_x / 2, cx + span_x / 2), yRange=(cy - span_y / 2, cy + span_y / 2),
                           padding=0)

    def zoom(self, factor: float) -> None:
        """Zoom about the centre of the view: factor > 1 zooms in."""
        if self.zoomable:
            self.view.scaleBy((1 / factor, 1 / factor))

    def page(self, forward: bool, columns: bool) -> None:
        """Move the view by most of a screen of rows (or of columns)."""
        (x0, x1), (y0, y1) = self.view.viewRange()
        step = 0.8 * ((x1 - x0) if columns else (y1 - y0)) * (1 if forward else -1)
        self.view.translateBy(x=step if columns else 0, y=0 if columns else step)

    def keep_in_sight(self, index: int, role: str) -> None:
        """Pan just enough that the focused word's row (looking) or column (looked at) is on screen."""
        if not self.zoomable:
            return
        (x0, x1), (y0, y1) = self.view.viewRange()
        if role == LOOKING and not y0 + 0.5 <= index <= y1 - 0.5:
            self.view.translateBy(y=index - (y0 + y1) / 2)
        elif role == LOOKED_AT and not x0 + 0.5 <= index <= x1 - 0.5:
            self.view.translateBy(x=index - (x0 + x1) / 2)

    def handle_key(self, key: QtCore.Qt.Key, shift: bool) -> bool:
        """+ / − zoom, 0 fits, Page Up / Down move (with Shift: sideways); False for any other key."""
        if not self.zoomable:
            return False
        keys = QtCore.Qt.Key
        if key in (keys.Key_Plus, keys.Key_Equal, keys.Key_Minus):
            self.zoom(0.8 if key == keys.Key_Minus else 1.25)
        elif key == keys.Key_0:
            self.fit()
        elif key in (keys.Key_PageUp, keys.Key_PageDown):
            self.page(forward=key == keys.Key_PageDown, columns=shift)
        else:
            return False
        return True
