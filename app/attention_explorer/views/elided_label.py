"""One line of text that is cut with … to its width and kept whole in its tooltip.

For texts whose length has no bound (a real model's reading written out, a note on what a reading
did): wrapped, they changed the height of the bar they sat in and moved the controls under the
pointer; unwrapped and uncut, they widened the window or ran under their neighbours.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from .painted_now import lay_out_text_now


class ElidedLabel(QtWidgets.QLabel):
    def __init__(self, text: str = "", parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self._full = ""
        self.set_full_text(text)

    def set_full_text(self, text: str, tip: str | None = None) -> None:
        """Show `text` (cut to the width); the tooltip is `tip`, by default the whole text."""
        self._full = text
        self.setToolTip(text.strip() if tip is None else tip)
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = self.contentsRect().width()
        shown = self.fontMetrics().elidedText(self._full, QtCore.Qt.TextElideMode.ElideRight, max(width, 0))
        if shown != self.text():
            self.setText(shown)
            if self.textInteractionFlags() & QtCore.Qt.TextInteractionFlag.TextSelectableByMouse:
                lay_out_text_now(self)  # see painted_now: each hover painted the heatmap's readout twice


class FoldingLabel(ElidedLabel):
    """A caption wrapped whole while its widget has room, folded to one line cut with … (and whole in
    its tooltip) when the widget is short of height: at 1280 × 720, with a decoder's next tokens and
    generation beside it, the model view's four wrapped lines of caption left its grid one row."""

    def __init__(self, text: str = "", parent: QtWidgets.QWidget | None = None):
        self._folded = False
        super().__init__(text, parent)
        self.setWordWrap(True)

    def set_folded(self, folded: bool) -> None:
        if folded != self._folded:
            self._folded = folded
            self.setWordWrap(not folded)
            self._elide()

    def _elide(self) -> None:
        if self._folded:
            super()._elide()
        elif self.text() != self._full:
            self.setText(self._full)
