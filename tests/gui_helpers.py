"""Moving the mouse over parts of real widgets, offscreen (QTest events reach pyqtgraph's hover)."""

from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest


def _settle():
    for _ in range(3):
        QtWidgets.QApplication.processEvents()


def _move(widget, point: QtCore.QPoint) -> None:
    """Arrive at `point` from a neighbouring pixel: a move to where the cursor already is (left
    there by an earlier test) sends no event. pyqtgraph drops moves that come less than 10 ms
    after the previous one (its mouseRateLimit), so pause before each, as a hand would."""
    for target in (point + QtCore.QPoint(3, 3), point):
        QTest.qWait(15)
        QTest.mouseMove(widget, target)


def hover_cell(heatmap, row: int, col: int) -> QtCore.QPoint:
    view = heatmap.plot.getViewBox()
    point = heatmap.graphics.mapFromScene(view.mapViewToScene(QtCore.QPointF(col, row)))
    _move(heatmap.graphics.viewport(), point)
    _settle()
    return point


def hover_arc_end(arcs, side: str, index: int) -> QtCore.QPoint:
    rect = arcs.label_scene_rect(side, index)
    point = arcs.graphics.mapFromScene(rect.center())
    _move(arcs.graphics.viewport(), point)
    _settle()
    return point


def hover_axis_word(graphics, axis, index: int) -> QtCore.QPoint:
    """Over word `index` as drawn on a TokenAxis of the plot in `graphics`."""
    point = graphics.mapFromScene(dict(axis.drawn_labels())[index].center())
    _move(graphics.viewport(), point)
    _settle()
    return point


def hover_widget(widget) -> None:
    _move(widget, widget.rect().center())
    _settle()
