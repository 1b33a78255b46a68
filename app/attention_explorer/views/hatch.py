"""Hatching over masked cells, so a forbidden pair reads as "masked", never as a weight of 0.

Cells masked because they lie ahead of their query (after the diagonal: the causal mask) are hatched
"/"; masked cells before it (a sliding window's keys too far back: Mistral, Gemma 2's local layers)
are hatched "\\", so the two reasons are told apart at a glance. In an encoder (a mask that is not
causal) every masked cell is outside a sliding window that reaches both ways (ModernBERT's local
layers), and is hatched "\\" on either side of the diagonal.

Drawn in device pixels (not with a pattern brush or cosmetic pens) so that it looks the same on
screen, in PNG and in SVG, whose generator knows neither pattern transforms nor cosmetic pens.

A mask's runs (each row's masked cells side by side) are found in NumPy. A paint draws the runs it
can see: each as its own clipped lines while that is a few thousand lines (every figure), else as
one set of lines across the visible part clipped to the masked area, which at 8,192 tokens is a few
hundred lines instead of 800,000. The lines of a paint are kept until the view moves or zooms, so a
hover that repaints the plot draws them again without working them out.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .line_array import draw_line_array
from .pixel_grid import GRID, steady_rect

SPACING_PX = 7.0
MAX_SEPARATE_LINES = 4000  # beyond this many lines, the runs share one set of lines, clipped to them


def mask_runs(mask: np.ndarray) -> np.ndarray:
    """(row, first column, end column) of every run of True in each row, in reading order. A causal
    mask (each row's masked cells run to its end) is recognised by counting, without the edges."""
    rows, cols = mask.shape
    first = mask.argmax(axis=1)
    counts = np.count_nonzero(mask, axis=1)
    some = counts > 0
    if np.array_equal(counts[some], cols - first[some]):  # each row: one run, to the end
        found = np.flatnonzero(some)
        return np.column_stack((found, first[found], np.full(len(found), cols)))
    edges = np.diff(np.pad(mask.astype(np.int8), ((0, 0), (1, 1))), axis=1)   # +1 where a run starts, −1 after it
    start_rows, starts = np.nonzero(edges == 1)
    _, ends = np.nonzero(edges == -1)
    return np.column_stack((start_rows, starts, ends)) if len(starts) else np.zeros((0, 3), dtype=np.intp)


def _cannot_change(mask: np.ndarray | None) -> bool:
    """Whether `mask` is an array no one can write to: read-only, and owning its cells."""
    return isinstance(mask, np.ndarray) and mask.base is None and not mask.flags.writeable


class MaskHatchItem(pg.GraphicsObject):
    """Diagonal lines over the cells where `mask` is True; cells are 1 × 1, centred on indices."""

    def __init__(self):
        super().__init__()
        self._runs = np.zeros((0, 3), dtype=np.intp)
        self._causal = True
        self._read_only_mask: np.ndarray | None = None  # the mask the runs were found in, when it cannot change
        self._bounds = QtCore.QRectF()
        self._drawn: tuple | None = None  # (key, [(lines, clip) "/" and "\\"]) of the last paint
        self.color = QtGui.QColor(128, 128, 128)

    def set_mask(self, mask: np.ndarray | None, causal: bool = True) -> None:
        """Merge each row's runs of masked cells into rectangles (a causal mask: one per row); the runs
        after the diagonal are a causal mask's unless not `causal`. A read-only mask given again (a real
        model's one mask for every layer of its text) is not read again: finding its runs reads every
        cell, 54 ms of a layer change at 8,192 tokens."""
        if mask is not None and mask is self._read_only_mask and causal == self._causal:
            return
        self._read_only_mask = mask if _cannot_change(mask) else None
        runs = mask_runs(np.asarray(mask, dtype=bool)) if mask is not None else np.zeros((0, 3), dtype=np.intp)
        if np.array_equal(runs, self._runs) and causal == self._causal:
            return
        self.prepareGeometryChange()
        self._runs, self._causal = runs, causal
        self._drawn = None
        if len(runs):
            rows, starts, ends = runs.T
            self._bounds = QtCore.QRectF(QtCore.QPointF(starts.min() - 0.5, rows.min() - 0.5),
                                         QtCore.QPointF(ends.max() - 0.5, rows.max() + 0.5))
        else:
            self._bounds = QtCore.QRectF()
        self.update()

    def masked_rects(self) -> list[QtCore.QRectF]:
        return [QtCore.QRectF(start - 0.5, row - 0.5, end - start, 1.0) for row, start, end in self._runs.tolist()]

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 - Qt API
        return self._bounds

    def paint(self, painter, *_):
        if not len(self._runs):
            return
        to_device = painter.transform()
        visible = to_device.inverted()[0].mapRect(QtCore.QRectF(painter.viewport())) if painter.viewport() else None
        key = (to_device.m11(), to_device.m22(), to_device.dx(), to_device.dy(),
               None if visible is None else visible.getRect(), self.color.rgba())
        if self._drawn is None or self._drawn[0] != key:
            runs = self._runs
            # the run ends before its row's diagonal: too far back; in an encoder every run is outside its window
            behind = runs[:, 2] <= runs[:, 0] if self._causal else np.ones(len(runs), dtype=bool)
            self._drawn = (key, [self._lines(runs[~behind], to_device, visible, _diagonals),
                                 self._lines(runs[behind], to_device, visible, _antidiagonals)])
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QtGui.QPen(self.color, 1.0))
        for lines, clip in self._drawn[1]:
            if not len(lines):
                continue
            painter.save()
            if clip is not None:
                painter.setClipPath(clip, QtCore.Qt.ClipOperation.IntersectClip)
            draw_line_array(painter, lines)
            painter.restore()
        painter.restore()

    @staticmethod
    def _lines(runs: np.ndarray, to_device: QtGui.QTransform, visible: QtCore.QRectF | None, hatching
               ) -> tuple[np.ndarray, QtGui.QPainterPath | None]:
        """The lines of the runs in sight (line_array rows, in device pixels), and a clip path when they
        share one set."""
        if len(runs) and visible is not None:  # the runs the painter can reach: a zoomed-in view sees a few rows
            rows, starts, ends = runs.T
            inside = ((rows + 0.5 >= visible.top()) & (rows - 0.5 <= visible.bottom())
                      & (ends - 0.5 >= visible.left()) & (starts - 0.5 <= visible.right()))
            runs = runs[inside]
        rects = _device_rects(runs, to_device)  # see pixel_grid
        if (np.sum(rects[:, 2] - rects[:, 0] + rects[:, 3] - rects[:, 1]) / SPACING_PX <= MAX_SEPARATE_LINES):
            return hatching(rects), None
        area = QtGui.QPainterPath()
        area.setFillRule(QtCore.Qt.FillRule.WindingFill)
        # the clip on whole pixels, each pixel in when its centre is (as the cells are coloured): an edge
        # between pixels was cut one way by a full repaint and another by a repaint of a part of the plot
        for left, top, right, bottom in np.ceil(rects - 0.5).tolist():
            area.addRect(QtCore.QRectF(QtCore.QPointF(left, top), QtCore.QPointF(right, bottom)))
        bounds = area.boundingRect()
        if visible is not None:
            bounds = bounds.intersected(to_device.mapRect(visible))
        origin = to_device.map(QtCore.QPointF(-0.5, -0.5))  # the lines keep their place on the cells as the view moves
        phase = (origin.x() + origin.y() if hatching is _diagonals else origin.x() - origin.y()) + SPACING_PX / 2
        bounds = steady_rect(bounds)
        return hatching(np.array([[bounds.left(), bounds.top(), bounds.right(), bounds.bottom()]]), phase), area


def _device_rects(runs: np.ndarray, to_device: QtGui.QTransform) -> np.ndarray:
    """(left, top, right, bottom) in device pixels of each run's cells, steadied as steady_rect does:
    the view only scales and shifts."""
    rows, starts, ends = (runs.T if len(runs) else np.zeros((3, 0)))
    xs = np.stack([(starts - 0.5) * to_device.m11() + to_device.dx(), (ends - 0.5) * to_device.m11() + to_device.dx()])
    ys = np.stack([(rows - 0.5) * to_device.m22() + to_device.dy(), (rows + 0.5) * to_device.m22() + to_device.dy()])
    rects = np.column_stack((xs.min(axis=0), ys.min(axis=0), xs.max(axis=0), ys.max(axis=0)))
    return np.round(rects * GRID) / GRID


def _diagonals(rects: np.ndarray, phase: float | None = None) -> np.ndarray:
    """Lines x + y = c across each rectangle (left, top, right, bottom) ("/" direction), SPACING_PX apart,
    clipped to it: line_array rows. The first half a spacing from its corner, or on the lines
    x + y = phase + k·SPACING_PX when a phase is given."""
    left, top, right, bottom = rects.T
    if phase is None:
        first = left + top + SPACING_PX / 2
    else:
        first = phase + np.ceil((left + top - phase) / SPACING_PX) * SPACING_PX
    counts = np.maximum(0, np.ceil((right + bottom - first) / SPACING_PX)).astype(np.intp)
    which = np.repeat(np.arange(len(rects)), counts)
    steps = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    c = first[which] + steps * SPACING_PX
    left, top, right, bottom = left[which], top[which], right[which], bottom[which]
    return np.column_stack((np.maximum(left, c - bottom), np.minimum(bottom, c - left),
                            np.minimum(right, c - top), np.maximum(top, c - right)))


def _antidiagonals(rects: np.ndarray, phase: float | None = None) -> np.ndarray:
    """Lines x − y = c across each rectangle ("\\" direction): _diagonals' lines in the rectangles mirrored
    top to bottom (y → −y turns x + y = c into x − y = c), mirrored back."""
    mirrored = np.column_stack((rects[:, 0], -rects[:, 3], rects[:, 2], -rects[:, 1]))
    lines = _diagonals(mirrored, phase)
    lines[:, 1] *= -1
    lines[:, 3] *= -1
    return lines
