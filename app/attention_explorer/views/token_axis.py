"""The sentence's words along a plot's edge: thinned so no two overlap, the focused word always drawn.

pyqtgraph's AxisItem regenerates every tick label on each repaint, which made it a large share of a
hover's cost. This axis keeps pyqtgraph's place in the plot layout, its title and its link to the
view, but draws the words itself: the labels that fit are laid out once per view range and size and
kept as a recorded picture; a change of focus only draws the focused word on top, on an opaque
box, and re-records the picture only when that box would cover part of a neighbour. When the words
along the top do not fit side by side they stand upright, so far more of them can be shown.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from . import theme
from .list_edits import prefix_kept

GAP_PX = 6.0            # the least space between two labels
MAX_LABEL_PX = 110.0    # longer words are shortened with "…"; the full word shows on hover
MEASURED_LABELS = 4 * 8192  # labels whose measures are kept: a long text's every word, and a reading's
PAD_PX = 6.0            # between the labels and the plot
FOCUS_PAD_PX = 2.0      # the focused word's box reaches this far beyond its text
OVERLAP_PX = 0.5        # labels closer than this to overlapping count as apart


class TokenAxis(pg.AxisItem):
    """Word labels at integer positions of the linked view. Emits the word index under the mouse
    (anywhere along the edge, so a thinned-out word can still be reached) and draws the focused word
    in the highlight colour, bold."""

    token_hovered = QtCore.Signal(object)  # index or None
    token_clicked = QtCore.Signal(int)

    def __init__(self, orientation: str, upright_allowed: bool = True, **kwargs):
        super().__init__(orientation, **kwargs)
        self._upright_allowed = upright_allowed  # a short pane (the row bars) cannot spare the height
        self.setStyle(showValues=False, tickLength=0)
        self._labels: list[str] = []
        self._shown_texts: list[str] = []    # elided where longer than MAX_LABEL_PX
        self._sizes: list[QtCore.QSizeF] = []
        self._widths: list[float] = []       # the sizes' widths and heights, and the bold widths, for their largest
        self._heights: list[float] = []
        self._bold_px: list[float] = []
        self._widest_bold = 0.0              # the widest shown text, in bold (the focused word's font)
        # label → (shown text, its size, its bold width): a sentence keeps most words from one edit
        # to the next, and measuring 2 × 128 labels again on each edit was most of the heatmap's redraw
        self._measured: dict[str, tuple[str, QtCore.QSizeF, float]] = {}
        self._metrics: tuple[QtGui.QFontMetricsF, QtGui.QFontMetricsF] | None = None  # plain, bold
        self._focus: int | None = None
        self._hovered: int | None = None
        self._rotated = False
        self._rotation_decided: bool | None = None
        self._font = QtGui.QFont()
        self._bold = QtGui.QFont(self._font)
        self._bold.setBold(True)
        self._layout_key: tuple | None = None
        self._placed: list[tuple[int, QtCore.QRectF]] = []   # regular labels: (index, rect in item coords)
        self._picture: QtGui.QPicture | None = None
        self._picture_key: tuple | None = None
        self._coloured_from: tuple[int, QtGui.QColor] | None = None  # labels from this index on, in this colour
        self.setAcceptHoverEvents(True)
        self._update_extent()

    # --- what is shown --------------------------------------------------------------------------
    def set_tokens(self, labels: list[str]) -> None:
        """The words along the edge. A text that begins with the words shown (or with which they begin:
        a generation's text so far a step on or back) keeps their measures and measures only the rest:
        1,000 words looked up again took 1.2 ms an axis, a scrubber step drew four such axes."""
        labels, old = list(labels), self._labels
        if labels == old:
            return
        kept = prefix_kept(old, labels) or 0
        added = [self._measure(t) for t in labels[kept:]]
        self._labels = labels
        self._shown_texts = self._shown_texts[:kept] + [shown for shown, _, _ in added]
        self._sizes = self._sizes[:kept] + [size for _, size, _ in added]
        self._widths = self._widths[:kept] + [size.width() for _, size, _ in added]
        self._bold_px = self._bold_px[:kept] + [bold for _, _, bold in added]
        self._heights = self._heights[:kept] + [size.height() for _, size, _ in added]
        self._widest_bold = max(self._bold_px, default=0.0)
        if self._focus is not None and self._focus >= len(labels):
            self._focus = None
        self._invalidate()
        self._update_extent()

    def labels(self) -> list[str]:
        return list(self._labels)

    def widest_px(self) -> float:
        """The widest word in bold, the face a focused word is drawn in: what the words need side by side."""
        return self._widest_bold

    def colour_labels_from(self, index: int, colour: QtGui.QColor) -> None:
        """Draw the labels from `index` on in `colour`: a generation's written tokens, told apart from its
        prompt in a figure."""
        self._coloured_from = (index, QtGui.QColor(colour))
        self._picture_key = None
        self.update()

    def _measure(self, label: str) -> tuple[str, QtCore.QSizeF, float]:
        if label not in self._measured:
            if len(self._measured) > MEASURED_LABELS:
                self._measured.clear()
            if self._metrics is None:
                self._metrics = (QtGui.QFontMetricsF(self._font), QtGui.QFontMetricsF(self._bold))
            plain, bold = self._metrics
            shown = plain.elidedText(label, QtCore.Qt.TextElideMode.ElideRight, MAX_LABEL_PX)
            self._measured[label] = (shown, plain.size(0, shown), bold.horizontalAdvance(shown))
        return self._measured[label]

    def focus(self) -> int | None:
        return self._focus

    def set_focus(self, index: int | None) -> None:
        if index is not None and not 0 <= index < len(self._labels):
            index = None
        if index != self._focus:
            self._focus = index
            self.update()

    def is_rotated(self) -> bool:
        return self._rotated

    def drawn_labels(self) -> list[tuple[int, QtCore.QRectF]]:
        """Every label as it appears, (index, rectangle in scene coordinates): the regular ones not
        hidden under the focused word's box, then the focused word's."""
        self._ensure_layout()
        focus_rect = self._focus_rect()
        drawn = [(i, rect) for i, rect in self._placed
                 if focus_rect is None or (i != self._focus and not _overlap(rect, focus_rect))]
        if focus_rect is not None:
            drawn.append((self._focus, focus_rect))
        return [(i, self.mapRectToScene(rect)) for i, rect in drawn]

    def token_at(self, pos: QtCore.QPointF) -> int | None:
        """The word whose place along the edge is under `pos` (item coordinates)."""
        view = self.linkedView()
        if view is None or not self._labels:
            return None
        self._ensure_layout()
        focus_rect = self._focus_rect()
        if focus_rect is not None and focus_rect.contains(pos):
            return self._focus
        for index, rect in self._placed:  # a word drawn under the pointer is the word meant
            if rect.contains(pos):
                return index
        point = view.mapSceneToView(self.mapToScene(pos))
        value = point.x() if self._horizontal() else point.y()
        index = int(math.floor(value + 0.5))
        return index if 0 <= index < len(self._labels) else None

    # --- layout ---------------------------------------------------------------------------------
    def _horizontal(self) -> bool:
        return self.orientation in ("top", "bottom")

    def _invalidate(self) -> None:
        self._layout_key = None
        self._picture_key = None
        self.update()

    def _cell_px(self) -> float:
        """Pixels between two neighbouring words along this edge."""
        from_view = self._from_view()
        if from_view is None:
            return 0.0
        a, b = from_view.map(QtCore.QPointF(0, 0)), from_view.map(QtCore.QPointF(1, 1))
        return abs(b.x() - a.x()) if self._horizontal() else abs(b.y() - a.y())

    def _from_view(self) -> QtGui.QTransform | None:
        """The map from the linked view's coordinates to this axis', as one transform: the view's own
        mapping through the scene, three pyqtgraph calls a point, cost more than the rest of placing
        the words (a scrubber step placed about forty of them on four axes)."""
        view = self.linkedView()
        if view is None:
            return None
        view.updateMatrix()  # what view.mapViewToScene does first: its range's transform made current
        from_scene, invertible = self.sceneTransform().inverted()
        if not invertible:
            return None
        return view.childTransform() * view.sceneTransform() * from_scene

    def _update_extent(self) -> None:
        """Reserve room for the words (and the axis title), standing the top or bottom words upright
        when they do not fit side by side. Hysteresis keeps a borderline size from flipping."""
        if not hasattr(self, "_bold"):
            return  # pyqtgraph resizes the axis while it is still being built
        if self._horizontal():
            cell = self._cell_px()
            if self._rotation_decided is not None:
                self._rotated = self._rotation_decided and self._upright_allowed
            elif cell > 0 and self._labels and self._upright_allowed:
                if not self._rotated and not self.fit_side_by_side(cell):
                    self._rotated = True
                elif self._rotated and self.fit_side_by_side(0.85 * cell):
                    self._rotated = False
            extent = self.extent(self._rotated)
            if self.fixedHeight != extent:
                self.setHeight(extent)
        else:
            extent = self.extent(False)
            if self.fixedWidth != extent:
                self.setWidth(extent)

    def extent(self, rotated: bool) -> int:
        """The room the words need across the edge (and the axis title), upright or not."""
        widest = self._widest_bold + 2 * FOCUS_PAD_PX
        title = self.label.boundingRect().height() if self.label.isVisible() else 0.0
        across = widest if rotated or not self._horizontal() else QtGui.QFontMetricsF(self._bold).height()
        return math.ceil(across + PAD_PX + title)

    def fit_side_by_side(self, cell_px: float) -> bool:
        """Whether the words fit along the edge unrotated in cells of `cell_px`."""
        return self._widest_bold + 2 * FOCUS_PAD_PX + GAP_PX <= cell_px

    def decide_rotation(self, rotated: bool | None) -> None:
        """Upright words or not, as decided by the plot that knows the size its cells would take (None:
        this axis decides from the cells it has, with some hysteresis). A plot whose square cells shrink
        when the words stand up must decide from the unrotated size, or both layouts hold and the one
        shown depends on the sentence before."""
        self._rotation_decided = rotated
        self._update_extent()

    def _rect_for(self, index: int, size: QtCore.QSizeF, from_view: QtGui.QTransform) -> QtCore.QRectF:
        """Where a label of `size` goes: centred on its word's place (`from_view`: see _from_view), against
        the plot's edge, on a whole pixel of the scene along it. A place to a fraction of a pixel followed
        the view's range to its last bit, and a range reached through zooms, a bit off the same range set
        anew, drew a glyph on the other side of its rounding edge."""
        anchor, bounds, origin = from_view.map(QtCore.QPointF(index, index)), self.boundingRect(), self.scenePos()
        w, h = (size.height(), size.width()) if self._rotated else (size.width(), size.height())
        if self.orientation == "left":  # kept inside the edge: a word at the very end is not cut off
            y = _on_whole_pixel(anchor.y() - h / 2, bounds.top(), bounds.bottom() - h, origin.y())
            return QtCore.QRectF(bounds.right() - PAD_PX / 2 - w, y, w, h)
        x = _on_whole_pixel(anchor.x() - w / 2, bounds.left(), bounds.right() - w, origin.x())
        if self.orientation == "top":
            return QtCore.QRectF(x, bounds.bottom() - PAD_PX / 2 - h, w, h)
        return QtCore.QRectF(x, bounds.top() + PAD_PX / 2, w, h)  # bottom

    def _visible_indices(self) -> range:
        view = self.linkedView()
        (x0, x1), (y0, y1) = view.viewRange()
        low, high = (x0, x1) if self._horizontal() else (y0, y1)
        return range(max(0, math.ceil(low - 0.5)), min(len(self._labels), math.floor(high + 0.5) + 1))

    def _ensure_layout(self) -> None:
        view = self.linkedView()
        if view is None:
            return
        # the places are whole pixels of the scene (_rect_for): the axis and its view moved in it move them
        key = (tuple(self.range), self.size().width(), self.size().height(), self._rotated, len(self._labels),
               self.scenePos().toTuple(), view.scenePos().toTuple())
        if key == self._layout_key:
            return
        self._layout_key = key
        self._placed = []
        if not self._labels:
            return
        from_view = self._from_view()
        if from_view is None:
            return
        cell = max(self._cell_px(), 1e-6)
        along = self._heights if self._rotated or not self._horizontal() else self._widths
        stride = max(1, math.ceil((max(along) + GAP_PX) / cell))  # one regular rhythm reads better than gaps
        for index in self._visible_indices():
            if index % stride == 0:
                rect = self._rect_for(index, self._sizes[index], from_view)
                if not self._placed or not _overlap(rect, self._placed[-1][1]):  # an end word pushed inward
                    self._placed.append((index, rect))

    def _focus_rect(self) -> QtCore.QRectF | None:
        if self._focus is None or self.linkedView() is None or self._focus not in self._visible_indices():
            return None
        from_view = self._from_view()
        if from_view is None:
            return None
        size = QtGui.QFontMetricsF(self._bold).size(0, self._shown_texts[self._focus])
        pad = FOCUS_PAD_PX
        return self._rect_for(self._focus, QtCore.QSizeF(size.width() + 2 * pad, size.height()), from_view)

    # --- pyqtgraph hooks ------------------------------------------------------------------------
    def linkToView(self, view):  # noqa: N802 - pyqtgraph API
        super().linkToView(view)
        # pyqtgraph's own link listens to the view's X or Y range signal, which a view with a locked
        # aspect does not send when the aspect correction moved that side (Fit on a long sentence
        # then left the rows labelled for the zoomed view): follow every range change.
        view.sigRangeChanged.connect(self._on_view_range_changed)

    def _on_view_range_changed(self, view, _ranges, _changed) -> None:
        self.linkedViewChanged(view)

    def linkedViewChanged(self, view, newRange=None):  # noqa: N802 - pyqtgraph API
        super().linkedViewChanged(view, newRange)
        self._update_extent()

    def showLabel(self, show: bool = True):  # noqa: N802 - pyqtgraph API
        super().showLabel(show)
        self._update_extent()  # the title's room is part of the reserved size

    def resizeEvent(self, ev=None):  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        if hasattr(self, "_bold"):
            self._layout_key = None
        self._update_extent()

    def paint(self, p, opt, widget):
        if self.linkedView() is None or not self._labels:
            return
        self._ensure_layout()
        # Only inside the axis' own bounds: for a paint between a change of the words' extent and the
        # layout giving the axis its new size, an upright word reached past them, where no later
        # partial repaint cleared it (a piece of "dig" stayed under the heatmap's title).
        p.setClipRect(self.boundingRect(), QtCore.Qt.ClipOperation.IntersectClip)
        focus_rect = self._focus_rect()
        covered = tuple(i for i, rect in self._placed
                        if focus_rect is not None and i != self._focus and _overlap(rect, focus_rect))
        if p.paintEngine().type() == QtGui.QPaintEngine.Type.SVG:
            self._draw_regular(p, covered)  # a replayed picture's words would not reach the SVG as text
        else:
            picture_key = (self._layout_key, covered, theme.foreground().rgba())
            if picture_key != self._picture_key:
                self._picture = self._record(covered)
                self._picture_key = picture_key
            self._picture.play(p)
        if focus_rect is not None:
            p.fillRect(focus_rect, theme.background())
            p.setFont(self._bold)
            p.setPen(theme.highlight())
            self._draw_text(p, focus_rect, self._shown_texts[self._focus])

    def _record(self, covered: tuple[int, ...]) -> QtGui.QPicture:
        picture = QtGui.QPicture()
        painter = QtGui.QPainter(picture)
        self._draw_regular(painter, covered)
        painter.end()
        return picture

    def _draw_regular(self, painter: QtGui.QPainter, covered: tuple[int, ...]) -> None:
        painter.setFont(self._font)
        first_coloured, colour = self._coloured_from or (len(self._labels), None)
        coloured = False
        painter.setPen(theme.foreground())
        for index, rect in self._placed:
            if index not in covered:
                if (index >= first_coloured) != coloured:
                    coloured = not coloured
                    painter.setPen(colour if coloured else theme.foreground())
                self._draw_text(painter, rect, self._shown_texts[index])

    def _draw_text(self, p: QtGui.QPainter, rect: QtCore.QRectF, text: str) -> None:
        center = QtCore.Qt.AlignmentFlag.AlignCenter
        if not self._rotated:
            p.drawText(rect, center, text)
            return
        p.save()
        p.translate(rect.center())
        p.rotate(-90)  # read upwards, the word's end next to its column
        p.drawText(QtCore.QRectF(-rect.height() / 2, -rect.width() / 2, rect.height(), rect.width()), center, text)
        p.restore()

    def hoverEvent(self, ev):  # noqa: N802 - pyqtgraph API
        index = None if ev.isExit() else self.token_at(ev.pos())
        if index != self._hovered:
            self._hovered = index
            self.setToolTip(self._labels[index] if index is not None else "")
            self.token_hovered.emit(index)

    def mouseClickEvent(self, ev):  # noqa: N802 - pyqtgraph API
        index = self.token_at(ev.pos())
        if index is not None and ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            self.token_clicked.emit(index)
        else:
            super().mouseClickEvent(ev)


def _on_whole_pixel(place: float, least: float, most: float, origin: float) -> float:
    """`place` (item coordinates) moved to the nearest whole pixel of the scene, within [least, most]
    and inward of them. A place a few bits short of a half pixel rounds as the half pixel does."""
    place = math.floor(place + origin + 0.5 + 1e-6) - origin
    least, most = math.ceil(least + origin) - origin, math.floor(most + origin) - origin
    return min(max(place, least), most)


def _overlap(a: QtCore.QRectF, b: QtCore.QRectF) -> bool:
    """Whether two labels' boxes overlap by more than a hair: boxes that only touch (or overlap by the
    last bits of a transform, which two histories of the same view may differ in) do not."""
    return a.adjusted(OVERLAP_PX, OVERLAP_PX, -OVERLAP_PX, -OVERLAP_PX).intersects(b)
