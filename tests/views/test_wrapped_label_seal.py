"""A wrapped label whose text changes often, sealed: its new texts lay nothing around it out again,
unless it needs another height at its width or its longest word no longer fits."""

from PySide6 import QtCore, QtWidgets

from attention_explorer.views.layout_seals import WrappedLabelSeal
from event_log import EventLog
from screen_oracle import settle

LAYOUT = (QtCore.QEvent.Type.LayoutRequest,)


def sealed_panel(qtbot, width: int):
    panel = QtWidgets.QWidget()
    label = QtWidgets.QLabel()
    label.setWordWrap(True)
    below = QtWidgets.QPushButton("below")
    layout = QtWidgets.QVBoxLayout(panel)
    layout.addWidget(WrappedLabelSeal(label))
    layout.addWidget(below)
    layout.addStretch(1)
    qtbot.addWidget(panel)
    panel.resize(width, 300)
    panel.show()
    qtbot.waitExposed(panel)
    return panel, label, below


def test_a_text_of_as_many_lines_lays_nothing_out_and_one_of_more_moves_what_is_below(qtbot):
    panel, label, below = sealed_panel(qtbot, 240)
    label.setText("Token 5 of 64: the last row chose 'cat'")
    settle()
    height, top = label.height(), below.y()
    with EventLog(LAYOUT, panel) as asked:
        for step in range(6, 12):
            label.setText(f"Token {step} of 64: the last row chose 'dog{step}'")
            settle()
            assert label.height() == height == label.heightForWidth(label.width())
    assert asked.seen == [] and below.y() == top
    label.setText("A much longer line that wraps over several lines at this width, " * 3)
    settle()
    assert label.height() == label.heightForWidth(label.width()) > height  # shown whole, every line
    assert below.y() > top and below.y() >= label.mapTo(panel, QtCore.QPoint(0, label.height())).y()
    label.setText("short")  # one line, where the steps' texts took two
    settle()
    assert label.height() == label.heightForWidth(label.width()) < height and below.y() < top


def test_a_longest_word_wider_than_the_label_widens_it_as_the_layout_allows(qtbot):
    panel, label, _below = sealed_panel(qtbot, 120)
    label.setText("a few short words")
    settle()
    assert panel.minimumSizeHint().width() < 120
    label.setText("averyveryverylongwordthatcannotwrapanywhere")
    settle()
    assert panel.minimumSizeHint().width() >= label.minimumSizeHint().width() > 120


def test_a_text_set_while_hidden_gets_its_height_once_shown(qtbot):
    """Qt sends a hidden widget's parent no layout request: a dock closed while the text changed kept the
    old text's height once opened again (the next tokens' title, two lines high for one)."""
    panel, label, below = sealed_panel(qtbot, 240)
    label.setText("A much longer line that wraps over several lines at this width, " * 2)
    settle()
    tall = label.height()
    panel.hide()
    label.setText("short")
    settle()
    panel.show()
    settle()
    assert label.height() == label.heightForWidth(label.width()) < tall
    assert below.y() < tall
