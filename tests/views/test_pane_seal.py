"""A pane whose parts change their sizes among themselves, sealed: the layouts around it are asked again
only when the pane no longer fits the room it has."""

from PySide6 import QtCore, QtWidgets

from attention_explorer.views.layout_seals import PaneSeal
from event_log import EventLog
from screen_oracle import settle

LAYOUT = (QtCore.QEvent.Type.LayoutRequest,)


def test_a_caption_taking_a_line_more_lays_out_the_pane_alone_until_the_pane_no_longer_fits(qtbot):
    outer = QtWidgets.QWidget()
    pane = QtWidgets.QWidget()
    caption = QtWidgets.QLabel("one line")
    caption.setWordWrap(True)
    grid = QtWidgets.QListWidget()  # takes what the caption leaves
    inner = QtWidgets.QVBoxLayout(pane)
    inner.addWidget(caption)
    inner.addWidget(grid, 1)
    below = QtWidgets.QPushButton("below")
    layout = QtWidgets.QVBoxLayout(outer)
    layout.addWidget(PaneSeal(pane), 1)
    layout.addWidget(below)
    qtbot.addWidget(outer)
    outer.resize(260, 400)
    outer.show()
    qtbot.waitExposed(outer)
    settle()
    pane_place, grid_height, below_top = pane.geometry(), grid.height(), below.y()
    with EventLog(LAYOUT, outer) as asked:
        caption.setText("a caption that takes several lines at this width, once a note joins it: " * 2)
        settle()
    assert asked.seen == []  # nothing around the pane laid out again
    assert pane.geometry() == pane_place and below.y() == below_top
    assert caption.height() > caption.fontMetrics().lineSpacing() * 2 and grid.height() < grid_height
    with EventLog(LAYOUT, outer) as asked:
        grid.setMinimumHeight(500)  # more than the pane has: the layouts around are asked, and give it room
        settle()
    assert (outer, QtCore.QEvent.Type.LayoutRequest) in asked.seen
    assert grid.height() >= 500 and pane.height() >= pane.minimumSizeHint().height()
