"""One matrix of a step as a table: named rows and columns, cells coloured by value, filled in up to a
count (the animation), and the cells a hovered result came from outlined.

A QTableView over a QAbstractTableModel (headers, hit-testing, hover signals), whose viewport paints
its cells in one pass instead of one delegate call per cell: a step's tables hold hundreds of cells,
and calling into Python per cell costs more than drawing it. The animation repaints only the cell
it just filled and the cells whose outline changed.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..engine.cell_arithmetic import fmt
from ..engine.steps import StepTable
from . import theme

Mark = tuple[int | None, int | None]  # a row (col None), a column (row None) or a cell
CELL_PADDING = 8   # a step's three tables side by side fit a 1400-pixel window
ROW_PADDING = 4    # ... and, with the W_O step's eight rows, its two-fifths of a 900-pixel-high one
SHADES = 256  # colours per colour map: finer steps than the eye tells apart in a table cell


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


def value_levels(values: np.ndarray, key: str) -> tuple[float, float]:
    """The range the colour map spans: 0–1 for weights (comparable across rows), else the finite span."""
    if key == "weights":
        return 0.0, 1.0
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return -0.5, 0.5
    low, high = float(finite.min()), float(finite.max())
    return (low - 0.5, high + 0.5) if high - low < 1e-12 else (low, high)



def _formatted(values: np.ndarray) -> list[list[str]]:
    """Every cell's text, each distinct value formatted once: a sentence's tables repeat their
    numbers (embeddings, zeros, masked −∞), and a 128-word edit formatted 2,000 cells one by one.
    (A dict, not np.unique, which would import numpy.ma, 16 ms, at start.)"""
    known: dict[float, str] = {}
    return [[known[x] if x in known else known.setdefault(x, fmt(x)) for x in row] for row in values.tolist()]


class MatrixModel(QtCore.QAbstractTableModel):
    """Texts and colours are prepared once per matrix, so painting a cell is two look-ups."""

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.table: StepTable | None = None
        self._texts: list[list[str]] = []
        self._shade: list[list[int]] = []  # index into the colour map's shades, −1 for −∞
        self._fills: list[QtGui.QColor] = []
        self._inks: list[QtGui.QColor] = []
        self._masked_fill = QtGui.QColor()
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
                and np.array_equal(old.values, table.values))

    def set_table(self, table: StepTable, colormap: str, by_row: bool = False) -> None:
        """Show `table`, complete. A matrix of the same shape (the usual case while typing) only
        updates the cells and labels: a model reset would make the view lay everything out again."""
        same_shape = self.table is not None and self.table.values.shape == table.values.shape
        if not same_shape:
            self.beginResetModel()
        self.table, self._by_row, self._marks = table, by_row, ()
        self._colours = (colormap, by_row, theme.muted().rgba())
        values = table.values
        low, high = value_levels(values, table.key)
        finite = np.isfinite(values)
        scaled = np.clip((np.where(finite, values, low) - low) / (high - low), 0.0, 1.0)
        self._shade = np.where(finite, np.rint(scaled * (SHADES - 1)), -1).astype(int).tolist()
        self._fills, self._inks = _shades(colormap)
        self._masked_fill = QtGui.QColor(theme.muted())
        self._masked_fill.setAlphaF(0.18)
        self._texts = _formatted(values)
        self._filled = values.size
        if not same_shape:
            self.endResetModel()
            return
        rows, cols = values.shape
        self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, cols - 1))
        self.headerDataChanged.emit(QtCore.Qt.Orientation.Horizontal, 0, cols - 1)
        self.headerDataChanged.emit(QtCore.Qt.Orientation.Vertical, 0, rows - 1)

    def look(self, row: int, col: int) -> tuple[str, QtGui.QColor, QtGui.QColor] | None:
        """(text, fill, ink) of a filled cell, None for one not filled in yet: what the delegate paints."""
        if not self.is_filled(row, col):
            return None
        shade = self._shade[row][col]
        if shade < 0:
            return self._texts[row][col], self._masked_fill, theme.foreground()
        return self._texts[row][col], self._fills[shade], self._inks[shade]

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

    def texts(self) -> list[list[str]]:
        """Every cell's text as it is (or will be) shown, filled or not."""
        return self._texts

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


class MatrixTable(QtWidgets.QTableView):
    """A table exactly as large as its matrix (the panel scrolls, not each table).

    It also shows the app's focus, the focused word's row or column framed (see set_focus), and tells
    which row the mouse is over (`row_hovered`), so a step table can set the focus like any view."""

    row_hovered = QtCore.Signal(object)  # row index under the mouse (cells or row labels), or None

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self._label_px: dict[str, int] = {}  # a row label's width: 128 words measured once, not on each edit
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

    def set_focus(self, row: int | None = None, col: int | None = None, span: int = 1) -> None:
        """Frame the focused word's row or column (None, None: no frame), or `span` of them from there
        (a word the other views show merged is several pieces here)."""
        if (row, col, span) != (*self._focus, self._focus_span):
            self._focus, self._focus_span = (row, col), span
            self.viewport().update()

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
        the outer edges of the marked cells (the inputs a hovered result used)."""
        model = self.matrix_model
        if model.table is None:
            return
        rows, cols = model.table.values.shape
        xs = [self.columnViewportPosition(c) for c in range(cols)]
        xs.append(xs[-1] + self.columnWidth(cols - 1))
        height = self.rowHeight(0)
        ys = [self.rowViewportPosition(r) for r in range(rows)] + [self.rowViewportPosition(rows - 1) + height]
        damaged = event.rect()
        painter = QtGui.QPainter(self.viewport())
        center = QtCore.Qt.AlignmentFlag.AlignCenter
        first_row = max(0, (damaged.top() - ys[0]) // height)
        last_row = min(rows - 1, (damaged.bottom() - ys[0]) // height)
        columns = [c for c in range(cols) if xs[c + 1] > damaged.left() and xs[c] <= damaged.right()]
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
        painter.drawLines([QtCore.QLine(x - 1, ys[0], x - 1, ys[-1] - 1) for x in xs[1:]]
                          + [QtCore.QLine(xs[0], y - 1, xs[-1] - 1, y - 1) for y in ys[1:]])  # opaque: blending is slow
        if model.marks():
            self._paint_marks(painter, xs, ys)
        self._paint_focus(painter, xs, ys)
        painter.end()

    def _paint_focus(self, painter: QtGui.QPainter, xs: list[int], ys: list[int]) -> None:
        row, col = self._focus
        if row is None and col is None:
            return
        pen = QtGui.QPen(theme.highlight(), 2)
        pen.setJoinStyle(QtCore.Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        if row is not None and row < len(ys) - 1:
            end = min(row + self._focus_span, len(ys) - 1)
            painter.drawRect(QtCore.QRectF(xs[0] + 1, ys[row] + 1, xs[-1] - xs[0] - 3, ys[end] - ys[row] - 3))
        if col is not None and col < len(xs) - 1:
            end = min(col + self._focus_span, len(xs) - 1)
            painter.drawRect(QtCore.QRectF(xs[col] + 1, ys[0] + 1, xs[end] - xs[col] - 3, ys[-1] - ys[0] - 3))

    def _paint_marks(self, painter: QtGui.QPainter, xs: list[int], ys: list[int]) -> None:
        model = self.matrix_model
        pen = QtGui.QPen(theme.highlight(), 3)
        pen.setJoinStyle(QtCore.Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        for row in range(len(ys) - 1):
            for col in range(len(xs) - 1):
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

    def _fit(self, table: StepTable) -> None:
        """Column widths from the widest text a column holds (every cell, filled or not), so filling
        never resizes it. A function of the table alone, as a table built now would be: columns that
        had only grown while the labels stayed kept the width of numbers long gone."""
        metrics = QtGui.QFontMetrics(self.font())
        header_metrics = QtGui.QFontMetrics(self.horizontalHeader().font())
        texts = self.matrix_model.texts()
        changed = False
        for col, label in enumerate(table.cols):
            longest = sorted((row[col] for row in texts), key=len)[-3:]  # widths follow lengths closely
            widest = max([header_metrics.horizontalAdvance(label)] + [metrics.horizontalAdvance(t) for t in longest])
            if self.columnWidth(col) != widest + CELL_PADDING:
                self.setColumnWidth(col, widest + CELL_PADDING)
                changed = True
        row_height = metrics.height() + ROW_PADDING
        vertical = self.verticalHeader()
        vertical.setDefaultSectionSize(row_height)
        if len(self._label_px) > 4096:
            self._label_px.clear()
        for label in table.rows:
            if label not in self._label_px:
                self._label_px[label] = header_metrics.horizontalAdvance(label)
        label_width = max(self._label_px[label] for label in table.rows) + CELL_PADDING
        if vertical.width() != label_width:
            vertical.setFixedWidth(label_width)
            changed = True
        self.horizontalHeader().setFixedHeight(header_metrics.height() + ROW_PADDING + 2)
        frame = 2 * self.frameWidth()
        width = label_width + sum(self.columnWidth(c) for c in range(len(table.cols))) + frame
        height = self.horizontalHeader().height() + row_height * len(table.rows) + frame
        if changed or self.size() != QtCore.QSize(width, height):
            self.setFixedSize(width, height)
            self.updateGeometries()  # place the viewport beside the new headers now, not on the next event pass
