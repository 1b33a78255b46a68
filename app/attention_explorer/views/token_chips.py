"""The sentence's words as chips: hover one to highlight it everywhere, click to pin it.

Unknown words appear as struck-through red chips with a tooltip offering the nearest known words.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..controller import Controller
from ..engine import nearest_words
from . import theme
from .flow_layout import FlowLayout


class _Chip(QtWidgets.QLabel):
    hovered = QtCore.Signal(object)
    clicked = QtCore.Signal()

    def __init__(self, text: str, token_index: int | None):
        super().__init__(text)
        self.token_index = token_index
        self.setMouseTracking(True)
        self.setCursor(QtCore.Qt.CursorShape.PointingHandCursor if token_index is not None
                       else QtCore.Qt.CursorShape.WhatsThisCursor)

    def enterEvent(self, event):  # noqa: N802 - Qt API
        self.hovered.emit(self.token_index)
        super().enterEvent(event)

    def leaveEvent(self, event):  # noqa: N802 - Qt API
        self.hovered.emit(None)
        super().leaveEvent(event)

    def mousePressEvent(self, event):  # noqa: N802 - Qt API
        if event.button() == QtCore.Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mousePressEvent(event)


class QtTokenChips(QtWidgets.QWidget):
    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.chips: list[_Chip] = []
        self._layout = FlowLayout(self, spacing=5)
        controller.trace_changed.connect(self._rebuild)
        controller.focus_changed.connect(self._restyle)
        controller.pinned_changed.connect(self._restyle)
        self._rebuild()

    def chip_for_token(self, index: int) -> _Chip:
        return next(chip for chip in self.chips if chip.token_index == index)

    def _rebuild(self, *_):
        for chip in self.chips:
            self._layout.removeWidget(chip)
            chip.deleteLater()
        self.chips = []
        trace = self.controller.trace
        labels = iter(trace.labels if trace else [])
        index = 0
        for word in self.controller.words:
            if word.known and trace is not None:
                chip = _Chip(next(labels), index)
                chip.setToolTip("Hover to see where this word looks; click to pin it")
                index += 1
            else:
                chip = _Chip(word.text, None)
                near = nearest_words(word.text, self.controller.model.vocabulary)
                chip.setToolTip("Unknown word, left out of the computation."
                                + (f" Nearest known: {', '.join(near)}" if near else ""))
            chip.hovered.connect(self.controller.set_hovered)
            if chip.token_index is not None:
                chip.clicked.connect(lambda i=chip.token_index: self.controller.toggle_pinned(i))
            self._layout.addWidget(chip)
            self.chips.append(chip)
        self._restyle()
        self.updateGeometry()

    def _restyle(self, *_):
        focus, pinned = self.controller.focus, self.controller.pinned
        fg, hl = theme.foreground().name(), theme.highlight().name()
        for chip in self.chips:
            if chip.token_index is None:
                style = "color:#E03131; border:1px dashed #E03131; text-decoration:line-through;"
            elif chip.token_index == focus:
                style = f"color:white; background:{hl}; border:1px solid {hl};"
            else:
                style = f"color:{fg}; border:1px solid palette(mid);"
            if chip.token_index is not None and chip.token_index == pinned:
                style += " font-weight:bold;"
            chip.setStyleSheet(f"QLabel {{ {style} border-radius:9px; padding:2px 8px; }}")
            chip.setProperty("focused", chip.token_index is not None and chip.token_index == focus)
