"""A step table that an edit leaves as it was (W_O never changes) is not prepared or repainted again."""

import numpy as np
from PySide6 import QtCore, QtWidgets

from attention_explorer.engine.step_types import StepTable
from attention_explorer.views.matrix_table import MatrixTable
from screen_oracle import check_backing_store, settle


def w_o(values) -> StepTable:
    return StepTable("w_o", "W_O", np.array(values, dtype=float), ("p1", "p2"), ("animal", "action"))


def test_the_same_table_again_changes_nothing_and_a_new_one_is_shown(qtbot):
    table = MatrixTable()
    qtbot.addWidget(table)
    table.set_table(w_o([[1.0, 0.5], [0.0, -2.0]]), "viridis")
    changes = []
    table.matrix_model.dataChanged.connect(lambda *_: changes.append("cells"))
    table.matrix_model.modelReset.connect(lambda: changes.append("reset"))
    table.set_table(w_o([[1.0, 0.5], [0.0, -2.0]]), "viridis")
    assert changes == []
    table.set_table(w_o([[1.0, 0.5], [0.0, -3.0]]), "viridis")
    assert changes == ["cells"] and table.matrix_model.look(1, 1)[0] == "−3"  # a true minus sign


def test_a_table_half_filled_by_the_animation_is_shown_complete_again(qtbot):
    table = MatrixTable()
    qtbot.addWidget(table)
    table.set_table(w_o([[1.0, 0.5], [0.0, -2.0]]), "viridis")
    table.matrix_model.set_filled_units(1)
    assert table.matrix_model.look(1, 1) is None
    table.set_table(w_o([[1.0, 0.5], [0.0, -2.0]]), "viridis")
    QtWidgets.QApplication.processEvents()
    assert table.matrix_model.look(1, 1) is not None
    table.set_table(w_o([[1.0, 0.5], [0.0, -2.0]]), "magma")  # other colours: prepared again
    assert table.matrix_model.look(0, 0)[1] != table.matrix_model.look(1, 1)[1]


class DamageRecorder(QtCore.QObject):
    """The area each paint of a widget covered."""

    def __init__(self, widget: QtWidgets.QWidget):
        super().__init__(widget)
        self.areas: list[int] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QtCore.QEvent.Type.Paint:
            self.areas.append(sum(rect.width() * rect.height() for rect in event.region()))
        return False


def test_a_moved_focus_repaints_the_two_bands_it_left_and_entered_and_the_screen_shows_it(qtbot):
    n = 30
    values = np.arange(n * n, dtype=float).reshape(n, n) / 7
    values[np.triu_indices(n, 1)] = -np.inf  # masked cells: a translucent fill, darker where painted twice
    labels = tuple(f"w{i}" for i in range(n))
    table = MatrixTable()
    qtbot.addWidget(table)
    table.set_table(StepTable("scores", "scores", values, labels, labels), "viridis")
    table.show()
    qtbot.waitExposed(table)
    settle()
    whole = table.viewport().width() * table.viewport().height()
    damage = DamageRecorder(table.viewport())
    for row, col in ((2, None), (25, None), (None, 4), (7, 20), (8, 21), (None, None)):
        damage.areas.clear()
        table.set_focus(row, col)
        settle()
        assert damage.areas and sum(damage.areas) < whole / 2, (row, col, damage.areas, whole)
        check_backing_store(table, f"focus moved to row {row}, column {col}")


def test_a_table_of_another_shape_is_laid_out_and_painted_once(qtbot):
    """A generation's scrubber gives the step tables one row and column fewer at each step: the table
    is laid out as it is given them, so the event loop paints it once, not again after the layout."""
    scroll = QtWidgets.QScrollArea()  # the steps panel scrolls its tables, each as large as its matrix
    qtbot.addWidget(scroll)
    table = MatrixTable()
    scroll.setWidget(table)
    scroll.resize(600, 300)

    def table_of(n: int) -> StepTable:
        labels = tuple(f"w{i}" for i in range(n))
        return StepTable("weights", "weights", np.full((n, n), 1 / n), labels, labels)

    table.set_table(table_of(40), "viridis")
    scroll.show()
    qtbot.waitExposed(scroll)
    settle()
    damage = DamageRecorder(table.viewport())
    for n in (39, 38, 41):
        damage.areas.clear()
        table.set_table(table_of(n), "viridis")
        settle()
        assert len(damage.areas) == 1, (n, damage.areas)
        assert table.matrix_model.rowCount() == n and table.horizontalHeader().count() == n
        check_backing_store(scroll, f"a table of {n} rows")


def test_a_table_of_another_shape_asks_its_model_for_no_header_sizes(qtbot, monkeypatch):
    """The headers are given their height and width: measuring every section's label through the
    model on each new shape (Qt's size hint: 4 questions a section, ~1,400 a table at 77 tokens) cost
    a step of the scrubber 2–3 ms a table for a size that was then overridden."""
    from attention_explorer.views.matrix_table import MatrixModel

    asked = []
    answer = MatrixModel.headerData

    def counted(self, section, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole):
        asked.append(int(role.value if hasattr(role, "value") else role))
        return answer(self, section, orientation, role)

    monkeypatch.setattr(MatrixModel, "headerData", counted)
    table = MatrixTable()
    qtbot.addWidget(table)
    for n in (60, 59, 61):
        labels = tuple(f"w{i}" for i in range(n))
        asked.clear()
        table.set_table(StepTable("scores", "scores", np.ones((n, n)), labels, labels), "viridis")
        assert int(QtCore.Qt.ItemDataRole.SizeHintRole.value) not in asked, n
        assert table.horizontalHeader().height() == table.horizontalHeader().minimumHeight()
    table.show()
    qtbot.waitExposed(table)
    settle()
    check_backing_store(table, "a table given three shapes")


def test_every_column_holds_its_label_and_its_widest_text_for_tables_small_and_large(qtbot):
    """Column widths come from each label's width (measured once, kept for the labels asked again by
    another layer or head) and the column's widest text: small tables measure their cells, large ones
    the widest number the table can write."""
    from PySide6 import QtGui

    from attention_explorer.engine.cell_arithmetic import fmt
    from attention_explorer.views.matrix_table import CELL_PADDING

    table = MatrixTable()
    qtbot.addWidget(table)
    rng = np.random.default_rng(3)
    cells = QtGui.QFontMetrics(table.font())
    header = QtGui.QFontMetrics(table.horizontalHeader().font())
    for n, scale in ((5, 1.0), (5, 300.0), (90, 1.0), (90, 40.0)):
        labels = tuple(("a much longer label" if i == 2 else f"w{i}") for i in range(n))
        values = (rng.standard_normal((n, n)) * scale).astype(np.float32)
        table.set_table(StepTable("scores", "scores", values, labels, labels), "viridis")
        for col in range(n):
            width = table.columnWidth(col)
            widest = max(cells.horizontalAdvance(fmt(v)) for v in values[:, col])
            assert width >= header.horizontalAdvance(labels[col]) + CELL_PADDING
            assert width >= widest + CELL_PADDING, (n, scale, col)
            if n * n <= 64 * 64:  # measured: no wider than needed
                assert width == max(header.horizontalAdvance(labels[col]), widest) + CELL_PADDING
        assert table.verticalHeader().width() == max(header.horizontalAdvance(x) for x in labels) + CELL_PADDING


def _layout(table: MatrixTable) -> tuple:
    """What a table's shape and sizes are: each column's width, the row labels' width, its own size."""
    cols = table.matrix_model.columnCount()
    return ([table.columnWidth(c) for c in range(cols)], table.verticalHeader().width(), table.size().toTuple())


def test_a_table_cut_extended_or_replaced_is_laid_out_as_a_table_given_it_fresh(qtbot):
    """A scrubber's steps show corners of one matrix, with long and short labels and numbers: the widths
    set from the commonest one and those kept for the labels of a longer text are exactly a fresh table's."""
    from attention_explorer.views.matrix_table import MEASURED_CELLS
    rng = np.random.default_rng(7)
    n = 40
    values = rng.normal(size=(n, n)) * np.logspace(0, 4, n)  # columns of short and of long numbers
    values[np.triu_indices(n, 1)] = -np.inf
    labels = tuple(("an unusually long word" if i % 9 == 4 else f"w{i}") for i in range(n))
    big = int(np.sqrt(MEASURED_CELLS)) + 5  # past the measured size: every column as wide as the widest number
    big_values = rng.normal(size=(big, big))
    big_labels = tuple(("a long label here" if i % 50 == 7 else str(i)) for i in range(big))

    def step(k, of=values, names=labels):
        return StepTable("masked", "masked scores", of[:k, :k], names[:k], names[:k])

    shown = MatrixTable()
    qtbot.addWidget(shown)
    history = [step(n), step(n - 1), step(n - 5), step(n - 4), step(n), step(3), step(1),
               step(big, big_values, big_labels), step(big - 1, big_values, big_labels),
               step(big, big_values * 1000, big_labels),  # another head: a number two digits wider, every column
               step(big, big_values, big_labels), step(12), step(n)]
    set_one_by_one = []

    def set_column_width(col, width):
        set_one_by_one.append(col)
        MatrixTable.setColumnWidth(shown, col, width)

    shown.setColumnWidth = set_column_width
    for table in history:
        set_one_by_one.clear()
        shown.set_table(table, "viridis")
        if table.values.shape == (big, big):  # most columns to one width: that one in one go, the few others each
            assert len(set_one_by_one) < big // 10
        fresh = MatrixTable()
        qtbot.addWidget(fresh)
        fresh.set_table(table, "viridis")
        settle()
        assert _layout(shown) == _layout(fresh), table.values.shape
