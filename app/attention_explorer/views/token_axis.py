"""A pyqtgraph axis whose tick labels are the sentence's words: hoverable, clickable, highlightable."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from . import theme


class TokenAxis(pg.AxisItem):
    """Word labels at integer positions. Emits the word index under the mouse; draws the focus word
    in the highlight colour, bold."""

    token_hovered = QtCore.Signal(object)  # index or None
    token_clicked = QtCore.Signal(int)

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self._labels: list[str] = []
        self._focus: int | None = None
        self._text_rects: list[tuple[QtCore.QRectF, str]] = []
        self._hovered: int | None = None
        self.setAcceptHoverEvents(True)

    def set_tokens(self, labels: list[str]) -> None:
        self._labels = list(labels)
        self.setTicks([list(enumerate(self._labels)), []])

    def set_focus(self, index: int | None) -> None:
        if index != self._focus:
            self._focus = index
            self.picture = None  # AxisItem caches its drawing
            self.update()

    def token_at(self, pos: QtCore.QPointF) -> int | None:
        for rect, text in self._text_rects:
            if rect.adjusted(-2, -2, 2, 2).contains(pos) and text in self._labels:
                return self._labels.index(text)
        return None

    # --- pyqtgraph hooks ------------------------------------------------------------------------
    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):  # noqa: N802 - pyqtgraph API
        self._text_rects = [(QtCore.QRectF(rect), text) for rect, _flags, text in textSpecs]
        focus_label = self._labels[self._focus] if self._focus is not None and self._focus < len(self._labels) else None
        others = [spec for spec in textSpecs if spec[2] != focus_label]
        super().drawPicture(p, axisSpec, tickSpecs, others)
        for rect, flags, text in textSpecs:
            if text == focus_label:
                font = QtGui.QFont(p.font())
                font.setBold(True)
                p.setFont(font)
                p.setPen(theme.highlight())
                p.drawText(rect, int(flags), text)

    def hoverEvent(self, ev):  # noqa: N802 - pyqtgraph API
        index = None if ev.isExit() else self.token_at(ev.pos())
        if index != self._hovered:
            self._hovered = index
            self.token_hovered.emit(index)

    def mouseClickEvent(self, ev):  # noqa: N802 - pyqtgraph API
        index = self.token_at(ev.pos())
        if index is not None and ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            self.token_clicked.emit(index)
        else:
            super().mouseClickEvent(ev)
