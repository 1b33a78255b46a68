"""One matrix drawn as coloured cells: the plot behind the main heatmap and every lesson's heatmap.

Rows and columns carry word (or feature) labels thinned so none overlap, the focused word's always
drawn; a colour bar; each cell's value written in black or white, whichever reads on its colour,
while the values fit their cells; and masked cells hatched and left uncoloured, since a masked cell
is not a zero (its score is −∞, its weight 0 only because it was forbidden). A masked cell may carry
a word ("−∞", "0") saying what the engine holds there.

Cells are square (the main heatmap) or stretch to fill the pane (the lessons, set side by side).
When the whole matrix would give cells under MIN_FIT_CELL_PX, the plot opens zoomed in (wheel,
drag, + / − / 0, Page Up / Down) and keeps the focused row or column in sight.

The plot knows nothing of the controller: it is handed a matrix and its labels, so the same class
shows weights, scores, differences, rectangular cross-attention and positional encodings.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import LOOKED_AT, LOOKING
from ..engine.row_matrix import RowMatrix
from . import theme
from .cell_colours import MatrixColours, WidestColours, hidden_cells, value_span
from .cell_image import CellImage
from .colour_bar import ColourBar
from .hatch import MaskHatchItem
from .matrix_frame import MatrixFrame, SquareZoomViewBox
from .message_label import message_label
from .plot_style import make_matrix, refit_scene_after_layout
from .resting_pointer import RestingPointer
from .text_layer import Label, TextLayer
from .token_axis import TokenAxis

MIN_CELL_PX_FOR_VALUES = (30.0, 16.0)  # write values in cells at least this wide and high ...
VALUE_PADDING_PX = 4.0                  # ... and wider than the widest value by this much
MAX_WRITTEN_CELLS = 40 * 40             # larger matrices are never written: unreadable, and slow to lay out
REGION_CELLS = 1 << 20                  # larger matrices are coloured only where in view (cell_colours.py)
COLOUR_BAR_TEXT_PX = 64                 # one width for every span, so the plot's size holds
TITLE_SLACK_PX = 8                      # the title label's own margins


class MatrixPlot(QtWidgets.QWidget):
    """A matrix as square coloured cells with labels, a colour bar, values and hatched masked cells.

    `shown_matrix()` is exactly what it was given (−∞ kept); `image.image` is what is coloured (NaN
    where masked)."""

    cell_hovered = QtCore.Signal(object, object)  # (row, column) or None, and the mouse's screen position
    framed = QtCore.Signal(bool)  # after sizing: whether the matrix is too large to show whole (zoomable)

    def __init__(self, parent: QtWidgets.QWidget | None = None, *, min_size: tuple[int, int] | None = (220, 200),
                 title_size: str = "9pt", colormap: str = theme.DEFAULT_COLORMAP, square_cells: bool = False,
                 cell_tips: bool = True):
        super().__init__(parent)
        self._shown: np.ndarray | None = None
        self._tip = ""  # the text of the cell's tooltip this plot showed last
        self._mask: np.ndarray | None = None
        self._masked: np.ndarray | None = np.zeros((0, 0), dtype=bool)  # None: a large matrix (cell_colours.py)
        self._source: MatrixColours | None = None
        self._widest = WidestColours()  # a decoder's shorter text so far is coloured as a corner of it
        self._region_key: tuple | None = None
        self._written: dict[tuple[int, int], str] = {}
        self._widest_value = QtCore.QSizeF()
        self._value_format, self._masked_text = "{:.2f}", ""
        self._colormap = colormap
        self._title_size = title_size
        self._title = ""
        self._focus: tuple[int | None, int | None] = (None, None)
        self._focused_words: tuple[int | None, int | None] = (None, None)  # drawn as focused on (left, top)
        self._outlined: list[tuple[int, int]] = []

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.background())
        self.graphics.setFocusPolicy(QtCore.Qt.FocusPolicy.ClickFocus)  # + / − / 0 after a click
        self.graphics.installEventFilter(self)
        RestingPointer(self.graphics)
        if min_size is not None:
            self.graphics.setMinimumSize(*min_size)
        self.left_axis = TokenAxis("left")
        self.top_axis = TokenAxis("top")
        # the title has its own row: inside the plot it would set the plot's least width, and a short
        # sentence's square matrix would then drift away from its labels
        self.title_item = self.graphics.addLabel("", row=0, col=0)
        self.plot = self.graphics.addPlot(row=1, col=0, axisItems={"left": self.left_axis, "top": self.top_axis},
                                          viewBox=SquareZoomViewBox(enableMenu=False))  # no menu: never shown
        make_matrix(self.plot)
        self.view = self.plot.getViewBox()
        self.view.setAspectLocked(False)  # square cells come from the plot's size (see MatrixFrame)
        self.view.disableAutoRange()  # the range is ours: the value labels' generous bounds must not widen it
        self.graphics.ci.layout.setAlignment(self.plot, QtCore.Qt.AlignmentFlag.AlignCenter)

        self.hatch = MaskHatchItem()
        self.hatch.setZValue(5)  # over the image, whose masked cells are transparent
        self.plot.addItem(self.hatch)
        self.image = CellImage(self.cell_hovered.emit)
        self.image.setTransform(QtGui.QTransform().translate(-0.5, -0.5))
        self.plot.addItem(self.image)
        self.values = TextLayer(anchor=(0.5, 0.5), point_size=9)
        self.values.setZValue(6)
        self.plot.addItem(self.values)
        self.masked_values = TextLayer(anchor=(0.5, 0.5), point_size=9)
        self.masked_values.setZValue(6)
        self.plot.addItem(self.masked_values)
        self.row_highlight = self._highlight_rect()
        self.col_highlight = self._highlight_rect()
        self._outline_rects: list[QtWidgets.QGraphicsRectItem] = []
        self.colorbar = ColourBar(self.image, pg.colormap.get(colormap), width=16)
        self.colorbar.insert_into(self.plot)
        self.colorbar.axis.setWidth(COLOUR_BAR_TEXT_PX)
        self.colorbar.axis.setStyle(hideOverlappingLabels=False)  # a label at the very top (e.g. "row max") stays
        self.frame = MatrixFrame(self.graphics, self.title_item, self.plot, square=square_cells)
        self.message = message_label()

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.message, 1)
        self.view.sigResized.connect(self._on_resized)
        self.view.sigRangeChanged.connect(lambda *_: self._update_value_visibility())
        self.view.sigRangeChanged.connect(self._draw_region)
        if cell_tips:
            self.cell_hovered.connect(self._show_cell_tip)

    # --- what is shown --------------------------------------------------------------------------
    def shown_matrix(self) -> np.ndarray | None:
        """The matrix on screen, exactly as it was given (−∞ where masked); None while a message shows."""
        return self._shown

    def row_labels(self) -> list[str]:
        return self.left_axis.labels()

    def column_labels(self) -> list[str]:
        return self.top_axis.labels()

    def title(self) -> str:
        """The whole title (on screen it ends in … where the pane is narrower)."""
        return self._title

    def levels(self) -> tuple[float, float]:
        return tuple(float(x) for x in self.colorbar.levels())

    def masked_cells(self) -> np.ndarray:
        return hidden_cells(self._shown, self._mask) if self._masked is None else self._masked.copy()

    def is_masked(self, row: int, col: int) -> bool:
        """Whether cell (row, col) is drawn as masked."""
        if self._masked is not None:
            return bool(self._masked[row, col])
        return not math.isfinite(self._shown[row, col]) or (self._mask is not None and bool(self._mask[row, col]))

    def written_text(self, row: int, col: int) -> str:
        """What is written in a cell when the values fit: its value, or the masked cells' word."""
        return self._written.get((row, col), "")

    def values_written(self) -> bool:
        """Whether numbers are written in the cells (they are while they fit)."""
        return bool(self._written) and self.values.isVisible()

    def outlined_cells(self) -> list[tuple[int, int]]:
        return list(self._outlined)

    def focus(self) -> tuple[int | None, int | None]:
        """The framed row (the word looking) and column (the word looked at)."""
        return self._focus

    def cell_px(self) -> float:
        """The on-screen size of one cell (its shorter side), in pixels."""
        return self.frame.cell_px()

    def visible_cells(self) -> tuple[range, range]:
        """The rows and columns (wholly or partly) on screen."""
        return self.frame.visible_cells()

    def is_zoomable(self) -> bool:
        """Whether the matrix is too large to show whole at a readable size, so it zooms and pans."""
        return self.frame.zoomable

    # --- drawing --------------------------------------------------------------------------------
    def show_matrix(self, matrix: np.ndarray, row_labels: Sequence[str], column_labels: Sequence[str], *,
                    title: str = "", mask: np.ndarray | None = None, levels: tuple[float, float] | None = None,
                    colours: np.ndarray | None = None, by_row: bool = False, colormap: str | None = None,
                    masked_text: str = "", value_format: str = "{:.2f}",
                    axis_titles: tuple[str, str] | None = None, causal: bool = True) -> None:
        """Draw `matrix` (rows × columns). Cells that are not finite, or True in `mask`, are masked:
        uncoloured, hatched, and carrying `masked_text`; those after the diagonal are hatched as a causal
        mask's unless not `causal` (an encoder's sliding window, masked on both sides). The colours map
        `colours` when given (the same shape, e.g. a difference, NaN where uncoloured), else the values,
        each row over its largest with `by_row`; `levels` fixes their scale (e.g. (0, 1) for weights, or
        one scale shared by heatmaps set side by side), by default the span of the finite values. `axis_titles` (rows,
        columns) are kept when None. A matrix of more than REGION_CELLS cells is kept as it was given
        and coloured only where it is in view (cell_colours.py)."""
        self._drop_tip()
        if not isinstance(matrix, RowMatrix):  # one made by the rows drawn stays so (engine/row_matrix.py)
            matrix = np.asarray(matrix)
        if not np.issubdtype(matrix.dtype, np.floating):
            matrix = matrix.astype(np.float64)
        region = colours is None and matrix.size > REGION_CELLS
        if region or colours is not None:
            self._widest.clear()
        self._source = MatrixColours(matrix, mask, by_row) if colours is None else None
        if not region:
            corner = self._widest.corner(matrix, mask, by_row) if colours is None else None
            if corner is not None:
                masked, colours = corner
            elif colours is None:
                masked, colours = hidden_cells(matrix, mask), self._source.whole()
                self._widest.keep(matrix, mask, by_row, masked, colours)
            else:
                masked = hidden_cells(matrix, mask)
                colours = np.where(masked, np.nan, colours)
        levels = tuple(levels) if levels is not None else (self._source.span() if region else value_span(colours))
        reshaped = self._shown is None or self._shown.shape != matrix.shape
        self._shown, self._mask = matrix, mask
        self._masked = None if region else masked
        self._value_format, self._masked_text = value_format, masked_text
        self.message.hide()
        self.graphics.show()
        background = theme.background()
        if self.graphics.backgroundBrush().color() != background:  # follows a light/dark switch of the system
            self.graphics.setBackground(background)
        if colormap is not None and colormap != self._colormap:
            self._colormap = colormap
            self.colorbar.setColorMap(pg.colormap.get(colormap))
        self.image.matrix_shape = matrix.shape
        self._region_key = None
        if region:
            self._draw_region()
        else:
            self._place_image(0, 0, 1)
            self.image.setImage(colours, autoLevels=False)
        if tuple(self.colorbar.levels()) != levels:  # new levels redraw the colour bar and its axis
            self.colorbar.setLevels(levels)
        self.hatch.color = theme.muted()
        self.hatch.set_mask(self._hatched(matrix, mask) if region else (masked if masked.any() else None), causal)
        widest_before = self.top_axis.widest_px()
        self.left_axis.set_tokens(row_labels)
        self.top_axis.set_tokens(column_labels)
        if axis_titles is not None:
            self._set_axis_titles(axis_titles)
        title_resized = False
        if title != self._title:
            self._title = title
            title_resized = self._fit_title()
        if region:
            self._write_values(None, None, None, "", value_format)
        else:
            self._write_values(matrix, colours, masked, masked_text, value_format)
        self.set_outlined([])
        if reshaped or title_resized or self.top_axis.widest_px() != widest_before:
            # fitted again for new words of the same count too: whether the column words stand upright
            # is decided from their width, and a longer word ("mice" typed on to "miceet") left them
            # lying flat where a view made for it stood them up, their room no longer what they need;
            # and for a title that takes another height (a title set where there was none), as the
            # cells share the pane's height with it
            self._on_resized(force=reshaped)
        self._show_focus()

    @staticmethod
    def _hatched(matrix: np.ndarray, mask: np.ndarray | None) -> np.ndarray | None:
        """What a large matrix's hatching covers: its mask itself (the same object from one matrix to the
        next, so the hatch keeps its runs) unless some cell outside it is not finite too. The engine's
        matrices made by rows (a real model's scores) are finite outside their mask, and are not read
        through for it."""
        if isinstance(matrix, RowMatrix):
            return mask
        extra = any(_unmasked_not_finite(matrix[start:start + 512], None if mask is None else mask[start:start + 512])
                    for start in range(0, matrix.shape[0], 512))
        return hidden_cells(matrix, mask) if extra else mask

    def _place_image(self, row: int, col: int, step: int) -> None:
        """Put the image's pixel (0, 0) on cell (row, col), each pixel `step` cells a side."""
        transform = QtGui.QTransform().translate(col - 0.5, row - 0.5).scale(step, step)
        if self.image.transform() != transform:
            self.image.setTransform(transform)

    def _draw_region(self, *_) -> None:
        """A large matrix: colour only the cells in view, pooled to about one pixel a block of cells."""
        if self._shown is None or self._masked is not None:
            return
        n_rows, n_cols = self._shown.shape
        (x0, x1), (y0, y1) = self.view.viewRange()
        width, height = max(1.0, self.view.width()), max(1.0, self.view.height())
        ratio = self.graphics.devicePixelRatioF()
        step = max(1, int(min((x1 - x0) / (width * ratio), (y1 - y0) / (height * ratio))))
        r0 = max(0, math.floor(y0 + 0.5)) // step * step
        c0 = max(0, math.floor(x0 + 0.5)) // step * step
        r1, c1 = min(n_rows, math.ceil(y1 + 0.5)), min(n_cols, math.ceil(x1 + 0.5))
        if r1 <= r0 or c1 <= c0:
            r0, r1, c0, c1 = 0, 1, 0, 1
        key = (id(self._source), r0, r1, c0, c1, step)
        if key == self._region_key:
            return
        self._region_key = key
        self._place_image(r0, c0, step)
        self.image.setImage(self._source.pooled((r0, r1), (c0, c1), step), autoLevels=False)

    def _set_axis_titles(self, titles: tuple[str, str]) -> None:
        for side, text in zip(("left", "top"), titles, strict=True):
            axis = self.plot.getAxis(side)
            if axis.labelText != text or axis.label.isVisible() != bool(text):
                axis.setLabel(text)
                axis.showLabel(bool(text))
                axis.resizeEvent()  # centred again: pyqtgraph places a label only when its axis resizes

    def _write_values(self, matrix: np.ndarray, colours: np.ndarray, masked: np.ndarray, masked_text: str,
                      value_format: str) -> None:
        """Each cell's value in black or white, whichever reads better on the cell's colour; masked
        cells' word in the text colour on a plain patch, so the hatching does not cross it."""
        self._written = {}
        values, masked_labels = [], []
        if matrix is not None and matrix.size <= MAX_WRITTEN_CELLS:
            low, high = self.colorbar.levels()
            fraction = np.clip((np.nan_to_num(colours, nan=low) - low) / ((high - low) or 1.0), 0.0, 1.0)
            mapped = pg.colormap.get(self._colormap).map(fraction.ravel(), mode="float")
            light = theme.is_light_rgb(mapped[:, 0], mapped[:, 1], mapped[:, 2]).tolist()
            ink = {True: QtGui.QColor("black"), False: QtGui.QColor("white")}
            masked_ink = theme.foreground()
            cols = matrix.shape[1]
            # plain Python values: formatting a NumPy scalar per cell costs several times more
            for k, (value, hidden, on_light) in enumerate(zip(matrix.ravel().tolist(), masked.ravel().tolist(),
                                                             light, strict=True)):
                row, col = divmod(k, cols)
                if hidden:
                    if masked_text:
                        self._written[row, col] = masked_text
                        masked_labels.append(Label(col, row, masked_text, masked_ink))
                    continue
                text = formatted(value_format, value)
                self._written[row, col] = text
                values.append(Label(col, row, text, ink[on_light]))
        self.values.set_labels(values)
        self.masked_values.backdrop = theme.background()
        self.masked_values.set_labels(masked_labels)
        metrics = QtGui.QFontMetricsF(self.values.font)  # both layers share one font size
        widest = max(map(metrics.horizontalAdvance, set(self._written.values())), default=0.0)
        self._widest_value = QtCore.QSizeF(widest, metrics.height())
        self._update_value_visibility()

    def _update_value_visibility(self, *_) -> None:
        if self._shown is None:
            return
        width, height = self.frame.cell_size()
        fits = (width >= max(MIN_CELL_PX_FOR_VALUES[0], self._widest_value.width() + VALUE_PADDING_PX)
                and height >= max(MIN_CELL_PX_FOR_VALUES[1], self._widest_value.height()))
        self.values.setVisible(fits)
        self.masked_values.setVisible(fits and self._masked_text != "" and self._masked is not None
                                      and bool(self._masked.any()))

    def cell_tip(self, row: int, col: int) -> str:
        """A cell's row and column labels and its value, in full: the words a small cell has no room for."""
        if self._shown is None:
            return ""
        if self.is_masked(row, col):
            value = f"masked, {self._masked_text}" if self._masked_text else "masked"
        else:
            value = formatted(self._value_format, self._shown[row, col])
        return f"{self.left_axis.labels()[row]}, {self.top_axis.labels()[col]}: {value}"

    def _show_cell_tip(self, cell, screen_pos) -> None:
        if cell is None or screen_pos is None:
            QtWidgets.QToolTip.hideText()
        else:
            self.show_tip(screen_pos, self.cell_tip(*cell))

    def show_tip(self, screen_pos: QtCore.QPointF, text: str) -> None:
        """A cell's tooltip at the mouse, taken down when the plot draws another matrix (_drop_tip)."""
        self._tip = text
        QtWidgets.QToolTip.showText(QtCore.QPoint(int(screen_pos.x()), int(screen_pos.y())), text, self.graphics)

    def _drop_tip(self) -> None:
        """The cell's tooltip goes with the matrix it was about: a new one (a decoder's next text so far
        under a pointer that stays still) kept a tip on another cell than the readout and the focus named.
        Another widget's tooltip stays."""
        if self._tip and QtWidgets.QToolTip.isVisible() and QtWidgets.QToolTip.text() == self._tip:
            QtWidgets.QToolTip.hideText()
        self._tip = ""

    def show_message(self, text: str) -> None:
        """A line of text in place of the plot (nothing to draw, and why)."""
        self._shown = None
        self.message.setText(text)
        self.message.show()
        self.graphics.hide()
        self.frame.zoomable = False
        self.framed.emit(False)  # nothing to zoom: no Fit button left from the last matrix

    # --- focus and outlines ---------------------------------------------------------------------
    def set_focus(self, row: int | None = None, col: int | None = None, *,
                  words: tuple[int | None, int | None] | None = None) -> None:
        """Frame the focused word's row (the word looking) or column (the word looked at). `words`
        names the labels drawn as focused on the (left, top) axes, by default the framed ones."""
        self._focus = (row, col)
        self._focused_words = words if words is not None else (row, col)
        self._show_focus()
        n_rows, n_cols = self.frame.shape
        if row is not None and row < n_rows:
            self.frame.keep_in_sight(row, LOOKING)
        if col is not None and col < n_cols:
            self.frame.keep_in_sight(col, LOOKED_AT)

    def _show_focus(self) -> None:
        rows, cols = self._shown.shape if self._shown is not None else (0, 0)
        row, col = self._focus
        left, top = self._focused_words
        self.left_axis.set_focus(left)
        self.top_axis.set_focus(top)
        self._show_frames()
        # both frames sit on the focused word, only the framed one shows: a change of role just swaps them
        row_at, col_at = row if row is not None else left, col if col is not None else top
        if row_at is not None and row_at < rows:
            self.row_highlight.setRect(-0.5, row_at - 0.5, cols, 1)
        if col_at is not None and col_at < cols:
            self.col_highlight.setRect(col_at - 0.5, -0.5, 1, rows)

    def _show_frames(self) -> None:
        """The focus's frame and the outlined cells show while the pane has room for cells. With none (a
        pane too short for one row), a frame is a line of no height in the view: a repaint of its place
        left it out, and a full repaint drew it (offscreen walk, seed 109)."""
        rows, cols = self._shown.shape if self._shown is not None else (0, 0)
        row, col = self._focus
        room = self.view.width() >= 1 and self.view.height() >= 1
        self.row_highlight.setVisible(room and row is not None and row < rows)
        self.col_highlight.setVisible(room and col is not None and col < cols)
        for rect in self._outline_rects:
            rect.setVisible(room)

    def set_outlined(self, cells: Sequence[tuple[int, int]]) -> None:
        """Draw a highlight frame around these (row, column) cells, e.g. the pair a lesson talks about."""
        cells = list(cells)
        if cells == self._outlined:
            return
        self._outlined = cells
        for rect in self._outline_rects:
            self.plot.removeItem(rect)
        self._outline_rects = []
        for row, col in cells:
            rect = self._highlight_rect()
            rect.setRect(col - 0.5, row - 0.5, 1, 1)
            self._outline_rects.append(rect)
        self._show_frames()

    def _highlight_rect(self) -> QtWidgets.QGraphicsRectItem:
        rect = QtWidgets.QGraphicsRectItem()
        pen = QtGui.QPen(theme.highlight(), 2.5)
        pen.setCosmetic(True)
        rect.setPen(pen)
        rect.setZValue(10)
        rect.setVisible(False)
        self.plot.addItem(rect)
        return rect

    # --- zoom and pan ---------------------------------------------------------------------------
    def _fit_title(self) -> bool:
        """Each line of the title (lines end at <br>) cut with … to the pane: a real model's long title
        ran past the edge of a heatmap beside the model view. Cut line by line, as two lines joined
        were cut after the first ("…, not added (…"). Whether the title's height changed."""
        font = QtGui.QFont()
        font.setPointSizeF(float(self._title_size.removesuffix("pt")))
        left, _top, right, _bottom = self.graphics.ci.layout.getContentsMargins()
        width = max(40, int(self.graphics.viewport().width() - left - right - TITLE_SLACK_PX))
        metrics = QtGui.QFontMetrics(font)
        # each line's text escaped: a token's label ("<s>", BART's) is not markup (it struck the title through)
        elide = QtCore.Qt.TextElideMode.ElideRight
        shown = "<br>".join(html.escape(metrics.elidedText(line, elide, width), quote=False)
                            for line in self._title.split("<br>"))
        if shown == self.title_item.text:
            return False
        height = self.title_item.minimumHeight()
        self.title_item.setText(shown, color=theme.foreground(), size=self._title_size)  # re-lays out the scene
        refit_scene_after_layout(self.graphics)  # a longer title before this one held the scene too wide
        return self.title_item.minimumHeight() != height

    def _on_resized(self, *_, force: bool = False) -> None:
        self._fit_title()
        row, col = self._focus
        self.frame.update(self._shown.shape if self._shown is not None else (0, 0),
                          row if row is not None else col, force)
        self._draw_region()
        self._update_value_visibility()
        self._show_frames()
        self.framed.emit(self.frame.zoomable)

    def fit(self) -> None:
        """Show the whole matrix."""
        self.frame.fit()

    def make_fit_button(self) -> QtWidgets.QToolButton:
        """A "Fit" button that shows the whole matrix, there only while the plot is zoomed in: the
        one sign, beside the cut-off labels, that the matrix goes on past the pane.

        Its room is kept while it is hidden. Were it not, a pane on the edge of zooming in showed and
        hid it without end: the button widened the pane's least size, the splitter gave the pane that
        width, the wider matrix needed no zoom, the button went, and the pane narrowed again."""
        button = QtWidgets.QToolButton()
        button.setText("Fit")
        policy = button.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        button.setSizePolicy(policy)
        button.setToolTip("Show the whole matrix (key 0); wheel or + / − zoom, drag or Page Up / Down moves")
        button.clicked.connect(self.fit)
        if not self.frame.zoomable:
            button.hide()  # (not setVisible(True): the button has no parent yet, and would open as a window)
        self.framed.connect(button.setVisible)
        return button

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if watched is self.graphics and event.type() == QtCore.QEvent.Type.Resize:
            QtCore.QTimer.singleShot(0, self, self._on_resized)  # after the scene took its new size
        if watched is self.graphics and event.type() == QtCore.QEvent.Type.KeyPress:
            shift = bool(event.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier)
            if self.frame.handle_key(event.key(), shift):
                return True
        return super().eventFilter(watched, event)

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        """What an image export renders: the plot with its labels and colour bar."""
        return self.graphics

    def fitted_size(self) -> QtCore.QSize | None:
        """This widget's size once its plot holds the whole matrix at the present cells and no more (a
        figure of a short, wide matrix: no band of empty pane under it), yet as tall as the colour bar's
        label; None while it is zoomed."""
        area = self.frame.fitted_area()
        if area is None:
            return None
        pane = self.graphics.viewport().size()
        short = max(0.0, self.colorbar.label_length() - self.view.height())
        return QtCore.QSize(self.width() - pane.width() + math.ceil(area.width()),
                            self.height() - pane.height() + math.ceil(area.height() + short))

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        theme.set_graphics_background(self.graphics, color)


def formatted(value_format: str, value: float) -> str:
    """A cell's value as `value_format` writes it, a value that rounds to zero without a sign: a
    difference of −0.0004 read "−0.00", as though something had changed."""
    text = value_format.format(value)
    return value_format.format(0.0).lstrip("+") if float(text) == 0 else text


def symmetric_levels(*matrices: np.ndarray) -> tuple[float, float]:
    """(−m, m) for the largest finite |value| m across `matrices`: a diverging map centred on 0."""
    m = max((float(np.abs(a[np.isfinite(a)]).max(initial=0.0)) for a in matrices), default=0.0)
    return (-m, m) if m > 0 else (-1.0, 1.0)


def shared_levels(*matrices: np.ndarray) -> tuple[float, float]:
    """One colour scale spanning the finite values of all `matrices` (to set heatmaps side by side)."""
    finite = [np.asarray(a)[np.isfinite(a)] for a in matrices]
    return value_span(np.concatenate(finite) if finite else np.empty(0))


def _unmasked_not_finite(block: np.ndarray, mask: np.ndarray | None) -> bool:
    """Whether a cell of `block` outside `mask` is not finite. A finite sum says none is, in one pass
    (an 8,192-token layer's weights: 60 → 19 ms); only a block whose sum is not finite (an infinity or
    NaN in it, or numbers large enough to overflow) is looked through cell by cell."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow or ∞ − ∞ only says: look closer
        if np.isfinite(block.sum()):
            return False
    return bool((~np.isfinite(block) & (True if mask is None else ~mask)).any())
