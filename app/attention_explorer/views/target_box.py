"""The target box of an encoder–decoder (BART): the text its decoder reads, beside the sentence box,
which is then the source its encoder reads. Shown only while an encoder–decoder is open.

Each edit goes to the controller, which runs the model again on its worker (a newer edit supersedes
a run still going), as the sentence box's edits do. Write lets the model write the target itself;
a scrubber under it then steps through what it wrote (its slider, the ◀ ▶ buttons, ← / → on the
slider): the views read the target up to one token, their last row the one that chose it, and the
next tokens list what it was chosen from.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..controller import Controller
from .scrub_controls import scrub_controls
from .step_timeline import OWNS_ARROWS
from .token_count import DEFAULT_TOKENS, token_count_box
from .wrapped_height import with_wrapped_label

TARGET_TIP = ("The text the decoder reads, one token at a time, each token seeing only the ones before it; "
              "the sentence box above is the source the encoder reads. Cross-attention shows which source "
              "token each target token reads.")
WRITE_TIP = ("Let the model write the target for the source: each token the likeliest after the ones before "
             "it (and the first and last ones its files force), up to the count beside. The views then show "
             "the decoder reading what it wrote, its tokens marked ›, and the slider below steps through it.")
SCRUB_TIP = "The target written so far: the views read it up to this token, their last row the one that chose it"


class QtTargetBox(QtWidgets.QWidget):
    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.edit = QtWidgets.QLineEdit(controller.target)
        self.edit.setObjectName("targetBox")
        self.edit.setPlaceholderText("Type the target, e.g. the source itself")
        self.edit.setToolTip(TARGET_TIP)
        self.edit.setMaxLength(2**31 - 1)  # as long as the source may be (the target starts as it): Qt's 32,767 cut it
        caption = QtWidgets.QLabel("&Target")
        caption.setBuddy(self.edit)
        caption.setToolTip(TARGET_TIP)
        self.tokens = token_count_box(DEFAULT_TOKENS, "At most this many tokens written")  # its model raises it
        self.write_button = QtWidgets.QPushButton("Write")
        self.write_button.setToolTip(WRITE_TIP)
        self.back, self.slider, self.forth = scrub_controls("One token back (← on the slider)",
                                                            "One token on (→ on the slider)", SCRUB_TIP)
        self.position = QtWidgets.QLabel()  # which token the views read up to, or why Write wrote nothing
        self.position.setWordWrap(True)
        self.position.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # a token may read "</s>"
        self.scrubber = QtWidgets.QWidget()
        self.scrubber.setProperty(OWNS_ARROWS, True)  # the step timeline's ← and → leave the buttons alone

        row = QtWidgets.QHBoxLayout()
        for widget, stretch in ((caption, 0), (self.edit, 1), (self.tokens, 0), (self.write_button, 0)):
            row.addWidget(widget, stretch)
        scrub = QtWidgets.QHBoxLayout(self.scrubber)
        scrub.setContentsMargins(0, 0, 0, 0)
        for widget, stretch in ((self.back, 0), (self.slider, 1), (self.forth, 0)):
            scrub.addWidget(widget, stretch)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.scrubber)
        layout.addWidget(self.position)

        self.edit.textEdited.connect(controller.set_target)
        self.write_button.clicked.connect(lambda: controller.write_target(self.tokens.value()))
        self.slider.valueChanged.connect(controller.show_target_written)
        self.back.clicked.connect(lambda: controller.show_target_written(controller.target_shown - 1))
        self.forth.clicked.connect(lambda: controller.show_target_written(controller.target_shown + 1))
        controller.target_changed.connect(self._on_target_changed)
        for signal in (controller.real_model_changed, controller.busy_changed, controller.target_written_changed,
                       controller.pretrained_trace_changed, controller.sentence_changed):
            signal.connect(self._sync)
        self._sync()

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt's name
        """At least the height its rows take at this width, the wrapped line under the scrubber included."""
        return with_wrapped_label(super().minimumSizeHint(), self.position)

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
        written = c.target_written if c.is_encoder_decoder else None
        count = 0 if written is None else len(written.ids)
        self.scrubber.setVisible(count > 1)  # one token written has nothing to step through
        with QtCore.QSignalBlocker(self.slider):
            self.slider.setRange(1, max(count, 1))
            self.slider.setValue(c.target_shown or 1)
        self.back.setEnabled(c.target_shown > 1)
        self.forth.setEnabled(0 < c.target_shown < count)
        text = self._position_text(count) if c.is_encoder_decoder else ""
        self.position.setText(text)
        self.position.setVisible(bool(text))

    def _position_text(self, count: int) -> str:
        c = self.controller
        if c.write_error:
            return f"Nothing was written: {c.write_error}"
        if not count:
            return ""
        choice, shown = c.target_choice(), c.target_shown
        if choice is None or not choice[2] or choice[0] != shown - 1:
            return f"Token {shown} of {count} written: reading it…"
        label = "›" + c.real_model.tokenizer.token_label(choice[1])
        probability = c.pretrained_trace.scored_probability()
        if shown - 1 in c.target_written.forced:
            return f"Token {shown} of {count} written: the model's files force {label} here (its scores gave it " \
                   f"{probability:.1%})."
        return f"Token {shown} of {count} written: the last row chose {label} ({probability:.1%})."
