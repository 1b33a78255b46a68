"""Many short texts (cell values, word labels) drawn by one graphics item in one paint call.

pyqtgraph's TextItem costs about half a millisecond each to create and place; a heatmap of 10
words needs 100 of them and the arc diagram 2 per word, which alone blew the 16 ms redraw budget.
This item keeps (position, text, colour) rows and draws them at a fixed pixel size wherever the
view's transform puts their anchor, on screen, in PNG and in SVG (where they stay <text>).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6 import QtCore, QtGui

from .pixel_padded import PixelPaddedItem

# where the anchor point sits on the text's box: (0, 0.5) = left middle, (0.5, 0.5) = centre ...
Anchor = tuple[float, float]


@dataclass
class Label:
    x: float
    y: float
    text: str
    color: QtGui.QColor
    bold: bool = False
    size: QtCore.QSizeF | None = None  # measured once by the layer, not on every paint


class TextLayer(PixelPaddedItem):
    def __init__(self, anchor: Anchor = (0.5, 0.5), point_size: float = 10.0, offset_px: float = 0.0):
        super().__init__()
        self.anchor = anchor
        self.offset_px = offset_px  # horizontal gap between the anchor point and the text
        self.backdrop: QtGui.QColor | None = None  # a plain patch under each text, e.g. over hatching
        self.font = QtGui.QFont()
        self.font.setPointSizeF(point_size)
        self._labels: list[Label] = []
        self._sizes: dict[tuple[bool, str], QtCore.QSizeF] = {}  # (bold, text) → its size in this font
        self._bounds = QtCore.QRectF()      # the anchors, in data coordinates
        self._reach = QtCore.QSizeF()       # how far a text may reach from its anchor, in pixels
        # No device cache: Qt reuses such an item's cached pixmap, shifted, when only its bounding
        # rectangle moves, so a new set of labels one row lower was drawn as the old one moved down
        # (the arc diagram's "the₁, the₁, dog, …"). A paint draws only the labels in the exposed part.

    def set_labels(self, labels: list[Label]) -> None:
        self.prepareGeometryChange()
        self._labels = labels
        self._measure(labels)
        if labels:
            xs, ys = [lab.x for lab in labels], [lab.y for lab in labels]
            self._bounds = QtCore.QRectF(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
        else:
            self._bounds = QtCore.QRectF()
        self.update()

    def labels(self) -> list[Label]:
        return list(self._labels)

    def set_point_size(self, size: float) -> None:
        if size != self.font.pointSizeF():
            self.font.setPointSizeF(size)
            self._sizes.clear()
            self._measure(self._labels)
            self.update()

    def restyle(self, index: int, color: QtGui.QColor, bold: bool) -> None:
        label = self._labels[index]
        if (label.color, label.bold) != (color, bold):
            remeasure = label.bold != bold
            label.color, label.bold = color, bold
            if remeasure:
                self._measure([label])
            self.update()

    def _measure(self, labels: list[Label]) -> None:
        """Each label's size, from the sizes already measured in this font where it can: a heatmap's
        values repeat ("0.03" in many cells), and asking Qt for each was most of a new set's cost."""
        metrics = {False: QtGui.QFontMetricsF(self.font), True: QtGui.QFontMetricsF(self._bold_font())}
        sizes = self._sizes
        if len(sizes) > 4 * len(labels) + 1024:  # texts of many sets ago: measured again if they come back
            sizes.clear()
        for label in labels:
            key = (label.bold, label.text)
            size = sizes.get(key)
            if size is None:
                size = sizes[key] = metrics[label.bold].size(0, label.text)
            label.size = size
        widest = max((lab.size.width() for lab in self._labels), default=0.0)
        tallest = max((lab.size.height() for lab in self._labels), default=0.0)
        reach = QtCore.QSizeF(widest + abs(self.offset_px) + 2, tallest + 2)
        if reach != self._reach:
            self.prepareGeometryChange()
            self._reach = reach

    def _bold_font(self) -> QtGui.QFont:
        bold = QtGui.QFont(self.font)
        bold.setBold(True)
        return bold

    def scene_rect(self, index: int) -> QtCore.QRectF:
        """Where label `index` is drawn, in scene coordinates (pixels of the view it is shown in)."""
        label = self._labels[index]
        return self._box(self.mapToScene(QtCore.QPointF(label.x, label.y)), label)

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 - Qt API
        if not self._labels:
            return QtCore.QRectF()
        return self.padded(self._bounds, self._reach.width(), self._reach.height())

    def paint(self, painter, *_):
        if not self._labels:
            return
        to_device = painter.transform()
        painter.save()
        painter.resetTransform()
        exposed = painter.clipBoundingRect() if painter.hasClipping() else QtCore.QRectF()
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
        fonts = {False: self.font, True: self._bold_font()}
        current = (None, None)
        for label in self._labels:
            box = self._box(to_device.map(QtCore.QPointF(label.x, label.y)), label)
            if not exposed.isEmpty() and not exposed.intersects(box.adjusted(-2, 0, 2, 0)):
                continue  # a partial repaint (a hover elsewhere) draws only the labels it uncovers
            if current != (label.bold, label.color.rgba()):  # labels mostly share a style: switch rarely
                painter.setFont(fonts[label.bold])
                painter.setPen(label.color)
                current = (label.bold, label.color.rgba())
            if self.backdrop is not None:
                painter.fillRect(box.adjusted(-2, 0, 2, 0), self.backdrop)
            painter.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, label.text)
        painter.restore()

    def _box(self, point: QtCore.QPointF, label: Label) -> QtCore.QRectF:
        size = label.size
        ax, ay = self.anchor
        shift = self.offset_px * (1 - 2 * ax) if ax != 0.5 else 0.0
        return QtCore.QRectF(point.x() - ax * size.width() + shift, point.y() - ay * size.height(),
                             size.width(), size.height())
