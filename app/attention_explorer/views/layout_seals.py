"""Widgets that keep a child's changes from the layouts around it, the window's included.

Qt answers a child's change of text or size by asking its parent's layout to lay out again, and that
layout's parent, up to the window, a pass of the event loop each, and paints again what they cover,
though nothing around the child moves. Each seal passes such a request on only when what the layouts
around need of the child changed: never (one line of text), its height at its width (a wrapped label),
or its room (a pane).
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class LayoutSeal(QtWidgets.QWidget):
    """Holds one widget whose changes never change its size (an ElidedLabel: as wide as it is given,
    one line high) and keeps them from the layout around it. QLabel.setText asks its parent's layout to
    lay out again whatever the text, and that layout's parent, up to the window: a reading toggled
    laid out the toolbar and then the window, over four to six event-loop passes, for a note under
    the toolbar that moved nothing. Here the label's parent has no layout, so the request stops."""

    def __init__(self, child: QtWidgets.QWidget, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.child = child
        child.setParent(self)
        self.setSizePolicy(child.sizePolicy())

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        return self.child.sizeHint()

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        return self.child.minimumSizeHint()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        self.child.setGeometry(self.rect())


class PaneSeal(LayoutSeal):
    """Holds a pane whose parts change their sizes among themselves (the model view's caption taking a
    line more, its grid the height it gave up) and passes its layout requests on only when the pane no
    longer fits the room it has: its least size above it, or its largest below it.

    A pane's layout, once it has laid the parts out again, asks its parent's to do the same, and that
    the dock's, and that the window's, a pass of the event loop each, though nothing around the pane
    moves: a reading toggled at 2,048 SmolLM2 tokens (its note under the model view's caption) settled
    in three passes, the last repainting part of the window as it was. A layout around that runs for
    another reason reads the pane's hints as they are then."""

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.LayoutRequest and not self._fits():
            self.updateGeometry()
        return super().event(event)

    def _fits(self) -> bool:
        least = self.child.minimumSizeHint().expandedTo(self.child.minimumSize())
        most, room = self.child.maximumSize(), self.size()
        return (least.width() <= room.width() and least.height() <= room.height()
                and most.width() >= room.width() and most.height() >= room.height())


class WrappedLabelSeal(LayoutSeal):
    """Holds a word-wrapped label whose text changes often (a scrubber's line, the next tokens' title)
    and passes its layout requests on only when its size at its width changes. A new text of the same
    number of lines asked the panel, the dock and the window to lay out again at every step of the
    scrubber: the window's layout then moved its docks and toolbars again and repainted them, in a
    pass of its own."""

    def __init__(self, label: QtWidgets.QLabel, parent: QtWidgets.QWidget | None = None):
        super().__init__(label, parent)
        self._needs = self._needs_now()

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt API
        return self.child.hasHeightForWidth()

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        """The label's width hint and, once placed, the height it needs at the width it has: a wrapped
        label's own height hint is for the width it would like, which changes with every text (two or
        three lines), and a layout short of room shares it out from that hint."""
        hint = self.child.sizeHint()
        if self.testAttribute(QtCore.Qt.WidgetAttribute.WA_Resized) and self.width() > 0:
            hint.setHeight(self.heightForWidth(self.width()))
        return hint

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt API
        """The label's height at `width`, and no less than the least it keeps (lines kept for a longer text)."""
        return max(self.child.heightForWidth(width), self.child.minimumHeight())

    def _needs_now(self) -> tuple:
        """What the layout around needs of the label: its height at its width (its height hint too),
        whether it shows, and whether its longest word still fits. Not the width it would like (233 or
        238 px for two lines of a scrubber step), nor its least width below the width it has: they follow
        each text without changing what is shown, and a layout run for another reason reads them then."""
        least = self.child.minimumSizeHint()
        return (self.heightForWidth(max(self.width(), 1)), least.height(), least.width() <= self.width(),
                self.child.isVisibleTo(self))

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.LayoutRequest:
            self._pass_on_a_change()
        return super().event(event)

    def _pass_on_a_change(self) -> None:
        needs = self._needs_now()
        if needs != self._needs:
            self._needs = needs
            self.updateGeometry()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._pass_on_a_change()  # its height hint is the height at its width

    def showEvent(self, event) -> None:  # noqa: N802 - Qt API
        """Shown again (itself or a window or dock around it): a text set while hidden asked nothing of
        anyone (Qt sends a hidden widget no layout request), so its size is checked now."""
        super().showEvent(event)
        self._pass_on_a_change()
