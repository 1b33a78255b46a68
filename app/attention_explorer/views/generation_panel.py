"""A decoder writes: Generate (a count of tokens; it stops sooner at the model's stop token) and Stop,
how it picks each token (greedy or drawn, and whether the text is asked as a chat: sampling_controls.py),
a scrubber over what it wrote (its slider, the ◀ ▶ buttons, and ← / → while it has the keys), and
the text, the prompt plain and the tokens written tinted, the token the scrubber stands on framed.

Shown under the next tokens while a decoder is open. After Generate again with other heads off, the
two continuations stand one above the other, each after its heads, with the first token where they
part marked in both.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import Controller
from ..engine.errors import EngineError
from .layout_seals import WrappedLabelSeal
from .sampling_controls import QtSamplingControls
from .scrub_controls import scrub_controls
from .step_timeline import OWNS_ARROWS
from .token_count import token_count_box
from .wrapped_height import with_wrapped_label
from .written_text import WrittenText

MOST_TOKENS = 2048


class QtGenerationPanel(QtWidgets.QWidget):
    export_requested = QtCore.Signal()  # Export…: the window asks where and writes the generation

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.tokens = token_count_box(MOST_TOKENS, "Write at most this many tokens (it stops sooner at the "
                                                   "model's stop token)")
        self.generate_button = QtWidgets.QPushButton("Generate")
        self.generate_button.setToolTip("The model writes after the text, one token at a time, picked as set "
                                        "below; with a generation shown, it writes again after the same prompt "
                                        "with the heads now switched off")
        self.sampling = QtSamplingControls()
        self.stop_button = QtWidgets.QPushButton("Stop")
        self.stop_button.setToolTip("Stop after the token being written; what was written stays")
        self.export_button = QtWidgets.QPushButton("Export…")
        self.export_button.setToolTip("Write the generation: every token, its candidates and its attention "
                                      "(JSON or CSV), or its attention rows as a figure (PNG, SVG, GIF)")
        self.back, self.slider, self.forth = scrub_controls(
            "One token back (←)", "One token on (→)",
            "The text so far: how many written tokens the views show (← and → step)")
        self.position = QtWidgets.QLabel()
        self.position.setWordWrap(True)
        self.position.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # a token may read "<|im_end|>"
        self.text = QtWidgets.QTextBrowser()  # shown once there is a generation: the model view keeps the room
        self.text.setOpenLinks(False)
        self.text.setMinimumHeight(3 * self.fontMetrics().lineSpacing())
        # its bar always there: shown and hidden again as each step's text was set, the text was laid out
        # three times a step and the panel around it once more
        self.text.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.text.installEventFilter(self)  # ← and → step the scrubber there too (the text has no caret)
        self.slider.installEventFilter(self)  # its held ← and → are gathered as the panel's are (_stepped)
        self._held_steps = 0                  # a held key's repeats not yet shown
        self._held = QtCore.QTimer(self)
        self._held.setSingleShot(True)
        self._held.setInterval(0)             # fires once the window has handled every key event waiting
        self._held.timeout.connect(self._step_held)
        self.written = WrittenText(self.text)
        self.setProperty(OWNS_ARROWS, True)   # the step timeline's ← and → leave this panel alone
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.ClickFocus)

        controls = QtWidgets.QHBoxLayout()
        for widget in (self.generate_button, self.tokens, self.stop_button, self.export_button):
            controls.addWidget(widget)
        controls.addStretch(1)
        scrub = QtWidgets.QHBoxLayout()
        for widget in (self.back, self.slider, self.forth):
            scrub.addWidget(widget)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(controls)
        layout.addWidget(self.sampling)
        layout.addLayout(scrub)
        layout.addWidget(WrappedLabelSeal(self.position))  # a step's new line lays out nothing else
        layout.addWidget(self.text, 1)

        self.generate_button.clicked.connect(self._generate)
        self.stop_button.clicked.connect(controller.stop_generating)
        self.export_button.clicked.connect(self.export_requested)
        self.slider.valueChanged.connect(controller.show_written)
        self.back.clicked.connect(lambda: controller.show_written(controller.written_shown - 1))
        self.forth.clicked.connect(lambda: controller.show_written(controller.written_shown + 1))
        # Not written_shown_changed: a scrubber step says it together with pretrained_trace_changed (the
        # count already set), and hearing both synced the panel twice a step.
        for signal in (controller.real_model_changed, controller.generation_changed, controller.generating_changed,
                       controller.pretrained_trace_changed, controller.ablation_changed, controller.busy_changed,
                       controller.sentence_changed):
            signal.connect(self._sync)
        self._sync()

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt's name
        """At least the height its rows take at this width. The line under the scrubber wraps, and a
        splitter reads only the minimum (which leaves the wrapping out): squeezed to it beside the model
        view at 1280 × 720, every row lost a pixel or more and the sampling boxes cut their text."""
        return with_wrapped_label(super().minimumSizeHint(), self.position)

    def _generate(self) -> None:
        try:
            sampling = self.sampling.sampling()
        except EngineError as error:  # the boxes' ranges keep it valid; said, never raised, if not
            self.position.setText(str(error))
            return
        self.controller.generate(self.tokens.value(), sampling, self.sampling.as_chat())

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if not self._stepped(event):
            super().keyPressEvent(event)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QtCore.QEvent.Type.KeyPress and (
                watched is self.text or (watched is self.slider and event.isAutoRepeat())):
            return self._stepped(event)
        return super().eventFilter(watched, event)

    def _stepped(self, event: QtGui.QKeyEvent) -> bool:
        """← or →: the scrubber one token back or on. A held key's repeats are gathered and shown as one
        step once the window has handled every key event waiting: stepped one by one, the repeats that
        came while a step was drawn (a step of a long text takes longer than the keyboard's repeat) queued
        up, and the scrubber went on moving after the key was let go."""
        step = {QtCore.Qt.Key.Key_Left: -1, QtCore.Qt.Key.Key_Right: 1}.get(QtCore.Qt.Key(event.key()))
        if step is None or event.modifiers() & ~QtCore.Qt.KeyboardModifier.KeypadModifier:
            return False
        self._held_steps += step
        if event.isAutoRepeat():
            self._held.start()
        else:
            self._step_held()
        return True

    def _step_held(self) -> None:
        self._held.stop()
        steps, self._held_steps = self._held_steps, 0
        if steps:
            self.controller.show_written(self.controller.written_shown + steps)

    def _sync(self, *_) -> None:
        c = self.controller
        model, generation = c.real_model, c.generation
        self.setVisible(model is not None and model.is_decoder)
        writing = c.generating
        room = c.room_to_write()
        self.generate_button.setEnabled(c.can_generate() and room > 0)
        most = min(room, MOST_TOKENS)  # the context's room after the prompt
        if room > 0 and self.tokens.maximum() != most:
            # set only when it changes: set at all, even to the same number, the box asks to be laid out
            # again, and with it the panel, the dock and the window
            self.tokens.setMaximum(most)
        self.generate_button.setText("Generate again" if generation is not None and not writing else "Generate")
        self.stop_button.setEnabled(writing)
        self.export_button.setEnabled(generation is not None and not writing)
        self.tokens.setEnabled(not writing)
        self.sampling.setEnabled(not writing)
        if model is not None and model.is_decoder:
            self.sampling.offer_chat(model.name, model.generation.chat_template is not None)
        scrubbable = generation is not None and c.can_scrub()
        ready = c.written_ready
        with QtCore.QSignalBlocker(self.slider):
            self.slider.setRange(0, ready)
            self.slider.setValue(c.written_shown)
        self.slider.setEnabled(scrubbable and ready > 0)
        self.back.setEnabled(scrubbable and 0 < c.written_shown <= ready)  # (a new generation: none read yet)
        self.forth.setEnabled(scrubbable and c.written_shown < ready)
        self.position.setText(self._position_text())
        self.text.setVisible(generation is not None)
        if generation is None:
            self.written.clear()
        else:
            self.written.show(model.tokenizer, generation, c.compared, c.written_shown)

    def _position_text(self) -> str:
        c = self.controller
        generation = c.generation
        if generation is None:
            return c.generation_error or "Generate writes after the text; the views then follow each new token."
        if not c.can_scrub():
            return ("The heads switched off changed since this was written: the views read the text again with "
                    "them. Generate again to write with them, or switch the heads back to step through it.")
        count, shown = len(generation.steps), c.written_shown
        state = "writing…" if c.generating else _ended(generation.stopped)
        if shown < count:
            step = generation.steps[shown]
            where = (f"Token {shown + 1} of {count}: the last row chose {_label(c, step.token_id)} "
                     f"({step.choice.probability:.1%})")
        else:
            where = f"All {count} written tokens; next tokens: the model's guess after them"
        return f"{where}. ({state})"


def _label(controller: Controller, token_id: int) -> str:
    return "›" + controller.real_model.tokenizer.token_label(token_id)


def _ended(stopped: str) -> str:
    from ..engine.pretrained.generate import CANCELLED, LENGTH, STOP_TOKEN

    return {STOP_TOKEN: "stopped at the model's stop token", LENGTH: "wrote the count asked for",
            CANCELLED: "stopped"}.get(stopped, "stopped")
