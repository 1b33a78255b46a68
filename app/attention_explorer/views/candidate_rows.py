"""The rows of a decoder's likeliest next tokens, painted by one widget: each token (cut with … to
its column, bold where it is the one written) beside a bar of its probability with the percentage on it.

One widget, not a label and a QProgressBar a row: a scrubber step set five labels (each a selectable
QLabel rebuilds a text document for every new text) and five bars, and painted the labels twice, about
3 ms of a step. Here a step sets five rows and paints them once. The widget's size never depends on its
rows, so a step lays nothing out.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6 import QtCore, QtGui, QtWidgets

ROW_PADDING_PX = 6
BAR_GAP_PX = 8  # between a token's column and its bar
BAR_SCALE = 1000  # a bar's length in thousandths, as "12.3%" is written


class CandidateRow(NamedTuple):
    """One row as it is drawn: `text` is the token as it fits its column, `label` the whole token."""
    label: str
    text: str
    bold: bool
    filled: int  # thousandths of the bar
    percent: str


class QtCandidateRows(QtWidgets.QWidget):
    """Up to `rows` candidates, each on a line: the token in a column `word_px` wide, then its bar."""

    def __init__(self, rows: int, word_px: int, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self._capacity = rows
        self._word_px = word_px
        self._given: list[tuple[str, float, bool]] = []
        self._rows: list[CandidateRow] = []
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)
        self.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)  # the window opens copy_menu
        self.setAccessibleName("Likeliest next tokens")

    # --- what it shows --------------------------------------------------------------------------
    def set_rows(self, rows: list[tuple[str, float, bool]]) -> None:
        """(token, probability, written) per row, best first; repainted only when something changed."""
        self._given = list(rows[:self._capacity])
        shown = [self._row(label, probability, bold) for label, probability, bold in self._given]
        if shown == self._rows:
            return
        self._rows = shown
        self.setAccessibleDescription("; ".join(f"{row.label}: {row.percent}" for row in shown))
        self.update()

    def rows(self) -> list[CandidateRow]:
        return list(self._rows)

    def row_at(self, point: QtCore.QPoint) -> int | None:
        """The row under `point` (widget coordinates), None above or below the rows."""
        index = point.y() // self._row_px()
        return index if point.y() >= 0 and index < len(self._rows) else None

    def _row(self, label: str, probability: float, bold: bool) -> CandidateRow:
        metrics = QtGui.QFontMetrics(self._font(bold))
        text = metrics.elidedText(label, QtCore.Qt.TextElideMode.ElideRight, self._word_px)
        return CandidateRow(label, text, bold, round(probability * BAR_SCALE), f"{probability:.1%}")

    def _font(self, bold: bool) -> QtGui.QFont:
        font = QtGui.QFont(self.font())
        font.setBold(bold)
        return font

    # --- size -----------------------------------------------------------------------------------
    def _row_px(self) -> int:
        return self.fontMetrics().height() + ROW_PADDING_PX

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        return QtCore.QSize(self._word_px + BAR_GAP_PX + 120, self._capacity * self._row_px())

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        return QtCore.QSize(self._word_px + BAR_GAP_PX + 40, self._capacity * self._row_px())

    # --- painting -------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        painter = QtGui.QPainter(self)
        palette = self.palette()
        row_px = self._row_px()
        bar_left = self._word_px + BAR_GAP_PX
        bar_width = max(self.width() - bar_left - 1, 1)
        for index, row in enumerate(self._rows):
            top = index * row_px
            if not event.rect().intersects(QtCore.QRect(0, top, self.width(), row_px)):
                continue
            painter.setFont(self._font(row.bold))
            painter.setPen(palette.color(QtGui.QPalette.ColorRole.WindowText))
            painter.drawText(QtCore.QRect(0, top, self._word_px, row_px),
                             QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignVCenter, row.text)
            self._paint_bar(painter, QtCore.QRect(bar_left, top + 2, bar_width, row_px - 4), row)
        painter.end()

    def _paint_bar(self, painter: QtGui.QPainter, groove: QtCore.QRect, row: CandidateRow) -> None:
        """A groove with the filled part in the highlight colour, the percentage centred on it: the
        part of the text over the fill in the highlight's own text colour, so it reads on both."""
        palette = self.palette()
        painter.setFont(self.font())
        painter.setPen(palette.color(QtGui.QPalette.ColorRole.Mid))
        painter.setBrush(palette.color(QtGui.QPalette.ColorRole.Base))
        painter.drawRect(groove.adjusted(0, 0, -1, -1))
        filled = QtCore.QRect(groove.left() + 1, groove.top() + 1,
                              round((groove.width() - 2) * min(row.filled, BAR_SCALE) / BAR_SCALE), groove.height() - 2)
        painter.fillRect(filled, palette.color(QtGui.QPalette.ColorRole.Highlight))
        centred = QtCore.Qt.AlignmentFlag.AlignCenter
        painter.setPen(palette.color(QtGui.QPalette.ColorRole.Text))
        painter.drawText(groove, centred, row.percent)
        if filled.width() > 0:
            painter.save()
            painter.setClipRect(filled)
            painter.setPen(palette.color(QtGui.QPalette.ColorRole.HighlightedText))
            painter.drawText(groove, centred, row.percent)
            painter.restore()

    def changeEvent(self, event: QtCore.QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.Type.FontChange:  # the tokens are cut anew in the new font
            self.updateGeometry()
            given, self._rows = self._given, []
            self.set_rows(given)

    # --- the whole token ------------------------------------------------------------------------
    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ToolTip:
            index = self.row_at(event.pos())
            if index is None:
                QtWidgets.QToolTip.hideText()
                event.ignore()
            else:
                row = self._rows[index]
                QtWidgets.QToolTip.showText(event.globalPos(), f"{row.label.strip() or repr(row.label)}: {row.percent}",
                                            self, self._row_rect(index))
            return True
        return super().event(event)

    def copy_menu(self, point: QtCore.QPoint, parent: QtWidgets.QWidget) -> QtWidgets.QMenu | None:
        """What a right-click at `point` offers, None with no rows: copy the token there, or every row as
        text (the rows are painted, not selectable labels). The window opens it, as its every menu."""
        if not self._rows:
            return None
        menu = QtWidgets.QMenu(parent)
        index = self.row_at(point)
        if index is not None:
            token = self._rows[index].label
            menu.addAction(f"Copy {token!r}", lambda: QtWidgets.QApplication.clipboard().setText(token))
        every = "\n".join(f"{row.label}\t{row.percent}" for row in self._rows)
        menu.addAction("Copy every candidate", lambda: QtWidgets.QApplication.clipboard().setText(every))
        return menu

    def _row_rect(self, index: int) -> QtCore.QRect:
        return QtCore.QRect(0, index * self._row_px(), self.width(), self._row_px())
