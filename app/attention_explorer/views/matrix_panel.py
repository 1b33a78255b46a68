"""The matrix panel: one step of the computation as tables (its inputs, then its results), what the
step does and why, and the arithmetic of one result cell with the inputs it used outlined.

The panel shows whatever (trace, step, head) it is given and knows nothing of the controller, so the
GIF export can drive a second, offscreen panel through every step without touching the window.
Every number and text comes from the trace through the step registry (engine.steps).
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..engine.cell_arithmetic import CellArithmetic
from ..engine.steps import STEPS, StepView, cell_arithmetic, step_view
from ..engine.trace import Trace
from . import theme
from .matrix_table import MatrixTable
from .painted_now import lay_out_text_now, set_visible_now

EXPLANATION_WIDTH = 440  # px: the explanation wraps here; the arithmetic takes the rest of the width
MIN_ARITHMETIC_WIDTH = 520
ARITHMETIC_LINES = 3  # one line saying which cell, two for its arithmetic
NOTE_LINES = 2  # the least height of a real model's note: a reading's note, on or off, moves no table
BIG = 1.2            # the arithmetic is the panel's headline: a little larger than the text

Cell = tuple[str, int, int]  # (result key, row, col)


def _set_text(label: QtWidgets.QLabel, text: str) -> None:
    """Set a label's text only when it differs: a rich-text label lays itself out anew on every
    setText, which is most of the cost of redrawing the panel while the user types."""
    if label.text() != text:
        label.setText(text)


class _Block(QtWidgets.QWidget):
    """A caption over a table."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.caption = QtWidgets.QLabel()
        self.caption.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.table = MatrixTable()
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addWidget(self.caption)
        layout.addWidget(self.table, 0, QtCore.Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(1)

    def show_table(self, table, colormap: str, by_row: bool) -> None:
        rows, cols = table.values.shape
        muted = theme.muted().name(QtGui.QColor.NameFormat.HexArgb)
        _set_text(self.caption, f"<b>{table.title}</b> <span style='color:{muted}'>{rows}×{cols}</span>")
        self.table.set_table(table, colormap, by_row)


class QtMatrixPanel(QtWidgets.QWidget):
    """Inputs, then results that fill in as the step plays; hover or click a result cell."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("matrixPanel")
        self._trace: Trace | None = None
        self._view: StepView | None = None
        self._head = 0
        self._shown_as: tuple[int, str] | None = None  # (step, colour map) the tables show of the trace
        self._blocks: list[_Block] = []   # reused from step to step
        self._arrangement: tuple | None = None  # how the blocks and operators were last laid out
        self._inputs: dict[str, MatrixTable] = {}
        self._results: dict[str, MatrixTable] = {}
        self._hovered: Cell | None = None
        self._pinned: Cell | None = None
        self._follow_fill = False         # while playing, write out the cell filled last
        self._arithmetic: CellArithmetic | None = None

        self.title = QtWidgets.QLabel()
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.explanation = QtWidgets.QLabel()
        self.explanation.setWordWrap(True)
        # When the other views show a reading of a real model's layer (words, hidden tokens, rollout),
        # the steps show the layer's own computation: this line says so (hidden otherwise).
        self.reading_note = QtWidgets.QLabel()
        self.reading_note.setObjectName("readingNote")
        self.reading_note.setWordWrap(True)
        self.reading_note.hide()
        self._note_stands_out = False
        self.row = QtWidgets.QWidget()
        self.row_layout = QtWidgets.QHBoxLayout(self.row)
        self.row_layout.setContentsMargins(0, 4, 0, 4)
        self.row_layout.setSpacing(10)
        self.row.installEventFilter(self)
        # Above the tables, always the same height, so hovering never moves them: the hovered cell's
        # arithmetic, else the rule every cell follows, else why the step is skipped.
        self.arithmetic_label = QtWidgets.QLabel()
        self.arithmetic_label.setObjectName("cellArithmetic")
        self.arithmetic_label.setWordWrap(True)
        self.arithmetic_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop)
        self.arithmetic_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        big = QtGui.QFont(self.arithmetic_label.font())
        big.setPointSizeF(big.pointSizeF() * BIG)
        self._big_points = big.pointSizeF()
        big_lines = QtGui.QFontMetrics(big).lineSpacing() * (ARITHMETIC_LINES - 1)
        self.arithmetic_label.setFixedHeight(QtGui.QFontMetrics(self.arithmetic_label.font()).lineSpacing()
                                             + big_lines + 6)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(12, 4, 12, 4)
        layout.setSpacing(3)
        texts = QtWidgets.QHBoxLayout()  # side by side: the tables keep as much of the height as can be
        texts.setSpacing(16)
        top_left = QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft
        texts.addWidget(self.explanation, 0, top_left)
        texts.addWidget(self.arithmetic_label, 0, top_left)
        texts.addStretch(1)
        layout.addWidget(self.title)
        layout.addWidget(self.reading_note)
        layout.addLayout(texts)
        layout.addWidget(self.row)
        layout.setSizeConstraint(QtWidgets.QLayout.SizeConstraint.SetFixedSize)  # always its natural size
        self.set_export_background(theme.background())

    # --- what is shown --------------------------------------------------------------------------
    def show_step(self, trace: Trace, step: int, head: int, colormap: str, note: str = "",
                  note_stands_out: bool = False) -> None:
        """Show step `step` (an index into STEPS) of `head`, complete. `note` (a real model's layer) says
        which layer and head the steps are and, `note_stands_out`, how they stand to a reading of it the
        other views show.

        The same step of the same trace again (a reading of a real model's layer switched on or off: the
        steps show the layer's own computation) changes only the note; the tables, their fill and the cell
        written out stay (laying them out again took 1.2 ms of such a toggle). The note keeps its height
        (NOTE_LINES), so the tables do not move either: moved, they, the scroll bars and the headers were
        painted again, 4 ms of each reading switched on or off."""
        if trace is self._trace and head == self._head and (step, colormap) == self._shown_as:
            if (note, note_stands_out) != (self.reading_note.text(), self._note_stands_out):
                self._set_note(note, note_stands_out)
                self._fit_texts()
            return
        self._shown_as = (step, colormap)
        self._trace, self._head = trace, head
        view = self._view = step_view(trace, STEPS[step].key, head)
        self._hovered = self._pinned = None
        self._follow_fill = False
        several = len(trace.heads) > 1 and view.step.per_head
        heads = f" — head {head + 1} of {len(trace.heads)}" if several else ""
        heads += f" · {view.note}" if view.note else ""  # e.g. the key/value head a query head shares
        _set_text(self.title, f"Step {step + 1} of {len(STEPS)} · {view.step.title_for(trace)}{heads}")
        _set_text(self.explanation, view.step.explanation_for(trace))
        self._set_note(note, note_stands_out)
        self._lay_out_tables(view, colormap)
        self.row.show()
        self._update_arithmetic()
        self._fit_texts()

    def lay_out_now(self) -> None:
        """Do now the layout requests a new step posted, from the tables' blocks up to this panel, rather than
        on the next pass (see QtStepTimeline._draw_panel)."""
        for widget in (*self._blocks, self.row, self):
            QtCore.QCoreApplication.sendPostedEvents(widget, QtCore.QEvent.Type.LayoutRequest)

    def holds_trace(self) -> bool:
        """Whether the tables show a trace (and keep it)."""
        return self._trace is not None

    def show_message(self, text: str) -> None:
        """Nothing to compute (e.g. no known word): say so instead of the tables."""
        self._trace = self._view = self._arithmetic = self._shown_as = None
        self._inputs, self._results = {}, {}
        _set_text(self.title, "Steps")
        _set_text(self.explanation, text)
        self._set_note("")
        self.row.hide()
        _set_text(self.arithmetic_label, "")
        self._fit_texts()

    def _set_note(self, note: str, stands_out: bool = False) -> None:
        _set_text(self.reading_note, note)
        self._note_stands_out = stands_out
        color = theme.highlight() if stands_out else theme.muted()
        style = f"color: {color.name(QtGui.QColor.NameFormat.HexArgb)};"
        if self.reading_note.styleSheet() != style:  # a new style sheet re-polishes and re-lays out
            self.reading_note.setStyleSheet(style)
        set_visible_now(self.reading_note, bool(note))

    def inputs(self) -> dict[str, MatrixTable]:
        return dict(self._inputs)

    def results(self) -> dict[str, MatrixTable]:
        return dict(self._results)

    # --- filling --------------------------------------------------------------------------------
    def unit_count(self) -> int:
        """How many animation units the results have (cells; rows for softmax). 0 when skipped."""
        return sum(t.matrix_model.unit_count() for t in self._results.values())

    def filled(self) -> int:
        return sum(t.matrix_model.filled_units() for t in self._results.values())

    def set_filled(self, units: int, follow: bool = True) -> None:
        """Show the first `units` units of the results, in reading order, one result after another.
        With `follow`, the cell filled last is written out (what the learner watches while playing)."""
        remaining = max(0, units)
        for table in self._results.values():
            model = table.matrix_model
            model.set_filled_units(min(remaining, model.unit_count()))
            remaining -= model.filled_units()
        self._follow_fill = follow
        self._update_arithmetic()

    # --- arithmetic -----------------------------------------------------------------------------
    def hover_cell(self, cell: Cell | None) -> None:
        if cell != self._hovered:
            self._hovered = cell
            self._update_arithmetic()

    def toggle_pinned(self, cell: Cell) -> None:
        self._pinned = None if self._pinned == cell else cell
        self._update_arithmetic()

    def chosen_cells(self) -> tuple[Cell | None, Cell | None]:
        """The result cells under the mouse and clicked (a view's own state, kept across redraws of the step)."""
        return self._hovered, self._pinned

    def restore_cells(self, hovered: Cell | None, pinned: Cell | None) -> None:
        self._hovered, self._pinned = hovered, pinned
        self._update_arithmetic()

    def shown_cell(self) -> Cell | None:
        """The cell written out: hovered, else pinned, else (while playing) the one filled last."""
        for cell in (self._hovered, self._pinned):
            if cell is not None and self._results[cell[0]].matrix_model.is_filled(cell[1], cell[2]):
                return cell
        if self._follow_fill:
            last = None
            for key, table in self._results.items():
                filled = table.matrix_model.last_filled()
                last = (key, *filled) if filled is not None else last
            return last
        return None

    def arithmetic_text(self) -> str:
        return self._arithmetic.text if self._arithmetic else ""

    def _update_arithmetic(self) -> None:
        if self._view is None:
            return
        cell = self.shown_cell()
        marks: dict[str, list] = {}
        if cell is None:
            self._arithmetic = None
            self._write_detail(*self._rule())
        else:
            key, row, col = cell
            found = self._arithmetic = cell_arithmetic(self._trace, self._view.step.key, self._head, row, col, key)
            self._write_detail(found.what, found.text)
            marks[key] = [(row, col)]
            for used in found.used:
                marks.setdefault(used.table, []).append((used.row, used.col))
        for key, table in (*self._inputs.items(), *self._results.items()):
            table.matrix_model.set_marks(tuple(marks.get(key, ())))

    def _rule(self) -> tuple[str, str]:
        """(caption, text) when no cell is written out: why the step is skipped, or its rule and shapes."""
        view = self._view
        if view.skipped:
            return "what comes in goes on unchanged", view.skipped.capitalize()
        shapes = [f"{t.values.shape[0]}×{t.values.shape[1]}" for t in view.inputs]
        parts = [shapes[0]] + [f"{op} {shape}" for op, shape in zip(view.ops, shapes[1:], strict=True)]
        results = ", ".join(f"{t.values.shape[0]}×{t.values.shape[1]}" for t in view.results)
        return f"every cell of the result · {' '.join(parts)} → {results}", view.formula

    def _write_detail(self, caption: str, text: str) -> None:
        muted = theme.muted().name(QtGui.QColor.NameFormat.HexArgb)
        _set_text(self.arithmetic_label, f"<span style='color:{muted}'>{caption}</span><br>"
                                      f"<span style='font-size:{self._big_points:.1f}pt'><b>{text}</b></span>")

    # --- layout ---------------------------------------------------------------------------------
    def _lay_out_tables(self, view: StepView, colormap: str) -> None:
        tables = (*view.inputs, *view.results)
        arrangement = (len(view.inputs), len(view.results), view.arrow, tuple(view.ops))
        if arrangement != self._arrangement:
            # Only a new arrangement touches the layout: re-adding widgets makes Qt lay out and
            # repaint the whole window, which an edit of the sentence must not cost.
            self._arrange_blocks(view, len(tables))
            self._arrangement = arrangement
        self._inputs, self._results = {}, {}
        for i, (table, block) in enumerate(zip(tables, self._blocks, strict=False)):
            is_result = i >= len(view.inputs)
            block.show_table(table, colormap, view.fill_by_row and is_result)
            block.table.setProperty("result_key", table.key if is_result else None)
            (self._results if is_result else self._inputs)[table.key] = block.table

    def _arrange_blocks(self, view: StepView, count: int) -> None:
        """Blocks and the operators between them (·, =, ,), left to right."""
        while self.row_layout.count():
            item = self.row_layout.takeAt(0)
            if item.widget() is not None and not isinstance(item.widget(), _Block):
                item.widget().hide()
                item.widget().deleteLater()
        while len(self._blocks) < count:
            self._blocks.append(self._new_block())
        for block in self._blocks[count:]:
            block.hide()
        for i, block in enumerate(self._blocks[:count]):
            if i == len(view.inputs):
                self._add_operator(view.arrow)
            elif i > len(view.inputs):
                self._add_operator(",")
            elif i > 0:
                self._add_operator(view.ops[i - 1])
            self.row_layout.addWidget(block)
            block.show()
        self.row_layout.addStretch(1)

    def _new_block(self) -> _Block:
        block = _Block(self.row)
        table = block.table
        table.entered.connect(lambda index, t=table: self._on_entered(t, index))
        table.clicked.connect(lambda index, t=table: self._on_clicked(t, index))
        table.viewport().installEventFilter(self)
        return block

    def _add_operator(self, text: str) -> None:
        label = QtWidgets.QLabel(text)
        font = label.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        label.setFont(font)
        self.row_layout.addWidget(label, 0, QtCore.Qt.AlignmentFlag.AlignVCenter)

    def _texts_width(self) -> int:
        """The width the texts wrap within: the tables' row, at least room for both texts."""
        for widget in (*self._blocks, self.row):  # around the tables' new sizes first: measured before, the
            widget.layout().activate()            # row kept the old widths until a later pass fitted again
        tables = self.row.sizeHint().width() if self.row.isVisibleTo(self) else 0
        return max(EXPLANATION_WIDTH + 16 + MIN_ARITHMETIC_WIDTH, tables)

    def _refit_texts(self) -> None:
        """The row laid itself out again after the step was shown: the texts fitted again only when the
        tables' width changed (fitting them again anyway repainted the panel on one more pass)."""
        if self._view is not None and self._texts_width() != self.title.width():
            self._fit_texts()

    def _fit_texts(self) -> None:
        """Wrap the texts within the tables' width so the panel's natural size is also a good figure."""
        width = self._texts_width()
        # set every time (Qt ignores a size that stays): a height kept from the text it was measured for
        # outlived that text and pushed a one-line message down by three lines
        self.title.setFixedWidth(width)
        # heights measured from the text itself: QLabel.heightForWidth of the explanation went on
        # answering for an earlier, longer text in some histories (four lines for a one-line message)
        texts_width = EXPLANATION_WIDTH + 16 + MIN_ARITHMETIC_WIDTH  # within sight, however wide the tables
        for label, label_width, least in ((self.explanation, EXPLANATION_WIDTH, ""),
                                          (self.reading_note, texts_width, "\n".join("x" * NOTE_LINES))):
            label.setFixedWidth(label_width)
            metrics, wrap = label.fontMetrics(), int(QtCore.Qt.TextFlag.TextWordWrap)
            lines = metrics.boundingRect(0, 0, label_width, 10_000, wrap, label.text())
            label.setFixedHeight(max(lines.height(), metrics.boundingRect(0, 0, label_width, 10_000, wrap,
                                                                          least).height()))
        self.arithmetic_label.setFixedWidth(width - EXPLANATION_WIDTH - 16)
        self._settle()

    def _settle(self) -> None:
        """Lay out now rather than on the next event loop pass: an export may render right away. The
        captions' rich text too, for their new widths (see painted_now: a change of head painted them
        again a pass after the window)."""
        for widget in (*self._blocks, self.row, self):
            widget.layout().activate()
        for block in self._blocks:
            lay_out_text_now(block.caption)

    # --- mouse ----------------------------------------------------------------------------------
    def _on_entered(self, table: MatrixTable, index: QtCore.QModelIndex) -> None:
        key = table.property("result_key")
        self.hover_cell((key, index.row(), index.column()) if key else None)

    def _on_clicked(self, table: MatrixTable, index: QtCore.QModelIndex) -> None:
        key = table.property("result_key")
        if key and table.matrix_model.is_filled(index.row(), index.column()):
            self.toggle_pinned((key, index.row(), index.column()))

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt API
        if watched is self.row:
            if event.type() == QtCore.QEvent.Type.LayoutRequest and self._view is not None:
                # the tables settled on their sizes after the step was shown: wrap the texts to them
                # (texts wrapped for the tables of an earlier sentence kept that width)
                QtCore.QTimer.singleShot(0, self, self._refit_texts)
            return False
        if event.type() == QtCore.QEvent.Type.Leave:
            self.hover_cell(None)
        return False

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        """What an image export renders: the step's title, explanation, tables and arithmetic."""
        return self

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        self.setAutoFillBackground(color is not None)
        if color is not None:
            palette = self.palette()
            palette.setColor(QtGui.QPalette.ColorRole.Window, color)
            self.setPalette(palette)
