"""Shows a view only from a given step of the timeline on, and a note in its place before that.

The arc diagram draws attention weights, which do not exist before the softmax step; while the
timeline stands earlier, its place says so instead of showing the finished weights too early.
"""

from __future__ import annotations

from PySide6 import QtWidgets

from ..controller import Controller
from .page_note import page_note


class QtStepGate(QtWidgets.QStackedWidget):
    def __init__(self, controller: Controller, view: QtWidgets.QWidget, from_step: int, note: str,
                 parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.from_step = from_step
        self.view = view
        self.note = page_note(note, self)
        self.note.setObjectName("stepGateNote")
        self.addWidget(view)
        self.addWidget(self.note)
        controller.step_changed.connect(self._on_step_changed)
        self._on_step_changed(controller.step)

    def view_shown(self) -> bool:
        return self.currentWidget() is self.view

    def _on_step_changed(self, step: int) -> None:
        self.setCurrentWidget(self.view if step >= self.from_step else self.note)
