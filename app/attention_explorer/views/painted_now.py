"""Widgets painted with the window's next repaint, not again a pass of the event loop later.

An action settles when the event loop has painted what it changed. Two things Qt does on its own put a
second paint of a widget off to a later pass:
- Qt posts a widget it shows a request to paint itself (an UpdateLater event), delivered after the pass
  that paints the window: the Steps dock's note on a reading was painted again a pass late.
- A label whose text a text document lays out (rich text, or text the mouse can select) lays it out for
  a new text or width in its paint, which asks for a paint from within the paint; Qt puts that off to a
  later pass too (the Steps dock's table captions, the heatmap's readout).
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


def set_visible_now(widget: QtWidgets.QWidget, visible: bool) -> None:
    """widget.setVisible(visible), a widget shown marked for the window's next repaint instead, which
    paints the whole of it: the request Qt posted for part of it would add nothing."""
    shown_before = widget.isVisible()
    widget.setVisible(visible)
    if visible and not shown_before and widget.isVisible():
        QtCore.QCoreApplication.removePostedEvents(widget, QtCore.QEvent.Type.UpdateLater)
        widget.update()


def lay_out_text_now(label: QtWidgets.QLabel) -> None:
    """Lay `label`'s text out for its width now, not in its next paint (after a new text or width)."""
    label.heightForWidth(label.width())
