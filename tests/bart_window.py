"""Driving an encoder–decoder (the tiny BART checkpoint) in the window as a user does: its folder, the
source the window opens with, a part chosen in the bar's combo box, a target typed into its box. The
window itself is the `bart_window` fixture (tests/views/conftest.py)."""

from pathlib import Path

from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

BART = str(Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-bart")
SOURCE = "the cat sat on the mat"


def settle(qtbot, controller) -> None:
    qtbot.waitUntil(lambda: not controller.busy)
    QtWidgets.QApplication.processEvents()


def choose_part(qtbot, window, title: str) -> None:
    """Pick a part in the bar's combo box with the keyboard, as a user does (it emits `activated`)."""
    box = window.pretrained.bar.part
    box.setFocus()
    wanted = box.findText(title)
    assert wanted >= 0
    while box.currentIndex() != wanted:
        QTest.keyClick(box, QtCore.Qt.Key.Key_Down if box.currentIndex() < wanted else QtCore.Qt.Key.Key_Up)
    QtWidgets.QApplication.processEvents()


def type_target(qtbot, window, text: str) -> None:
    edit = window.pretrained.target_box.edit
    edit.setFocus()
    edit.selectAll()
    QTest.keyClick(edit, QtCore.Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)
    settle(qtbot, window.controller)
