"""The target box of an encoder–decoder (BART): the text its decoder reads, beside the sentence box,
which is then the source its encoder reads. Shown only while an encoder–decoder is open.

Each edit goes to the controller, which runs the model again on its worker (a newer edit supersedes
a run still going), as the sentence box's edits do.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..controller import Controller

TARGET_TIP = ("The text the decoder reads, one token at a time, each token seeing only the ones before it; "
              "the sentence box above is the source the encoder reads. Cross-attention shows which source "
              "token each target token reads.")


class QtTargetBox(QtWidgets.QWidget):
    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.edit = QtWidgets.QLineEdit(controller.target)
        self.edit.setObjectName("targetBox")
        self.edit.setPlaceholderText("Type the target, e.g. the source itself")
        self.edit.setToolTip(TARGET_TIP)
        caption = QtWidgets.QLabel("&Target")
        caption.setBuddy(self.edit)
        caption.setToolTip(TARGET_TIP)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(caption)
        layout.addWidget(self.edit, 1)
        self.edit.textEdited.connect(controller.set_target)
        controller.target_changed.connect(self._on_target_changed)
        controller.real_model_changed.connect(self._sync)
        self._sync()

    def _on_target_changed(self, target: str) -> None:
        if target != self.edit.text():
            with QtCore.QSignalBlocker(self.edit):
                self.edit.setText(target)

    def _sync(self, *_):
        self.setVisible(self.controller.is_encoder_decoder)
        self._on_target_changed(self.controller.target)
