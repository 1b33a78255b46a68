"""A panel's least height with a word-wrapped label in it, for a splitter to honour.

A splitter reads only a panel's minimum size, and a layout's minimum leaves a wrapped label's extra
lines out: squeezed to it beside the model view at 1280 × 720, a panel's wrapped lines were cut at
their top and bottom.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


def with_wrapped_label(hint: QtCore.QSize, label: QtWidgets.QLabel) -> QtCore.QSize:
    """`hint` (the panel's own minimum) grown by the height `label` takes wrapped at its width beyond
    its own minimum."""
    if label.isVisible() and label.width() > 0:
        wrapped = label.heightForWidth(label.width())
        hint.setHeight(hint.height() + max(0, wrapped - label.minimumSizeHint().height()))
    return hint
