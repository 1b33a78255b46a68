"""The word chips in a strip that is as tall as they need, up to a few rows, and scrolls beyond.

A 200-word sentence makes a dozen rows of chips, which would take the height the heatmap and arcs
need; a fixed strip of three rows would leave a blank band under a short sentence's one row.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

MAX_ROWS = 3


class QtChipsArea(QtWidgets.QScrollArea):
    def __init__(self, chips: QtWidgets.QWidget, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.chips = chips
        self.setWidget(chips)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed)
        chips.installEventFilter(self)  # the chips relaid out (a new sentence): fit again
        self.refit()

    def max_height(self) -> int:
        row = self.chips.fontMetrics().height() + 12  # a chip and the gap under it
        return MAX_ROWS * row

    def refit(self) -> None:
        width = self.viewport().width() if self.isVisible() else self.width()
        layout = self.chips.layout()
        needed = layout.heightForWidth(max(width, 1)) if layout is not None and layout.hasHeightForWidth() else 0
        height = min(max(needed, 1), self.max_height())
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self.refit()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if watched is self.chips and event.type() == QtCore.QEvent.Type.LayoutRequest:
            QtCore.QTimer.singleShot(0, self, self.refit)
        return super().eventFilter(watched, event)
