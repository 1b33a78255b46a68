"""One focus, a word and its role, set from any view and shown the same way in every view: the
heatmap (row or column), the row bars (where the word looks, or who looks at it), the step tables
and the lesson panels that show the sentence."""

import numpy as np
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer.controller import LOOKED_AT, LOOKING
from attention_explorer.engine.steps import step_index
from gui_helpers import hover_arc_end


def settle():
    for _ in range(3):
        QtWidgets.QApplication.processEvents()


def move_to(widget: QtWidgets.QWidget, point: QtCore.QPoint) -> None:
    """Arrive from a neighbouring pixel, pausing as a hand would (pyqtgraph rate-limits moves)."""
    for target in (point + QtCore.QPoint(2, 2), point):
        QTest.qWait(15)
        QTest.mouseMove(widget, target)
    settle()


def hover_column_label(heatmap, index: int) -> None:
    """Over the top edge at the column's place (its label may be thinned out; the place still works)."""
    x = heatmap.view.mapViewToScene(QtCore.QPointF(index, 0)).x()
    y = heatmap.top_axis.sceneBoundingRect().bottom() - 8
    move_to(heatmap.graphics.viewport(), heatmap.graphics.mapFromScene(QtCore.QPointF(x, y)))


def weights_table(window):
    timeline = window.timeline
    timeline.set_tables_shown(True)
    timeline.go_to(step_index("softmax"))
    settle()
    return timeline.panel.results()["weights"]


def test_a_heatmap_column_focuses_the_word_looked_at_and_every_view_shows_it(qtbot, make_window):
    window = make_window()
    heatmap, controller = window.heatmap, window.controller
    table = weights_table(window)
    hover_column_label(heatmap, 1)  # "cat", as the word looked at
    assert (controller.focus, controller.focus_role) == (1, LOOKED_AT)
    assert heatmap.col_highlight.isVisible() and not heatmap.row_highlight.isVisible()
    assert heatmap.col_highlight.rect().center().x() == 1
    weights = controller.trace.heads[controller.head].weights
    np.testing.assert_array_equal(window.row_bars.shown_row(), weights[:, 1])  # who looks at "cat"
    assert "who looks at “cat”" in window.row_bars.plot.titleLabel.text
    panel = window.timeline.panel
    tables = [*panel.inputs().values(), *panel.results().values()]
    assert table in tables and all(t.focus_mark() == (None, 1) for t in tables)  # its column in the n × n tables
    window.timeline.go_to(step_index("q"))  # hides the heatmap (no word-to-word matrix yet), so the mouse left it
    settle()
    window.controller.set_hovered(1, LOOKED_AT)
    assert window.timeline.panel.results()["q"].focus_mark() == (1, None)  # one row per word: its row


def test_a_step_table_row_focuses_the_word_looking(qtbot, make_window):
    window = make_window()
    controller = window.controller
    table = weights_table(window)
    qtbot.waitUntil(lambda: table.isVisible() and table.viewport().height() > 0)
    y = table.rowViewportPosition(2) + table.rowHeight(2) // 2
    move_to(table.viewport(), QtCore.QPoint(table.columnViewportPosition(0) + 5, y))
    assert (controller.focus, controller.focus_role) == (2, LOOKING)  # "sat"
    assert table.focus_mark() == (2, None)
    assert window.heatmap.row_highlight.isVisible() and window.heatmap.row_highlight.rect().center().y() == 2
    np.testing.assert_array_equal(window.row_bars.shown_row(), controller.trace.heads[controller.head].weights[2])
    assert [c.property("focused") for c in window.chips.chips] == [False, False, True, False, False, False]


def test_an_arc_right_end_sets_the_same_focus_as_a_heatmap_column(qtbot, make_window):
    window = make_window()
    hover_arc_end(window.arcs, "right", 3)
    assert (window.controller.focus, window.controller.focus_role) == (3, LOOKED_AT)
    assert window.heatmap.col_highlight.isVisible()


def test_the_lesson_panels_frame_the_focused_word(qtbot, make_window):
    window = make_window()
    window.show_lesson("heads")
    panel = window.lessons_window.panels["heads"]
    qtbot.waitUntil(lambda: not panel.is_stale())
    window.controller.set_hovered(4, LOOKING)
    assert all(heatmap.focus() == (4, None) for heatmap in panel.head_maps)
    window.controller.set_hovered(4, LOOKED_AT)
    assert all(heatmap.focus() == (None, 4) for heatmap in panel.head_maps)
    assert panel.concat_map.focus() == (4, None)  # words on its rows only: the row, whatever the role
    window.controller.set_hovered(None)
    assert all(heatmap.focus() == (None, None) for heatmap in panel.head_maps)
    window.lessons_window.close()
