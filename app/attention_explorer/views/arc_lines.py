"""The lines of the arc diagram: which pairs get a line (chosen in NumPy), and one graphics item that
draws a set of them fast enough for 512 words.

A line joins (0, i), the word looking, to (1, j), the word looked at. Lines are grouped into a few
width/opacity buckets by weight, one pen per bucket and head.
"""

from __future__ import annotations

import functools
from itertools import groupby
from typing import NamedTuple

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from . import theme
from .largest_first import take_largest
from .line_array import draw_line_array, line_array
from .pixel_padded import PixelPaddedItem

BUCKETS = 10
MIN_WEIGHT_DRAWN = 0.005
FEW_PER_ROW = 8  # up to this many strongest per row are found by argmax passes, more by sorting
ROW_BLOCK = 32  # rows looked at in one go (strongest_first)
LAYERED_WIDTH_PX = 1.0  # lines at least this wide go through an opaque layer (see ArcLinesItem)
THINNEST_PX, WIDER_BY_PX = 0.6, 7.0  # the weakest bucket's width, and how much wider the strongest is
ROW_SHARE = 0.75  # the widest line takes at most this share of the room between two rows
PEN_REACH_PX = 8  # how far a line's stroke may reach past its ends: the widest pen is 7.6 px

# (pen, pairs): pairs is an (m, 2) array of (looking word, looked-at word)
Batch = tuple[QtGui.QPen, np.ndarray]


class HeadArcs(NamedTuple):
    """The lines of one head: the i-th line joins looking[i] to looked_at[i] with weights[i]."""
    head: int
    color: QtGui.QColor
    looking: np.ndarray
    looked_at: np.ndarray
    weights: np.ndarray

    def rows(self) -> list[tuple[int, int, int, float]]:
        """(head, looking, looked at, weight) per line, as plain Python numbers."""
        return [(self.head, i, j, w) for i, j, w in
                zip(self.looking.tolist(), self.looked_at.tolist(), self.weights.tolist(), strict=True)]


def strongest_first(weights: np.ndarray, keep: int) -> np.ndarray:
    """Each row's `keep` strongest columns (all when 0), strongest first, equal weights in word order.

    Found once per trace, head and limit. For a few per row, take_largest's argmax passes cost a
    fraction of sorting every row (a 512-word sort takes longer than the rest of the arcs' update).
    They run over a copy of ROW_BLOCK rows at a time, small enough to stay in the core's own cache
    between the passes, in one buffer used for every block: with 256 rows (8 MB at 8,192 words) each
    pass read the copy from main memory again, 66 against 46 ms for 8,192 × 8,192 weights.
    """
    n = weights.shape[1]
    if not keep or keep > FEW_PER_ROW:
        return np.argsort(-weights, axis=1, kind="stable")[:, :keep or n]
    order = np.empty((weights.shape[0], min(keep, n)), dtype=np.intp)
    buffer = np.empty((min(ROW_BLOCK, weights.shape[0]), n), dtype=weights.dtype)
    for start in range(0, weights.shape[0], ROW_BLOCK):
        block = weights[start:start + ROW_BLOCK]
        left = buffer[:len(block)]
        np.copyto(left, block)
        order[start:start + len(block)] = take_largest(left, keep, axis=1).T
    return order


def selected_arcs(weights: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(looking, looked at, weight) of every line: each row's columns in `order`, those too faint to
    see left out. Row by row, strongest first within a row."""
    rows = np.repeat(np.arange(order.shape[0]), order.shape[1])
    columns = order.ravel()
    shown = weights[rows, columns]
    kept = shown >= MIN_WEIGHT_DRAWN
    return rows[kept], columns[kept], shown[kept]


def arcs_of_word(weights: np.ndarray, word: int, looking: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every visible line out of `word` (looking) or into it (looked at), whatever the "strongest k"
    limit: one word's lines never crowd the view, and a word outside every row's strongest few
    would otherwise show nothing."""
    others = np.arange(weights.shape[1] if looking else weights.shape[0])  # a row's columns, a column's rows
    shown = weights[word, :] if looking else weights[:, word]
    kept = shown >= MIN_WEIGHT_DRAWN
    this = np.full(int(kept.sum()), word)
    rows, columns = (this, others[kept]) if looking else (others[kept], this)
    return rows, columns, shown[kept]


def bucket_pen(color: QtGui.QColor, bucket: int) -> QtGui.QPen:
    """Wider and more opaque for stronger buckets. One pen a colour and bucket, shared by every batch
    that draws with it (copy it before changing it): a scrubber step made some ninety of them."""
    return _bucket_pen(color.rgba(), bucket)


@functools.lru_cache(maxsize=256)
def _bucket_pen(rgba: int, bucket: int) -> QtGui.QPen:
    strength = (bucket + 0.5) / BUCKETS
    color = QtGui.QColor.fromRgba(rgba)
    color.setAlphaF(0.18 + 0.8 * strength)
    pen = QtGui.QPen(color, THINNEST_PX + WIDER_BY_PX * strength)
    pen.setCosmetic(True)
    pen.setCapStyle(QtCore.Qt.PenCapStyle.FlatCap)  # round caps triple the antialiased stroking time
    return pen


def batches_of(arcs: list[HeadArcs]) -> list[Batch]:
    """Group the lines of every head by bucket, weakest first so strong lines lie on top; within a
    bucket head by head, each head's lines in their order. Sorted once, not picked out per bucket and head."""
    if not sum(len(head.weights) for head in arcs):
        return []
    bucket = np.minimum((np.concatenate([head.weights for head in arcs]) * BUCKETS).astype(int), BUCKETS - 1)
    which = np.repeat(np.arange(len(arcs)), [len(head.weights) for head in arcs])
    pairs = np.column_stack((np.concatenate([head.looking for head in arcs]),
                             np.concatenate([head.looked_at for head in arcs])))
    order = np.lexsort((which, bucket))  # stable: a group's lines keep their order
    group = (bucket * len(arcs) + which)[order]
    starts = np.flatnonzero(np.diff(group, prepend=-1))
    stops = np.append(starts[1:], len(order))
    ordered, first = pairs[order], order[starts]  # each batch a slice of the ordered lines
    colours = [head.color.rgba() for head in arcs]
    return [(_bucket_pen(colours[head], level), ordered[start:stop]) for head, level, start, stop
            in zip(which[first].tolist(), bucket[first].tolist(), starts.tolist(), stops.tolist(), strict=True)]


class ArcLinesItem(PixelPaddedItem):
    """Straight lines from (0, i) to (1, j), drawn in batches, one pen per batch, and kept as an image
    until the lines or the view change: dimming the lines (setOpacity) while a word is focused then
    costs one blit, not thousands of strokes.

    Lines are drawn in device pixels with ordinary pens: antialiased lines of a cosmetic pen under
    the view's scaling cost about three times as much in Qt's raster engine, and SVG has no
    cosmetic pens at all. Where the rows lie closer than the widest line, the lines are narrowed to
    them (narrowing), stronger still wider than weaker. Each bucket's wide lines (every head's, each
    in its colour) are drawn opaque into a transparent layer that is then laid over the image at the
    bucket's opacity: Qt strokes semi-transparent, wide, antialiased lines about five times slower
    than opaque ones, and one layer a bucket rather than one a head and bucket saves ninety fills and
    blends of the whole image at twelve heads. (Where lines of one bucket cross, the layer shows them
    once rather than darker, which reads better anyway.) SVG gets one vector line per arc. Undimmed,
    a bucket's wide lines are opaque, each head's in a group at the bucket's opacity, which svg_fixes
    gathers into one group a bucket: viewers composite it as the layer. Dimmed, every line keeps its
    translucent pen, each group at the item's opacity, gathered into one group dimmed as a whole, as
    the picture is.

    Dimmed on screen (a word focused over the lines, at DIMMED_OPACITY), the image is drawn without
    antialiasing: at a quarter of their strength the lines' steps cannot be told from smooth edges, and
    they draw in a third of the time (1.2 against 3.6 ms for SmolLM2's 1,600 lines at a scrubber step,
    where the last word is always focused). Figures and the undimmed lines are antialiased. Each kind of
    image is kept, so a hover that comes and goes draws neither again; which one the screen shows
    depends only on the lines, the view and the opacity, as a view built fresh would draw it.
    """

    def __init__(self):
        super().__init__()
        self._batches: list[Batch] = []
        self._rect = QtCore.QRectF(0, 0, 1, 1)
        # antialiased or not -> (the view it was drawn for, (its origin in device pixels, the image))
        self._images: dict[bool, tuple[tuple, tuple[QtCore.QPoint, QtGui.QImage]]] = {}

    def set_batches(self, batches: list[Batch], n: int) -> None:
        if not batches and not self._batches:
            return  # nothing drawn before or after: no repaint
        self.prepareGeometryChange()
        self._batches = batches
        self._images = {}
        self._rect = QtCore.QRectF(0, -0.5, 1, max(n, 1))
        self.update()

    def batches(self) -> list[Batch]:
        return self._batches

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 - Qt API
        # the pens' widths and round caps reach past the lines' ends, in pixels
        return self.padded(self._rect, PEN_REACH_PX, PEN_REACH_PX)

    def paint(self, painter, *_):
        if not self._batches:
            return
        to_device = painter.transform()
        painter.save()
        painter.resetTransform()
        if painter.paintEngine().type() == QtGui.QPaintEngine.Type.SVG:
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
            whole = painter.opacity()
            layers = whole >= 1  # undimmed: each bucket's wide lines opaque in a group at its opacity, as the image
            for pen, lines, layered, opacity in self._device_batches(to_device, opaque_layers=layers):
                painter.setOpacity(whole * opacity if layers and layered else whole)
                painter.setPen(pen)
                draw_line_array(painter, lines)
        else:
            ratio = painter.device().devicePixelRatioF()
            key = (to_device.m11(), to_device.m22(), to_device.dx(), to_device.dy(), ratio)
            smooth = self.opacity() >= 1 or not isinstance(painter.device(), QtWidgets.QWidget)
            kept = self._images.get(smooth)
            if kept is None or kept[0] != key:
                kept = self._images[smooth] = (key, self._render(to_device, ratio, smooth))
            painter.drawImage(*kept[1])
        painter.restore()

    def _device_batches(self, to_device: QtGui.QTransform, origin: QtCore.QPoint | None = None,
                        opaque_layers: bool = False) -> list[tuple[QtGui.QPen, np.ndarray, bool, float]]:
        """(pen, lines as line_array rows, layered, opacity) of each batch in device pixels counted from
        `origin` (the view only scales and shifts). The lines are made for every batch in one go and
        each batch's are a slice of them, and the pens come from a cache: a hundred batches (twelve heads
        at a few words) spent more time in Python per batch than in drawing. With `opaque_layers` the
        pens of layered batches are opaque (see the class)."""
        sx, sy = to_device.m11(), to_device.m22()
        dx, dy = to_device.dx(), to_device.dy()
        if origin is not None:
            dx, dy = dx - origin.x(), dy - origin.y()
        ys = np.concatenate([pairs for _, pairs in self._batches]) * sy + dy
        lines = line_array(dx, sx + dx, ys[:, 0], ys[:, 1])
        narrowed = narrowing(abs(sy))
        batches, start = [], 0
        for pen, pairs in self._batches:
            color = pen.color()
            width = THINNEST_PX + (pen.widthF() - THINNEST_PX) * narrowed
            layered = width >= LAYERED_WIDTH_PX
            stop = start + len(pairs)
            batches.append((_device_pen(color.rgba(), width, layered and opaque_layers), lines[start:stop], layered,
                            color.alphaF()))
            start = stop
        return batches

    def _render(self, to_device: QtGui.QTransform, ratio: float,
                smooth: bool) -> tuple[QtCore.QPoint, QtGui.QImage]:
        reach = PEN_REACH_PX
        area = to_device.mapRect(self._rect).toAlignedRect().adjusted(-reach, -reach, reach, reach)
        image = _transparent_image(area.size(), ratio)
        layer = None
        painter = _line_painter(image, smooth)
        batches = self._device_batches(to_device, area.topLeft(), opaque_layers=True)
        for (layered, opacity), group in groupby(batches, key=lambda batch: batch[2:]):
            if not layered:  # thin lines are cheap either way; a layer would cost more
                for pen, lines, *_ in group:
                    painter.setPen(pen)
                    draw_line_array(painter, lines)
                continue
            if layer is None:
                layer = _transparent_image(area.size(), ratio)
            layer.fill(QtCore.Qt.GlobalColor.transparent)
            layer_painter = _line_painter(layer, smooth)
            for pen, lines, *_ in group:  # one bucket: every head's lines, each in its colour, at one opacity
                layer_painter.setPen(pen)
                draw_line_array(layer_painter, lines)
            layer_painter.end()
            painter.setOpacity(opacity)
            painter.drawImage(0, 0, layer)
            painter.setOpacity(1.0)
        painter.end()
        return area.topLeft(), image


def narrowing(row_px: float) -> float:
    """How much of each line's width above the thinnest to keep where rows are `row_px` apart: all of
    it where the widest line fits within ROW_SHARE of a row, less where it does not, so that the widest
    line still leaves its neighbours in sight. Wider than a row, the strongest lines of every head
    (75 words in a short pane) painted the whole pane in the colour of the head drawn last."""
    return min(1.0, max(0.0, (ROW_SHARE * row_px - THINNEST_PX) / WIDER_BY_PX))


@functools.lru_cache(maxsize=512)
def _device_pen(rgba: int, width: float, opaque: bool) -> QtGui.QPen:
    """A batch's pen in device pixels (not cosmetic: the width is already in pixels), opaque for a layer.
    One a colour, width and kind, shared by every batch and render that draws with it."""
    color = QtGui.QColor.fromRgba(rgba)
    if opaque:
        color.setAlpha(255)
    pen = QtGui.QPen(color, width)
    pen.setCapStyle(QtCore.Qt.PenCapStyle.FlatCap)
    return pen


def _transparent_image(size: QtCore.QSize, ratio: float) -> QtGui.QImage:
    image = QtGui.QImage(size * ratio, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(ratio)
    image.fill(QtCore.Qt.GlobalColor.transparent)
    return image


def _line_painter(image: QtGui.QImage, smooth: bool) -> QtGui.QPainter:
    """A painter, antialiased when `smooth`, clipped to the whole image: with a clip set, Qt's raster
    engine strokes thin antialiased lines about twenty times faster (1.7 against 42 ms for 384 long lines
    here)."""
    painter = QtGui.QPainter(image)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, smooth)
    painter.setClipRect(QtCore.QRectF(QtCore.QPointF(0, 0), image.deviceIndependentSize()))
    return painter


def head_colors(heads: list[int], selected: int) -> list[QtGui.QColor]:
    """One colour per head when several are shown; the selected head's colour when one is."""
    return [theme.head_color(h) for h in heads] if len(heads) > 1 else [theme.head_color(selected)]
