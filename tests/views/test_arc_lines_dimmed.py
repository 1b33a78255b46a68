"""The arcs' lines dimmed under a focused word are drawn plainly on screen, where at a quarter of their
strength their steps cannot be seen, and smoothly everywhere else: undimmed, and in figures. Each kind
of picture is kept, so a focus that comes and goes draws neither again."""

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attention_explorer.views.arc_diagram import DIMMED_OPACITY
from attention_explorer.views.arc_lines import ArcLinesItem, bucket_pen


@pytest.fixture
def lines(qtbot):
    """Two wide crossing lines and a thin one, in a view 200 px wide a line's span and 40 px a row."""
    item = ArcLinesItem()
    colour = QtGui.QColor("#1f77b4")
    thin, wide = bucket_pen(colour, 0), bucket_pen(colour, 9)
    item.set_batches([(thin, np.array([[0, 1]])), (wide, np.array([[0, 3], [3, 0]]))], 4)
    scene = QtWidgets.QGraphicsScene()
    scene.addItem(item)
    view = QtWidgets.QGraphicsView(scene)
    view.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setBackgroundBrush(QtGui.QColor("white"))
    view.setSceneRect(QtCore.QRectF(-0.1, -1, 1.2, 5))
    view.setTransform(QtGui.QTransform.fromScale(200, 40))
    view.resize(260, 220)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    yield item, view
    view.close()
    del scene  # held until here: the view does not own its scene


def colours(image: QtGui.QImage) -> int:
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), np.uint32, image.sizeInBytes() // 4)
    return len(np.unique(pixels))


def on_screen(view) -> QtGui.QImage:
    view.viewport().repaint()
    return view.viewport().grab().toImage()


def in_a_figure(view) -> QtGui.QImage:
    image = QtGui.QImage(view.viewport().size(), QtGui.QImage.Format.Format_RGB32)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    view.render(painter, QtCore.QRectF(image.rect()), view.viewport().rect())
    painter.end()
    return image


def test_dimmed_lines_are_plain_on_screen_and_smooth_in_a_figure(lines):
    item, view = lines
    smooth = colours(on_screen(view))
    item.setOpacity(DIMMED_OPACITY)
    dimmed = colours(on_screen(view))
    # plain: the background, the thin line's colour, the wide ones' and where they cross
    assert dimmed <= 4 < smooth
    assert colours(in_a_figure(view)) > 4 * dimmed  # a figure's dimmed lines keep their smooth edges


def test_a_focus_that_comes_and_goes_draws_each_picture_once(lines, monkeypatch):
    item, view = lines
    drawn = []
    render = ArcLinesItem._render
    monkeypatch.setattr(ArcLinesItem, "_render", lambda self, *args: drawn.append(args[-1]) or render(self, *args))
    first = on_screen(view)
    for _ in range(3):
        item.setOpacity(DIMMED_OPACITY)
        on_screen(view)
        item.setOpacity(1.0)
        assert on_screen(view) == first
    assert drawn == [False]  # the plain picture once; the smooth one, drawn as the view was shown, never again
