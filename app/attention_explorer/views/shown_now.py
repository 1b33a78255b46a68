"""Show a widget so that it is painted with the window's next repaint, not a pass of the event loop later.

Qt posts a widget it shows a request to paint itself (an UpdateLater event). The event loop delivers it
after the pass that paints the window, and the widget is painted again on the pass after that: every
action that showed a widget (the Steps dock's note on a reading, the chips of the specials shown again)
took two passes to settle. Here the widget is marked for the window's next repaint instead, which paints
the whole of it: a later request for part of it would add nothing.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


def set_visible_now(widget: QtWidgets.QWidget, visible: bool) -> None:
    """widget.setVisible(visible), a widget shown painted with the window's next repaint."""
    shown_before = widget.isVisible()
    widget.setVisible(visible)
    if visible and not shown_before and widget.isVisible():
        QtCore.QCoreApplication.removePostedEvents(widget, QtCore.QEvent.Type.UpdateLater)
        widget.update()
