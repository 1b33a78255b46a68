"""A note standing in a stacked widget's page in place of a view: centred, wrapped, never focused."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


def page_note(text: str, stack: QtWidgets.QStackedWidget) -> QtWidgets.QLabel:
    """A label for one of `stack`'s pages that hands the keyboard focus to the stack.

    When the page holding the focus is hidden, the stack gives the focus to the page it shows. A label
    given the focus makes itself a text control, which centres the text by the control's own height: a
    pixel above where a label never focused draws it, and the control takes keys meant for the window.
    The stack draws nothing and passes keys on to the window."""
    note = QtWidgets.QLabel(text)
    note.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
    note.setWordWrap(True)
    note.setFocusProxy(stack)
    return note
