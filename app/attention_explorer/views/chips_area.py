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
        if watched is self.chips and event.type() == QtCore.QEvent.Type.Show:
            self._place_chips_at_their_width()
        return super().eventFilter(watched, event)

    def _place_chips_at_their_width(self) -> None:
        """Lay the chips out at the width they have, if their layout still holds another.

        The chips of a long sentence restored as the window first opens get their size just before
        they are shown, in an event Qt sends while showing them. This area hears of that size and
        shows its scroll bar, which makes the chips narrower at once; but Qt marks the narrower size
        as still to be sent and then clears the mark as it finishes sending the first, so the chips
        were never told. They stayed placed for the width without the scroll bar, the last of a row
        under it (a fresh view wrapped that chip to the next row)."""
        layout = self.chips.layout()
        if layout is not None and layout.geometry() != self.chips.contentsRect():
            layout.setGeometry(self.chips.contentsRect())
