"""A step table that an edit leaves as it was (W_O never changes) is not prepared or repainted again."""

import numpy as np
from PySide6 import QtWidgets

from attention_explorer.engine.step_types import StepTable
from attention_explorer.views.matrix_table import MatrixTable


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
