"""Moving the mouse over parts of real widgets, offscreen (QTest events reach pyqtgraph's hover)."""

from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest


def _settle():
    for _ in range(3):
        QtWidgets.QApplication.processEvents()


def hover_cell(heatmap, row: int, col: int) -> QtCore.QPoint:
    view = heatmap.plot.getViewBox()
    point = heatmap.graphics.mapFromScene(view.mapViewToScene(QtCore.QPointF(col, row)))
    QTest.mouseMove(heatmap.graphics.viewport(), point)
    _settle()
    return point


def hover_arc_end(arcs, side: str, index: int) -> QtCore.QPoint:
    rect = arcs.label_scene_rect(side, index)
    point = arcs.graphics.mapFromScene(rect.center())
    QTest.mouseMove(arcs.graphics.viewport(), point)
    _settle()
    return point


def hover_widget(widget) -> None:
    QTest.mouseMove(widget, widget.rect().center())
    _settle()
