"""A layout that places widgets left to right and wraps to a new line when the row is full.

Qt asks a height-for-width layout for its height many times per change (for each width the parents
try) and places it again on every resize. The arrangement is therefore computed once per width and
kept until an item changes (Qt calls `invalidate`), so a sentence of thousands of chips is laid
out in time linear in its length, not once per chip per chip; placing the items reads the same
arrangement the height was measured from (one pass over every chip fewer a change).
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class FlowLayout(QtWidgets.QLayout):
    def __init__(self, parent: QtWidgets.QWidget | None = None, spacing: int = 4):
        self._items: list[QtWidgets.QLayoutItem] = []
        self._widgets: list[QtWidgets.QWidget] = []  # each item's widget: asking the items cost a call into Qt each
        self._hints: list[tuple[int, int]] | None = None  # each item's size hint (w, h), read once per change
        self._rects: dict[QtWidgets.QLayoutItem, tuple[int, int, int, int]] = {}  # where each item was placed
        # width → each item's place (x, y) from the top left of the area inside the margins, and the height needed
        self._arranged: dict[int, tuple[list[tuple[int, int]], int]] = {}
        self._placed: tuple[int, int, int] | None = None  # (x, y, width) the items are placed at now
        self._minimum: QtCore.QSize | None = None
        super().__init__(parent)  # (Qt calls invalidate from here: the caches must exist first)
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item):  # noqa: N802 - Qt API
        self._items.append(item)
        self._widgets.append(item.widget())
        self.invalidate()

    def count(self):
        return len(self._items)

    def itemAt(self, index):  # noqa: N802 - Qt API
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index):  # noqa: N802 - Qt API
        if not 0 <= index < len(self._items):
            return None
        self.invalidate()
        self._rects.pop(self._items[index], None)
        self._widgets.pop(index)
        return self._items.pop(index)

    def set_widgets(self, widgets: list[QtWidgets.QWidget]) -> None:
        """Hold exactly these widgets, in this order: those it holds keep their items (and Qt's
        cached size hints), new ones are added, the rest leave. One invalidation however many change."""
        held = dict(zip(self._widgets, self._items, strict=True))
        for widget in widgets:
            if widget not in held:
                self.addWidget(widget)  # Qt's own item, which caches the widget's size hint
                held[widget] = self._items[-1]
        self._items = [held[widget] for widget in widgets]
        self._widgets = list(widgets)
        self._rects = {item: self._rects[item] for item in self._items if item in self._rects}
        self.invalidate()

    def invalidate(self):
        """An item was added, removed or changed its size hint: forget every computed arrangement."""
        self._hints, self._placed, self._minimum = None, None, None
        self._arranged.clear()
        super().invalidate()

    def expandingDirections(self):  # noqa: N802 - Qt API
        return QtCore.Qt.Orientation(0)

    def hasHeightForWidth(self):  # noqa: N802 - Qt API
        return True

    def heightForWidth(self, width):  # noqa: N802 - Qt API
        return self._arrangement(width)[1]

    def setGeometry(self, rect):  # noqa: N802 - Qt API
        """Places the items again only where the rectangle's top left or width changed: a new height
        (the parent grown to the height asked for) moves nothing (512 chips: 2 ms a time)."""
        super().setGeometry(rect)
        placed = (rect.x(), rect.y(), rect.width())
        if placed != self._placed:
            self._place(rect)
            self._placed = placed

    def sizeHint(self):  # noqa: N802 - Qt API
        return self.minimumSize()

    def minimumSize(self):  # noqa: N802 - Qt API
        if self._minimum is None:
            size = QtCore.QSize()
            for item in self._items:
                size = size.expandedTo(item.minimumSize())
            margins = self.contentsMargins()
            self._minimum = size + QtCore.QSize(margins.left() + margins.right(), margins.top() + margins.bottom())
        return self._minimum

    def _size_hints(self) -> list[tuple[int, int]]:
        if self._hints is None:
            self._hints = [(hint.width(), hint.height()) for hint in (item.sizeHint() for item in self._items)]
        return self._hints

    def _arrangement(self, width: int) -> tuple[list[tuple[int, int]], int]:
        """The items' places and height at `width` (_arrange), computed once per width and change."""
        if width not in self._arranged:
            self._arranged[width] = self._arrange(width)
        return self._arranged[width]

    def _arrange(self, width: int) -> tuple[list[tuple[int, int]], int]:
        """Each item's place (x, y) from the top left of the area inside the margins, and the height the
        items need, at `width`: left to right, a new row where the next item would pass the right edge."""
        margins = self.contentsMargins()
        inside, spacing = width - margins.left() - margins.right(), self.spacing()
        x = y = row_height = 0
        places = []
        for item_width, item_height in self._size_hints():
            if x + item_width > inside and row_height > 0:
                x, y, row_height = 0, y + row_height + spacing, 0
            places.append((x, y))
            x += item_width + spacing
            if item_height > row_height:
                row_height = item_height
        return places, margins.top() + y + row_height + margins.bottom()

    def _place(self, rect: QtCore.QRect) -> None:
        """Place the items in `rect` as arranged for its width. An item already where it goes is not
        placed again (a word typed at the end moves none before it)."""
        margins = self.contentsMargins()
        left, top = rect.x() + margins.left(), rect.y() + margins.top()
        rects = self._rects
        places, _height = self._arrangement(rect.width())
        for item, (x, y), (width, height) in zip(self._items, places, self._size_hints(), strict=True):
            placed = (left + x, top + y, width, height)
            if rects.get(item) != placed:
                item.setGeometry(QtCore.QRect(*placed))
                if not item.isEmpty():  # Qt places no hidden widget (a chip not shown yet): it must go later
                    rects[item] = placed
