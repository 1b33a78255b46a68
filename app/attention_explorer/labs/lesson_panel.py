"""What every lesson panel shares: its explanation on top, an error line, and lazy recomputing.

A lesson recomputes only while it is on screen. When the controller changes (a key typed in the
main window, another model, a switch flipped) a hidden panel just notes that it is out of date and
catches up when it is shown, so the lessons cost nothing while the user types with them closed.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import LOOKED_AT, Controller
from ..engine import EngineError
from ..views import theme
from ..views.matrix_plot import MatrixPlot

ERROR_COLOR = "#E03131"  # the colour the main window's status line uses for errors


class LessonPanel(QtWidgets.QWidget):
    """Base of the lesson panels. Subclasses set `explanation` (titles are in lesson_list), add their
    widgets to `self.body`, and implement `refresh()`, which may raise EngineError to show its message."""

    explanation = ""
    follows_controller = True  # False for lessons that do not read the sentence, model or options

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.refresh_count = 0  # how many times the panel recomputed (tests check hidden panels stay idle)
        self._stale = True

        intro = QtWidgets.QLabel(self.explanation)
        intro.setObjectName("lessonExplanation")
        intro.setWordWrap(True)
        intro.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        font = QtGui.QFont(intro.font())
        font.setPointSizeF(font.pointSizeF() * 1.05)
        intro.setFont(font)
        self.error_line = QtWidgets.QLabel("")
        self.error_line.setObjectName("lessonError")
        self.error_line.setWordWrap(True)
        self.error_line.setStyleSheet(f"color:{ERROR_COLOR};")
        self.error_line.hide()
        self.content = QtWidgets.QWidget()  # the lesson's controls and drawings, under the error line
        self.body = QtWidgets.QVBoxLayout(self.content)
        self.body.setContentsMargins(0, 0, 0, 0)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.addWidget(intro)
        layout.addWidget(self.error_line)
        layout.addWidget(self.content, 1)

        if self.follows_controller:
            controller.trace_changed.connect(self.request_refresh)
            controller.head_changed.connect(self.request_refresh)
            controller.colormap_changed.connect(self.request_refresh)
            controller.focus_changed.connect(self.show_focus)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt API
        """The least height the lesson needs at `width`. The lessons window's scroll area makes a panel
        this tall when the window is shorter, else the window's height: with the layout's preferred
        height instead (Qt's default) the plots kept their full size and almost every lesson scrolled
        on a 720-pixel screen, though they fit once shrunk."""
        return self.layout().totalMinimumHeightForWidth(width)

    # --- lazy recomputing -----------------------------------------------------------------------
    def request_refresh(self, *_) -> None:
        """Recompute now if the panel is on screen, else when it is next shown."""
        self._stale = True
        if self.isVisible():
            self._refresh_now()

    def is_stale(self) -> bool:
        return self._stale

    def showEvent(self, event: QtGui.QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._stale:
            self._refresh_now()

    def _refresh_now(self) -> None:
        self._stale = False
        self.refresh_count += 1
        try:
            self.refresh()
        except EngineError as exc:
            self.show_error(str(exc))
            # Nothing to compute in the main window (empty sentence, no known word): the drawings
            # would be of a sentence that is gone, so only the message stays.
            self.content.setVisible(not (self.follows_controller and self.controller.trace is None))
        else:
            self.show_error("")
            self.content.setVisible(True)
        self.show_focus()

    def refresh(self) -> None:
        raise NotImplementedError

    def show_focus(self, *_) -> None:
        """Frame the main window's focused word in every heatmap of this panel that shows the sentence:
        its row when it is the word looking, its column when it is the word looked at (a heatmap with
        the words on one side only frames that side); its label is drawn as focused on every side
        that lists the sentence's words."""
        trace, focus = self.controller.trace, self.controller.focus
        words = list(trace.labels) if trace is not None else []
        looked_at = self.controller.focus_role == LOOKED_AT
        for heatmap in self.findChildren(MatrixPlot):
            rows, cols = heatmap.row_labels() == words, heatmap.column_labels() == words
            if focus is None or not words or not (rows or cols):
                heatmap.set_focus(None, None)
                continue
            by_col = cols and (looked_at or not rows)
            heatmap.set_focus(None if by_col else focus, focus if by_col else None,
                              words=(focus if rows else None, focus if cols else None))

    # --- helpers for subclasses -----------------------------------------------------------------
    def show_error(self, text: str) -> None:
        self.error_line.setText(text)
        self.error_line.setVisible(bool(text))

    def current_trace(self):
        """The controller's trace; EngineError with the controller's own message when there is none."""
        trace = self.controller.trace
        if trace is None:
            raise EngineError(self.controller.error or "Type a sentence in the main window to start.")
        return trace

    def current_head(self) -> int:
        return min(self.controller.head, self.controller.options.heads - 1)

    @staticmethod
    def note(text: str = "") -> QtWidgets.QLabel:
        """A wrapped line of plain text in the muted colour (for captions under plots)."""
        label = QtWidgets.QLabel(text)
        label.setWordWrap(True)
        label.setStyleSheet(f"color:{theme.muted().name(QtGui.QColor.NameFormat.HexArgb)};")
        return label

    @staticmethod
    def finding(text: str = "") -> QtWidgets.QLabel:
        """A wrapped, selectable line stating what the experiment shows (rich text allowed)."""
        label = QtWidgets.QLabel(text)
        label.setWordWrap(True)
        label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        return label


def number_box(low: int, high: int, value: int, tip: str) -> QtWidgets.QSpinBox:
    """A spin box for a lesson's whole-number setting; it recomputes when the number is complete,
    not on every digit typed."""
    box = QtWidgets.QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setToolTip(tip)
    box.setGroupSeparatorShown(True)
    box.setKeyboardTracking(False)
    return box
