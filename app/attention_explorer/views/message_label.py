"""The note a view shows in place of its drawing when there is nothing to draw."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


def message_label() -> QtWidgets.QLabel:
    """Centred, wrapped and hidden until a view has something to say ("the sentence is empty")."""
    label = QtWidgets.QLabel("")
    label.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    # a message naming a 30,000-letter "word" must not make the label (and the window) that wide
    label.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
    label.hide()
    return label
