"""A sealed wrapped label: a new text lays out what is around it only when it needs other room, and the
room it takes is always what a label made with that text takes, whatever happened while it was hidden."""

from PySide6 import QtCore, QtWidgets

from attention_explorer.views.elided_label import WrappedLabelSeal
from event_log import EventLog
from screen_oracle import settle

LONG = "A line long enough to wrap onto three lines in a panel this narrow, " * 2
SHORT = "one short line"
OTHER_SHORT = "short line one"  # the same longest word: the same least width


def panel_with(qtbot, text: str):
    panel = QtWidgets.QWidget()
    qtbot.addWidget(panel)
    label = QtWidgets.QLabel(text)
    label.setWordWrap(True)
    layout = QtWidgets.QVBoxLayout(panel)
    layout.addWidget(WrappedLabelSeal(label))
    below = QtWidgets.QPushButton("below")
    layout.addWidget(below)
    layout.addStretch(1)
    panel.resize(240, 300)
    panel.show()
    settle()
    return panel, label, below


def test_a_text_needing_the_same_room_lays_nothing_out_and_other_room_does(qtbot):
    panel, label, below = panel_with(qtbot, SHORT)
    with EventLog([QtCore.QEvent.Type.LayoutRequest], panel) as asked:
        label.setText(OTHER_SHORT)
        settle()
    assert asked.seen == []
    label.setText(LONG)
    settle()
    fresh = panel_with(qtbot, LONG)
    assert below.geometry() == fresh[2].geometry()
    assert label.height() >= label.heightForWidth(label.width()) > label.fontMetrics().lineSpacing() * 2


def test_a_text_changed_while_hidden_takes_its_own_room_when_shown(qtbot):
    """Qt asks no layout of a hidden widget: the next tokens' three-line title, made one line while the
    panel was put away (an encoder open), kept its three lines' room when a decoder showed it again
    (found by a random walk)."""
    panel, label, below = panel_with(qtbot, LONG)
    panel.hide()
    label.setText(SHORT)
    settle()
    panel.show()
    settle()
    fresh = panel_with(qtbot, SHORT)
    assert below.geometry() == fresh[2].geometry()



def test_the_next_tokens_title_takes_its_own_room_after_a_toy_model_and_a_decoder(real_window, qtbot):
    """Between a toy model (a two-line title: where next tokens show) and a decoder (one line), the seal
    compared the room its label needed with what it had last passed on, which a resize had already
    taken as passed: the title kept two lines' height, the five bars pushed down (found by a random walk).
    It now compares the height the label needs with the height it has."""
    from pathlib import Path

    from view_twins import check_twin

    data = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
    window = real_window(str(data / "tiny-bart"))
    window.pretrained.dock.show()
    settle()
    c, box = window.controller, window.options_bar.model_box
    for source in ("tiny-llama.gguf", "tiny-bert", "tiny-llama.gguf"):
        index = box.findData("cat-ate-fish")
        box.setCurrentIndex(index)
        box.activated.emit(index)  # as a pick from the list
        qtbot.waitUntil(lambda: not c.is_real and not c.busy)
        settle()
        c.open_model(str(data / source), "the cat sat on the mat")
        qtbot.waitUntil(lambda: c.is_real and c.trace is not None and not c.busy)
        settle()
        title = window.pretrained.next_tokens.title
        assert title.height() == title.heightForWidth(title.width())
        check_twin(window.pretrained.next_tokens, f"a toy model, then {source}")
