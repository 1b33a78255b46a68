"""A graphics item drawn partly in pixels inside a view that scales: its bounds grow with the view.

Texts and wide pens reach a fixed number of pixels beyond the data points they are placed at. Qt
repaints, and clears, only what an item's boundingRect covers, so bounds given in data units alone
left the ends of long words and the caps of wide lines outside them, where a partial repaint never
cleared them (the stale pixels users saw beside the arc diagram's words).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore


class PixelPaddedItem(pg.GraphicsObject):
    def padded(self, rect: QtCore.QRectF, px_wide: float, px_high: float) -> QtCore.QRectF:
        """`rect` (data units) widened by `px_wide` and `px_high` pixels on each side, at the view's
        scale of the moment (the rect itself when the item is in no view yet)."""
        px_x, px_y = self.pixelVectors()
        if px_x is None:
            return rect
        per_x, per_y = max(abs(px_x.x()), abs(px_x.y())), max(abs(px_y.x()), abs(px_y.y()))
        dx, dy = px_wide * per_x, px_high * per_y
        return rect.adjusted(-dx, -dy, dx, dy)

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph API
        """A zoom or resize changes how far the pixels reach in data units: the bounds change with it."""
        self.prepareGeometryChange()
        super().viewTransformChanged()
