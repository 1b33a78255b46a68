"""A short guided tour for a first launch: a few callouts, each pointing at the part of the window it
names (type a sentence, hover a word, play the steps, export).

The callouts are child widgets of the window, not windows of their own, so they move with it, never
leave the screen and vanish with it. A ring around the part being explained lets the mouse through,
so the reader can try it at once. Esc or "Skip" ends the tour; Help ▸ Tour shows it again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets

from . import theme

CARD_WIDTH = 330
MARGIN = 12  # between the card and what it points at, and from the window's edges


@dataclass(frozen=True)
class TourStop:
    title: str
    text: str
    target: Callable[[], QtWidgets.QWidget]  # called when the stop is shown: widgets may be rebuilt


class _Ring(QtWidgets.QWidget):
    """A highlight frame around the widget being explained; the mouse passes through it."""

    def __init__(self, parent: QtWidgets.QWidget):
        super().__init__(parent)
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_NoSystemBackground)

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QtGui.QPainter(self)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        painter.setPen(QtGui.QPen(theme.highlight(), 3))
        painter.drawRoundedRect(QtCore.QRectF(self.rect()).adjusted(1.5, 1.5, -1.5, -1.5), 6, 6)


class QtTour(QtWidgets.QFrame):
    """The callout card. start() shows the first stop; Next, Back, Skip and Done move through them."""

    finished = QtCore.Signal()

    def __init__(self, window: QtWidgets.QWidget, stops: list[TourStop]):
        super().__init__(window)
        self.setObjectName("tourCard")
        self.stops = stops
        self._index = 0
        self.ring = _Ring(window)
        self.ring.hide()
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setFixedWidth(CARD_WIDTH)
        self.setStyleSheet(f"#tourCard {{ background: palette(window); border: 2px solid {theme.highlight().name()};"
                           " border-radius: 8px; }")

        self.title = QtWidgets.QLabel()
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title.setFont(font)
        self.text = QtWidgets.QLabel()
        self.text.setWordWrap(True)
        self.counter = QtWidgets.QLabel()
        self.counter.setStyleSheet(f"color: {theme.muted().name(QtGui.QColor.NameFormat.HexArgb)};")
        self.skip_button = QtWidgets.QPushButton("Skip")
        self.back_button = QtWidgets.QPushButton("Back")
        self.next_button = QtWidgets.QPushButton("Next")
        self.next_button.setDefault(True)
        self.skip_button.clicked.connect(self.stop)
        self.back_button.clicked.connect(lambda: self.show_stop(self._index - 1))
        self.next_button.clicked.connect(self._next)

        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.counter)
        buttons.addStretch(1)
        for button in (self.skip_button, self.back_button, self.next_button):
            buttons.addWidget(button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 10)
        layout.addWidget(self.title)
        layout.addWidget(self.text)
        layout.addLayout(buttons)
        esc = QtGui.QShortcut(QtGui.QKeySequence(QtCore.Qt.Key.Key_Escape), self)
        esc.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        esc.activated.connect(self.stop)
        window.installEventFilter(self)  # follow the window's size
        self.hide()

    # --- moving through the stops ---------------------------------------------------------------
    def start(self) -> None:
        self.show_stop(0)

    def is_running(self) -> bool:
        return self.isVisible()

    def current(self) -> int:
        return self._index

    def show_stop(self, index: int) -> None:
        self._index = max(0, min(index, len(self.stops) - 1))
        stop = self.stops[self._index]
        last = self._index == len(self.stops) - 1
        self.title.setText(stop.title)
        self.text.setText(stop.text)
        self.counter.setText(f"{self._index + 1} of {len(self.stops)}")
        self.back_button.setEnabled(self._index > 0)
        self.next_button.setText("Done" if last else "Next")
        self.skip_button.setVisible(not last)
        self.show()
        self.raise_()
        self._place()
        self.next_button.setFocus()

    def stop(self) -> None:
        if self.isVisible():
            self.hide()
            self.ring.hide()
            self.finished.emit()

    def _next(self) -> None:
        if self._index == len(self.stops) - 1:
            self.stop()
        else:
            self.show_stop(self._index + 1)

    # --- placement ------------------------------------------------------------------------------
    def _place(self) -> None:
        """The ring around the target; the card below it if there is room, else above, else beside,
        always inside the window."""
        window = self.parentWidget()
        target = self.stops[self._index].target()
        self.adjustSize()
        rect = QtCore.QRect(target.mapTo(window, QtCore.QPoint(0, 0)), target.size())
        visible = target.isVisible() and rect.intersects(window.rect())
        self.ring.setVisible(visible)
        if visible:
            self.ring.setGeometry(rect.adjusted(-4, -4, 4, 4).intersected(window.rect()))
            self.ring.raise_()
        size, bounds = self.size(), window.rect().adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN)
        if not visible:
            spot = bounds.center() - QtCore.QPoint(size.width() // 2, size.height() // 2)
        elif rect.bottom() + MARGIN + size.height() <= bounds.bottom():
            spot = QtCore.QPoint(rect.left() + MARGIN, rect.bottom() + MARGIN)
        elif rect.top() - MARGIN - size.height() >= bounds.top():
            spot = QtCore.QPoint(rect.left() + MARGIN, rect.top() - MARGIN - size.height())
        else:
            spot = QtCore.QPoint(rect.right() - size.width() - MARGIN, rect.center().y() - size.height() // 2)
        x = min(max(spot.x(), bounds.left()), bounds.right() - size.width())
        y = min(max(spot.y(), bounds.top()), bounds.bottom() - size.height())
        self.move(x, y)
        self.raise_()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QtCore.QEvent.Type.Resize and self.isVisible():
            self._place()
        return super().eventFilter(watched, event)


def main_window_stops(window) -> list[TourStop]:
    """The main window's tour: where to type, what to hover, how to play the steps, how to export."""
    return [
        TourStop("Type a sentence", "Type or paste a sentence here. Each word becomes a chip below; a word the "
                 "model does not know is struck through and left out.", lambda: window.sentence_box),
        TourStop("Hover a word", "Hover a row of the heatmap to see where that word looks, or a column to see "
                 "who looks at it. The arcs, bars and step tables follow; click to keep the word.",
                 lambda: window.heatmap),
        TourStop("Play the steps", "Press Play (or Space) to watch softmax(QKᵀ/√d_k)·V computed step by step, "
                 "one cell at a time. Open “Tables” to see every number.", lambda: window.timeline.strip_widget),
        TourStop("Export", "Save the heatmap, the arcs or a step as PNG or SVG, the steps as a GIF, or the numbers "
                 "as CSV or JSON. Help ▸ Tour shows this tour again.",
                 lambda: window.toolbar.widgetForAction(window.export_action)),
    ]
