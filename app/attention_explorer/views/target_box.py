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
WRITE_TIP = ("Let the model write the target for the source: each token the likeliest after the ones before "
             "it (and the first and last ones its files force), up to the count beside. The views then show "
             "the decoder reading what it wrote, its tokens marked ›.")
DEFAULT_TOKENS = 32


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
        self.tokens = QtWidgets.QSpinBox()
        self.tokens.setRange(1, DEFAULT_TOKENS)
        self.tokens.setValue(DEFAULT_TOKENS)
        self.tokens.setSuffix(" tokens")
        self.tokens.setToolTip("At most this many tokens written")
        self.write_button = QtWidgets.QPushButton("Write")
        self.write_button.setToolTip(WRITE_TIP)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(caption)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.tokens)
        layout.addWidget(self.write_button)
        self.edit.textEdited.connect(controller.set_target)
        self.write_button.clicked.connect(lambda: controller.write_target(self.tokens.value()))
        controller.target_changed.connect(self._on_target_changed)
        controller.real_model_changed.connect(self._sync)
        controller.busy_changed.connect(self._sync)
        self._sync()

    def _on_target_changed(self, target: str) -> None:
        if target != self.edit.text():
            with QtCore.QSignalBlocker(self.edit):
                self.edit.setText(target)

    def _sync(self, *_):
        c = self.controller
        self.setVisible(c.is_encoder_decoder)
        self._on_target_changed(c.target)
        if c.is_encoder_decoder:  # as many as its decoder reads
            self.tokens.setMaximum(c.real_model.model.weights.decoder.arch.max_positions)
        self.write_button.setEnabled(c.is_encoder_decoder and not c.busy)
