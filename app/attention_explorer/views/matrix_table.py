"""One matrix of a step as a table: named rows and columns, cells coloured by value, filled in up to a
count (the animation), and the cells a hovered result came from outlined.

A QTableView over a QAbstractTableModel (headers, hit-testing, hover signals), whose viewport paints
its cells in one pass instead of one delegate call per cell: a step's tables hold hundreds of cells,
and calling into Python per cell costs more than drawing it. The animation repaints only the cell
it just filled and the cells whose outline changed. A cell's text and colour are made when it is
first drawn: a real model's 8,192-token weights are 67 million cells, of which a screen shows a few
hundred (formatting every cell of two 512 × 512 tables took 400 ms an action).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..engine.cell_arithmetic import fmt
from ..engine.row_matrix import RowMatrix
from ..engine.steps import StepTable
from . import theme
from .largest_first import take_largest

Mark = tuple[int | None, int | None]  # a row (col None), a column (row None) or a cell
CELL_PADDING = 8   # a step's three tables side by side fit a 1400-pixel window
ROW_PADDING = 4    # ... and, with the W_O step's eight rows, its two-fifths of a 900-pixel-high one
SHADES = 256  # colours per colour map: finer steps than the eye tells apart in a table cell
FOCUS_REACH_PX = 2  # the focus frame's 2-pixel pen reaches this far past its band's edge
MEASURED_CELLS = 64 * 64  # up to this many cells a column is as wide as its widest text; beyond, every
                          # column as the widest the table's numbers can write, not measured one by one


def _grid_color() -> QtGui.QColor:
    """A quarter of the way from the background to the text colour, opaque (blended lines draw slowly)."""
    back, fore = theme.background().getRgbF()[:3], theme.foreground().getRgbF()[:3]
    return QtGui.QColor.fromRgbF(*(0.75 * b + 0.25 * f for b, f in zip(back, fore, strict=True)))


@lru_cache(maxsize=8)
def _shades(colormap: str) -> tuple[list[QtGui.QColor], list[QtGui.QColor]]:
    """The colour map in SHADES steps, with the text colour that reads on each: looked up per cell
    rather than computed per cell, so a new matrix costs no QColor work."""
    rgba = pg.colormap.get(colormap).map(np.linspace(0.0, 1.0, SHADES), mode="byte")
    fills = [QtGui.QColor(int(r), int(g), int(b)) for r, g, b, _a in rgba]
    return fills, [theme.readable_text_on(c) for c in fills]


def value_levels(values: np.ndarray, key: str, found: tuple[float, float, bool] | None = None
                 ) -> tuple[float, float]:
    """The range the colour map spans: 0–1 for weights (comparable across rows), else the finite span
    (`found`: finite_range of the values, when it is known already)."""
    if key == "weights":
        return 0.0, 1.0
    low, high, _infinite = found or finite_range(values)
    if low > high:
        return -0.5, 0.5
    return (low - 0.5, high + 0.5) if high - low < 1e-12 else (low, high)


def finite_range(values: np.ndarray) -> tuple[float, float, bool]:
    """The smallest and largest finite value (inf, −inf when none) and whether any is infinite: a
    block of rows at a time, so a large table is never copied whole. A matrix made by rows (a long text's
    scores) is read in its own blocks, each while it is fresh in the caches: joined into bands first,
    they were copied and read from main memory (154 ms of a layer change at 8,192 tokens). What it
    found is kept in its memo, for the same numbers shown again (RowMatrix)."""
    memo = values.memo if isinstance(values, RowMatrix) else None
    if memo is not None and "finite_range" in memo:
        return memo["finite_range"]
    low, high, infinite = np.inf, -np.inf, False
    band = max(1, (1 << 22) // max(values.shape[1], 1))
    blocks = values.blocks() if isinstance(values, RowMatrix) else (
        values[start:start + band] for start in range(0, values.shape[0], band))
    for block in blocks:
        finite = np.isfinite(block)
        if not finite.all():
            infinite = infinite or bool(np.isinf(block).any())  # (NaN is neither)
            block = block[finite]  # the finite cells side by side: plain reductions, twice as fast as masked ones
        if block.size:
            low, high = min(low, float(block.min())), max(high, float(block.max()))
    if memo is not None:
        memo["finite_range"] = (low, high, infinite)
    return low, high, infinite


def widest_text(found: tuple[float, float, bool]) -> str:
    """A text at least as wide as any cell of values of finite_range `found` writes: the widest number
    its sign and digits allow ("−88.88" for values from −12.5 to 3), found without formatting a cell."""
    low, high, _infinite = found
    if low > high:
        return "−∞"
    big = max(abs(low), abs(high))
    return ("−" if low < 0 else "") + "8" * len(str(int(big))) + ".88"


def longest_cells(values: np.ndarray, count: int = 3) -> np.ndarray:
    """(count or fewer, columns): in each column, the rows of the cells whose texts (cell_arithmetic.fmt)
    are longest, from the numbers' sign, digits and decimals, without formatting a cell (a scrubber
    step formatted every cell of its n × 64 tables to measure them: 12 ms of it)."""
    with np.errstate(all="ignore"):
        magnitude = np.abs(values.astype(np.float64))
        hundredths = np.rint(magnitude * 100)  # what two decimals keep
        whole, last_two = _hundreds(hundredths)
        digits = np.floor(np.log10(np.maximum(whole, 1))) + 1
        decimals = np.where(last_two == 0, 0, np.where(last_two % 10 == 0, 2, 3))  # ".5", ".25" (point included)
        length = ((values < 0) & (hundredths > 0)) + digits + decimals  # "−0.001" shows as "0"
        # "−∞", "∞", "nan": as long as they are written (an ∞ counted as two was picked over a 10)
        length = np.where(np.isfinite(values), length, np.where(np.isnan(values), 3, np.where(values < 0, 2, 1)))
    return take_largest(length, count, axis=0)  # a sort of every column took a fifth of this function


def _hundreds(hundredths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """hundredths // 100 and hundredths % 100 of whole, non-negative numbers: a division and a product,
    put right where the division rounded across a whole hundred. NumPy's // and % of floats take 25
    times as long (two of them were 0.2 ms of a 64 × 64 step table); past 2⁵³, where a product may be
    rounded, those are used. Infinities give NaN, which longest_cells does not read."""
    whole = np.floor(hundredths / 100)
    last_two = hundredths - whole * 100
    under, over = last_two < 0, last_two >= 100
    whole[under] -= 1
    last_two[under] += 100
    whole[over] += 1
    last_two[over] -= 100
    big = (hundredths >= 2.0 ** 53) & (hundredths < np.inf)  # (an infinity's are not read)
    if big.any():
        whole[big], last_two[big] = hundredths[big] // 100, hundredths[big] % 100
    return whole, last_two


class MatrixModel(QtCore.QAbstractTableModel):
    """Texts and colours are made when a cell is drawn, each distinct value formatted once."""

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.table: StepTable | None = None
        self._texts: dict[float, str] = {}
        self._levels = (0.0, 1.0)
        self.found: tuple[float, float, bool] | None = None  # finite_range of a large table's values
        self._fills: list[QtGui.QColor] = []
        self._inks: list[QtGui.QColor] = []
        self._masked_fill = QtGui.QColor()
        self._masked_ink = QtGui.QColor()
        self._filled = 0          # cells shown, in reading order
        self._by_row = False      # fill whole rows at a time (softmax)
        self._marks: tuple[Mark, ...] = ()
        self._colours: tuple | None = None  # (colour map, by row, muted colour) the texts were prepared with

    # --- content --------------------------------------------------------------------------------
    def shows(self, table: StepTable, colormap: str, by_row: bool) -> bool:
        """Whether `table` is on show already, complete, unmarked and in these colours: an edit of
        the sentence leaves some tables as they were (W_O never changes), and those need no work."""
        old = self.table
        return (old is not None and self._colours == (colormap, by_row, theme.muted().rgba())
                and self._filled == old.values.size and not self._marks
                and (old.key, old.title, old.rows, old.cols) == (table.key, table.title, table.rows, table.cols)
                and (old.values is table.values or (table.values.size <= MEASURED_CELLS
                                                    and np.array_equal(old.values, table.values))))

    def set_table(self, table: StepTable, colormap: str, by_row: bool = False) -> None:
        """Show `table`, complete. A matrix of the same shape (the usual case while typing) only
        updates the cells and labels: a model reset would make the view lay everything out again."""
        same_shape = self.table is not None and self.table.values.shape == table.values.shape
        same_labels = same_shape and (self.table.rows, self.table.cols) == (table.rows, table.cols)
        if not same_shape:
            self.beginResetModel()
        self.table, self._by_row, self._marks = table, by_row, ()
        self._colours = (colormap, by_row, theme.muted().rgba())
        if table.key == "weights":  # softmax's own: between 0 and 1, nothing to look through
            self.found = (0.0, 1.0, False)
        else:
            self.found = finite_range(table.values)
        self._levels = value_levels(table.values, table.key, self.found)
        self._fills, self._inks = _shades(colormap)
        self._masked_fill = QtGui.QColor(theme.muted())
        self._masked_fill.setAlphaF(0.18)
        self._masked_ink = theme.foreground()  # read once: a causal table's masked half asked per cell
        self._texts = {}
        self._filled = table.values.size
        if not same_shape:
            self.endResetModel()
            return
        rows, cols = table.values.shape
        self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, cols - 1))
        if not same_labels:  # another head or layer of the same text: its headers would only be measured again
            self.headerDataChanged.emit(QtCore.Qt.Orientation.Horizontal, 0, cols - 1)
            self.headerDataChanged.emit(QtCore.Qt.Orientation.Vertical, 0, rows - 1)

    def text(self, row: int, col: int) -> str:
        """A cell's text, as it is (or will be) shown, filled or not."""
        value = float(self.table.values[row, col])
        text = self._texts.get(value)
        if text is None:
            text = self._texts[value] = fmt(value)
        return text

    def look(self, row: int, col: int) -> tuple[str, QtGui.QColor, QtGui.QColor] | None:
        """(text, fill, ink) of a filled cell, None for one not filled in yet: what the delegate paints."""
        if not self.is_filled(row, col):
            return None
        value = float(self.table.values[row, col])
        if not math.isfinite(value):
            return self.text(row, col), self._masked_fill, self._masked_ink
        low, high = self._levels
        shade = round(min(max((value - low) / (high - low), 0.0), 1.0) * (SHADES - 1))
        return self.text(row, col), self._fills[shade], self._inks[shade]

    def unit_count(self) -> int:
        """Animation units of this matrix: its cells, or its rows when it fills by row."""
        if self.table is None:
            return 0
        rows, cols = self.table.values.shape
        return rows if self._by_row else rows * cols

    def filled_units(self) -> int:
        if self.table is None:
            return 0
        return self._filled // self.table.values.shape[1] if self._by_row else self._filled

    def set_filled_units(self, units: int) -> None:
        if self.table is None:
            return
        rows, cols = self.table.values.shape
        units = max(0, min(units, self.unit_count()))
        cells = units * cols if self._by_row else units
        old, self._filled = self._filled, cells
        if old != cells:
            first, last = min(old, cells), max(old, cells) - 1
            self.dataChanged.emit(self.index(first // cols, 0), self.index(last // cols, cols - 1))

    def last_filled(self) -> tuple[int, int] | None:
        """The cell filled last, in reading order (None before the first)."""
        if self.table is None or self._filled == 0:
            return None
        return divmod(self._filled - 1, self.table.values.shape[1])

    def is_filled(self, row: int, col: int) -> bool:
        return self.table is not None and row * self.table.values.shape[1] + col < self._filled

    # --- outlines -------------------------------------------------------------------------------
    def set_marks(self, marks: tuple[Mark, ...]) -> None:
        if marks == self._marks or self.table is None:
            return
        old, self._marks = self._marks, marks
        rows, cols = self.table.values.shape
        for row, col in set(old) | set(marks):  # repaint only what gains or loses an outline
            top, bottom = (0, rows - 1) if row is None else (row, row)
            left, right = (0, cols - 1) if col is None else (col, col)
            self.dataChanged.emit(self.index(top, left), self.index(bottom, right))

    def marks(self) -> tuple[Mark, ...]:
        return self._marks

    def is_marked(self, row: int, col: int) -> bool:
        return any((r is None or r == row) and (c is None or c == col) for r, c in self._marks)

    # --- Qt model API ---------------------------------------------------------------------------
    def rowCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if self.table is None or parent.isValid() else self.table.values.shape[0]

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if self.table is None or parent.isValid() else self.table.values.shape[1]

    def data(self, index, role=QtCore.Qt.ItemDataRole.DisplayRole):
        look = self.look(index.row(), index.column())
        roles = (QtCore.Qt.ItemDataRole.DisplayRole, QtCore.Qt.ItemDataRole.BackgroundRole,
                 QtCore.Qt.ItemDataRole.ForegroundRole)
        return look[roles.index(role)] if look is not None and role in roles else None

    def headerData(self, section, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole):  # noqa: N802 - Qt API
        if role != QtCore.Qt.ItemDataRole.DisplayRole or self.table is None:
            return None
        labels = self.table.cols if orientation == QtCore.Qt.Orientation.Horizontal else self.table.rows
        return labels[section]


class _FixedHeader(QtWidgets.QHeaderView):
    """A header the table gives a fixed height (columns) or width (rows): its size hint is that size.
    Qt's own measures the labels of up to 200 sections through the model, four questions each, on
    every new shape: about 1,400 calls into Python a table at 77 tokens, for a size then overridden."""

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        return self.minimumSize()


class MatrixTable(QtWidgets.QTableView):
    """A table exactly as large as its matrix (the panel scrolls, not each table).

    It also shows the app's focus, the focused word's row or column framed (see set_focus), and tells
    which row the mouse is over (`row_hovered`), so a step table can set the focus like any view."""

    row_hovered = QtCore.Signal(object)  # row index under the mouse (cells or row labels), or None

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setHorizontalHeader(_FixedHeader(QtCore.Qt.Orientation.Horizontal, self))
        self.setVerticalHeader(_FixedHeader(QtCore.Qt.Orientation.Vertical, self))
        self._label_px: dict[str, int] = {}  # a label's width: 512 words measured once, not on each edit
        self._label_widths_of: dict[tuple[str, ...], np.ndarray] = {}  # see _label_widths
        self._column_px: list[int] = []  # the widths given to the columns (asking Qt costs 4 µs a column)
        self._focus: Mark = (None, None)
        self._focus_span = 1  # rows (or columns) framed from the focused one
        self._hovered_row: int | None = None
        self.verticalHeader().setMouseTracking(True)
        self.verticalHeader().viewport().installEventFilter(self)
        self.viewport().installEventFilter(self)
        self.matrix_model = MatrixModel(self)
        self.setModel(self.matrix_model)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)  # ←/→ stay with the timeline
        self.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        self.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setMouseTracking(True)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setCornerButtonEnabled(False)
        for header in (self.horizontalHeader(), self.verticalHeader()):
            header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Fixed)
            header.setSectionsClickable(False)
            header.setHighlightSections(False)

    def set_table(self, table: StepTable, colormap: str, by_row: bool = False) -> None:
        if self.matrix_model.shows(table, colormap, by_row):
            return  # unchanged: no new texts, no fitting, no repaint
        self.matrix_model.set_table(table, colormap, by_row)
        self._fit(table)
        # a new shape's layout now, not on the next event pass: its repaint would follow the first one
        # (every step of a generation's scrubber painted its tables twice)
        self.executeDelayedItemsLayout()

    def set_focus(self, row: int | None = None, col: int | None = None, span: int = 1) -> None:
        """Frame the focused word's row or column (None, None: no frame), or `span` of them from there
        (a word the other views show merged is several pieces here)."""
        if (row, col, span) != (*self._focus, self._focus_span):
            before = self._focus_bands()
            self._focus, self._focus_span = (row, col), span
            for band in before + self._focus_bands():  # the old frame wiped, the new one drawn
                self.viewport().update(band)

    def _focus_bands(self) -> list[QtCore.QRect]:
        """The viewport rectangles the focus frame lies in: its rows' band and its columns' band."""
        table = self.matrix_model.table
        row, col = self._focus
        if table is None or (row is None and col is None):
            return []
        rows, cols = table.values.shape
        height, top = self.rowHeight(0), self.rowViewportPosition(0)
        left = self.columnViewportPosition(0)
        right = self.columnViewportPosition(cols - 1) + self.columnWidth(cols - 1)
        bands = []
        if row is not None and row < rows:
            end = min(row + self._focus_span, rows)
            bands.append(QtCore.QRect(left, top + row * height, right - left, (end - row) * height))
        if col is not None and col < cols:
            end = min(col + self._focus_span, cols)
            x0 = self.columnViewportPosition(col)
            x1 = self.columnViewportPosition(end - 1) + self.columnWidth(end - 1)
            bands.append(QtCore.QRect(x0, top, x1 - x0, rows * height))
        return [band.adjusted(-FOCUS_REACH_PX, -FOCUS_REACH_PX, FOCUS_REACH_PX, FOCUS_REACH_PX) for band in bands]

    def focus_mark(self) -> Mark:
        return self._focus

    def focus_span(self) -> int:
        return self._focus_span

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind == QtCore.QEvent.Type.MouseMove:
            row = self.rowAt(int(event.position().y()))
            self._set_hovered_row(row if row >= 0 else None)
        elif kind == QtCore.QEvent.Type.Leave:
            self._set_hovered_row(None)
        return super().eventFilter(watched, event)

    def _set_hovered_row(self, row: int | None) -> None:
        if row != self._hovered_row:
            self._hovered_row = row
            self.row_hovered.emit(row)

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:  # noqa: N802 - Qt API
        """The cells in the damaged area: colour and text (blank until filled in); then the grid and
        the outer edges of the marked cells (the inputs a hovered result used). Only the rows and
        columns the damaged rectangles cross are looked at, however large the table: a focus moved
        from one row to another damages those two bands, not the rows between them."""
        model = self.matrix_model
        if model.table is None:
            return
        rows, cols = model.table.values.shape
        height = self.rowHeight(0)
        top = self.rowViewportPosition(0)
        painter = QtGui.QPainter(self.viewport())
        for damaged in event.region():  # each clipped to its own: a cell two of them cross is painted once,
            painter.setClipRect(damaged)  # where its translucent fill (a masked cell's) would darken
            self._paint_cells(painter, damaged, rows, cols, height, top)
        painter.setClipping(False)
        self._paint_focus(painter, rows, cols, height, top)
        painter.end()

    def _paint_cells(self, painter: QtGui.QPainter, damaged: QtCore.QRect, rows: int, cols: int, height: int,
                     top: int) -> None:
        model = self.matrix_model
        first_row = max(0, (damaged.top() - top) // height)
        last_row = min(rows - 1, (damaged.bottom() - top) // height)
        first_col, last_col = self._column_at(damaged.left(), 0), self._column_at(damaged.right(), cols - 1)
        if first_row > last_row or first_col > last_col:
            return
        columns = range(first_col, last_col + 1)
        xs = {c: self.columnViewportPosition(c) for c in range(first_col, last_col + 1)}
        xs[last_col + 1] = xs[last_col] + self.columnWidth(last_col)
        ys = {r: top + r * height for r in range(first_row, last_row + 2)}
        center = QtCore.Qt.AlignmentFlag.AlignCenter
        ink = None
        for row in range(first_row, last_row + 1):
            for col in columns:
                look = model.look(row, col)
                if look is None:
                    continue
                rect = QtCore.QRect(xs[col], ys[row], xs[col + 1] - xs[col], height)
                painter.fillRect(rect, look[1])
                if look[2] is not ink:
                    ink = look[2]
                    painter.setPen(ink)
                painter.drawText(rect, center, look[0])
        painter.setPen(_grid_color())
        left, right, upper, lower = xs[first_col], xs[last_col + 1], ys[first_row], ys[last_row + 1]
        painter.drawLines([QtCore.QLine(xs[c] - 1, upper, xs[c] - 1, lower - 1) for c in range(first_col + 1,
                                                                                              last_col + 2)]
                          + [QtCore.QLine(left, ys[r] - 1, right - 1, ys[r] - 1) for r in range(first_row + 1,
                                                                                               last_row + 2)])
        if model.marks():
            self._paint_marks(painter, xs, ys, columns, range(first_row, last_row + 1))

    def _column_at(self, x: int, outside: int) -> int:
        """The column under viewport x, or `outside` when x is past the table's edge."""
        col = self.columnAt(x)
        return outside if col < 0 else col

    def _paint_focus(self, painter: QtGui.QPainter, rows: int, cols: int, height: int, top: int) -> None:
        row, col = self._focus
        if row is None and col is None:
            return
        pen = QtGui.QPen(theme.highlight(), 2)
        pen.setJoinStyle(QtCore.Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        left = self.columnViewportPosition(0)
        right = self.columnViewportPosition(cols - 1) + self.columnWidth(cols - 1)
        bottom = top + rows * height
        if row is not None and row < rows:
            end = min(row + self._focus_span, rows)
            y = top + row * height
            painter.drawRect(QtCore.QRectF(left + 1, y + 1, right - left - 3, (end - row) * height - 3))
        if col is not None and col < cols:
            end = min(col + self._focus_span, cols)
            x0 = self.columnViewportPosition(col)
            x1 = self.columnViewportPosition(end - 1) + self.columnWidth(end - 1)
            painter.drawRect(QtCore.QRectF(x0 + 1, top + 1, x1 - x0 - 3, bottom - top - 3))

    def _paint_marks(self, painter: QtGui.QPainter, xs: dict[int, int], ys: dict[int, int], columns: range,
                     rows: range) -> None:
        model = self.matrix_model
        pen = QtGui.QPen(theme.highlight(), 3)
        pen.setJoinStyle(QtCore.Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        for row in rows:
            for col in columns:
                if not model.is_marked(row, col):
                    continue
                inner = QtCore.QRectF(xs[col] + 1.5, ys[row] + 1.5, xs[col + 1] - xs[col] - 2.5,
                                      ys[row + 1] - ys[row] - 2.5)
                edges = ((row - 1, col, inner.topLeft(), inner.topRight()),
                         (row + 1, col, inner.bottomLeft(), inner.bottomRight()),
                         (row, col - 1, inner.topLeft(), inner.bottomLeft()),
                         (row, col + 1, inner.topRight(), inner.bottomRight()))
                for r, c, start, end in edges:
                    if not model.is_marked(r, c):
                        painter.drawLine(QtCore.QLineF(start, end))

    def _label_widths(self, labels: tuple[str, ...], metrics: QtGui.QFontMetrics) -> np.ndarray:
        """Each label's width in pixels, measured once a label; the array kept for the labels last
        asked, which a layer, head or step of the same text asks again (2,048 labels: 4 ms a table)."""
        labels = tuple(labels)  # the same object when it is one already
        kept = self._label_widths_of.get(labels)
        if kept is not None:
            return kept
        for kept_labels, kept in self._label_widths_of.items():  # a text so far, a scrubber step back
            if len(kept_labels) > len(labels) and kept_labels[:len(labels)] == labels:
                return kept[:len(labels)]
        if len(self._label_px) > 4 * 8192:
            self._label_px.clear()
        widths = np.empty(len(labels), dtype=np.int64)
        for i, label in enumerate(labels):
            width = self._label_px.get(label)
            if width is None:
                width = self._label_px[label] = metrics.horizontalAdvance(label)
            widths[i] = width
        if len(self._label_widths_of) >= 4:  # rows and columns of the last two shapes
            self._label_widths_of.pop(next(iter(self._label_widths_of)))
        self._label_widths_of[labels] = widths
        return widths

    def _set_column_widths(self, widths: np.ndarray) -> None:
        """Give each column whose width changed its width. A new shape resets the model, and Qt keeps the
        widths of the columns that stay and gives those added its default: setting all of them again after
        a scrubber's step (1,000 columns of a long text) took 0.8 ms a table. Where most columns change
        to one width (a long text's head whose numbers take another digit: every column is as wide as the
        widest number), that width is made the default, which Qt gives in one go to every column as wide
        as the old default, and only the others are set one by one (8,192 columns set one by one: 20 ms
        of a head shown). Unheard by the view, which would repaint each resized column on a later event
        pass: the table is repainted whole once here."""
        header, kept = self.horizontalHeader(), self._column_px
        del kept[len(widths):]
        kept += [header.defaultSectionSize()] * (len(widths) - len(kept))
        was_blocked = header.blockSignals(True)
        before = np.array(kept, dtype=np.int64)
        changed = np.flatnonzero(widths != before)
        if len(changed) > 1:
            sizes, counts = np.unique(widths, return_counts=True)
            common = int(sizes[counts.argmax()])
            # Qt gives a new default to every column as wide as the old one (set so or not), and to those added
            others = np.flatnonzero(widths != np.where(before == header.defaultSectionSize(), common, before))
            if len(others) + 1 < len(changed) and header.minimumSectionSize() <= common <= header.maximumSectionSize():
                header.setDefaultSectionSize(common)
                changed = others
        for col in changed.tolist():
            self.setColumnWidth(col, int(widths[col]))
        header.blockSignals(was_blocked)
        kept[:] = widths.tolist()
        self.viewport().update()

    def _fit(self, table: StepTable) -> None:
        """Column widths from the widest text a column holds (every cell, filled or not), so filling
        never resizes it. A function of the table alone, as a table built now would be: columns that
        had only grown while the labels stayed kept the width of numbers long gone."""
        metrics = QtGui.QFontMetrics(self.font())
        header_metrics = QtGui.QFontMetrics(self.horizontalHeader().font())
        rows, cols = table.values.shape
        labels = self._label_widths(table.cols, header_metrics)
        if rows * cols <= MEASURED_CELLS:  # widths follow lengths closely: a column's three longest texts
            longest = longest_cells(table.values)
            advances: dict[str, int] = {}
            cells = np.zeros(cols, dtype=np.int64)
            for c in range(cols):
                for r in longest[:, c]:
                    text = self.matrix_model.text(r, c)
                    if text not in advances:
                        advances[text] = metrics.horizontalAdvance(text)
                    cells[c] = max(cells[c], advances[text])
        else:  # every column as wide as the widest number the table can write
            cells = np.full(cols, metrics.horizontalAdvance(widest_text(self.matrix_model.found)), dtype=np.int64)
        widths = np.maximum(labels, cells) + CELL_PADDING
        changed = False
        if widths.tolist() != self._column_px:
            self._set_column_widths(widths)
            changed = True
        row_height = metrics.height() + ROW_PADDING
        vertical = self.verticalHeader()
        vertical.setDefaultSectionSize(row_height)
        label_width = int(self._label_widths(table.rows, header_metrics).max(initial=0)) + CELL_PADDING
        # the width it was fixed to, not its geometry's: a table not laid out yet still has its old width,
        # and a label width equal to that was taken for set (a walk found a header 1 px off a fresh one)
        if vertical.minimumWidth() != label_width or vertical.maximumWidth() != label_width:
            vertical.setFixedWidth(label_width)
            changed = True
        self.horizontalHeader().setFixedHeight(header_metrics.height() + ROW_PADDING + 2)
        frame = 2 * self.frameWidth()
        width = label_width + sum(widths) + frame
        height = self.horizontalHeader().height() + row_height * len(table.rows) + frame
        if changed or self.size() != QtCore.QSize(width, height):
            self.setFixedSize(width, height)
            self.updateGeometries()  # place the viewport beside the new headers now, not on the next event pass
