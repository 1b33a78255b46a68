"""The box where a user says how many tokens a model writes at most: the decoder's Generate and the
encoder–decoder's Write take the same kind of count."""

from __future__ import annotations

from PySide6 import QtWidgets

DEFAULT_TOKENS = 32


def token_count_box(most: int, tip: str) -> QtWidgets.QSpinBox:
    """1 … `most` tokens, DEFAULT_TOKENS (or fewer) to start, its unit shown after the number."""
    box = QtWidgets.QSpinBox()
    box.setRange(1, most)
    box.setValue(min(DEFAULT_TOKENS, most))
    box.setSuffix(" tokens")
    box.setToolTip(tip)
    return box
