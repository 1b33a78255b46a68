"""A read-only table of already formatted numbers, sized to its contents (the lessons' result tables)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6 import QtCore, QtWidgets

MAX_SHOWN_ROWS = 12  # taller tables scroll


class QtNumberTable(QtWidgets.QTableWidget):
    """Rows of text under column headers. Numbers are right-aligned so their digits line up; give
    `numbers=False` for a table of words."""

    def __init__(self, headers: Sequence[str], parent: QtWidgets.QWidget | None = None, *, numbers: bool = True):
        super().__init__(0, len(headers), parent)
        self._numbers = numbers
        self.setHorizontalHeaderLabels(list(headers))
        self.verticalHeader().hide()
        self.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.setWordWrap(False)
        self.setVerticalScrollMode(QtWidgets.QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def set_rows(self, rows: Sequence[Sequence[str]], bold_row: int | None = None) -> None:
        """Replace the contents; the first column is a name, the others numbers (unless `numbers=False`)."""
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QtWidgets.QTableWidgetItem(text)
                right = self._numbers and c > 0
                align = QtCore.Qt.AlignmentFlag.AlignRight if right else QtCore.Qt.AlignmentFlag.AlignLeft
                item.setTextAlignment(align | QtCore.Qt.AlignmentFlag.AlignVCenter)
                if r == bold_row:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.setItem(r, c, item)
        self.resizeColumnsToContents()
        self.resizeRowsToContents()
        scroll = self.verticalScrollBar().sizeHint().width() if len(rows) > MAX_SHOWN_ROWS else 0
        self.setFixedSize(self.horizontalHeader().length() + 2 * self.frameWidth() + scroll, self.fitting_height())

    def fitting_height(self) -> int:
        """Tall enough for every row (up to MAX_SHOWN_ROWS, then it scrolls)."""
        shown = min(self.rowCount(), MAX_SHOWN_ROWS)
        rows = sum(self.rowHeight(r) for r in range(shown))
        return self.horizontalHeader().height() + rows + 2 * self.frameWidth() + 2

    def cell_text(self, row: int, column: int) -> str:
        item = self.item(row, column)
        return item.text() if item is not None else ""

    def column_texts(self, column: int) -> list[str]:
        return [self.cell_text(r, column) for r in range(self.rowCount())]
