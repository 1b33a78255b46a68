"""Lines drawn from a NumPy array through its memory (views/line_array.py), even when Shiboken still
holds a wrapper of another type at that address: it hands that wrapper back for the address, drawLines
raised TypeError inside a paint, and PySide crashed printing it (a test run, once in some hundreds)."""

import numpy as np
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from attention_explorer.views.line_array import draw_line_array, line_array


def drawn(lines: np.ndarray) -> QtGui.QImage:
    image = QtGui.QImage(64, 64, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QtGui.QPainter(image)
    painter.setPen(QtGui.QPen(QtGui.QColor("black"), 1))
    draw_line_array(painter, lines)
    painter.end()
    return image


def by_hand(lines: np.ndarray) -> QtGui.QImage:
    image = QtGui.QImage(64, 64, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QtGui.QPainter(image)
    painter.setPen(QtGui.QPen(QtGui.QColor("black"), 1))
    painter.drawLines([QtCore.QLineF(*row) for row in lines.tolist()])
    painter.end()
    return image


def test_the_array_draws_what_its_lines_one_by_one_draw(qapp):
    lines = line_array(4.0, 60.0, np.array([2.0, 10.5, 30.0]), np.array([50.0, 5.0, 31.0]))
    assert lines.tolist() == [[4, 2, 60, 50], [4, 10.5, 60, 5], [4, 30, 60, 31]]
    assert drawn(lines) == by_hand(lines) != by_hand(lines[:0])


def test_lines_whose_memory_another_wrapper_still_claims_are_drawn(qapp):
    lines = line_array(4.0, 60.0, np.array([2.0, 10.5, 30.0]), np.array([50.0, 5.0, 31.0]))
    claimed = shiboken6.wrapInstance(lines.ctypes.data, QtCore.QMetaObject)  # as a stale wrapper would
    assert type(shiboken6.wrapInstance(lines.ctypes.data, QtCore.QLineF)) is QtCore.QMetaObject
    assert drawn(lines) == by_hand(lines)
    del claimed


def bars_image(bars) -> QtGui.QImage:
    import pyqtgraph as pg

    scene = QtWidgets.QGraphicsScene()
    scene.addItem(bars)
    image = QtGui.QImage(40, 40, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QtGui.QPainter(image)
    scene.render(painter, QtCore.QRectF(0, 0, 40, 40), QtCore.QRectF(0, 0, 4, 4))
    painter.end()
    scene.removeItem(bars)
    assert isinstance(bars, pg.BarGraphItem)
    return image


def test_bars_whose_memory_another_wrapper_still_claims_are_drawn(qapp):
    """The row bars and the scaling lesson's bars: pyqtgraph's item draws one colour's bars through the
    same kind of wrapper, so ours checks it too."""
    from attention_explorer.views.bars import BarGraphItem

    bars = BarGraphItem(x=[0.5, 1.5, 2.5], height=[1.0, 3.0, 2.0], width=0.8, pen=None, brush="w")
    plain = bars_image(bars)
    assert plain != QtGui.QImage(plain.size(), plain.format())  # something is drawn
    claimed = shiboken6.wrapInstance(bars._rectarray.ndarray().ctypes.data, QtCore.QMetaObject)
    assert bars_image(bars) == plain
    del claimed
