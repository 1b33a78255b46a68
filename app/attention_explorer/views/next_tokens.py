"""A decoder's five likeliest next tokens after the text, with their probabilities, from the last forward;
an encoder–decoder's five likeliest for its target's last token (the one its last row chose, when it
wrote the target), by the decoder's last row.

They change live when a head is switched off, which is the quickest way to see what a head does.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..controller import Controller
from .candidate_rows import QtCandidateRows
from .layout_seals import WrappedLabelSeal
from .wrapped_height import with_wrapped_label

SHOWN = 5
WORD_COLUMN_PX = 110  # the tokens' column, as wide whatever they are: a step of the scrubber moves no bar
TITLE_LINES = 2


class QtNextTokens(QtWidgets.QWidget):
    """The top five of the decoder's next-token guess; a line saying why there is none otherwise."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.title = QtWidgets.QLabel()
        self.title.setWordWrap(True)
        # room for two lines, the most a title needs in a dock of usual width: a head switched off added
        # ", with 1 head off" and a second line, and the model view beside was laid out and drawn again
        self.title.setMinimumHeight(TITLE_LINES * self.title.fontMetrics().lineSpacing())
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(WrappedLabelSeal(self.title))  # a step's new title lays out nothing else
        self.candidates = QtCandidateRows(SHOWN, WORD_COLUMN_PX)  # each token cut with … to its column
        layout.addWidget(self.candidates)
        layout.addStretch(1)
        controller.pretrained_trace_changed.connect(self._sync)  # a scrubber step's count comes with its trace
        controller.real_model_changed.connect(self._sync)
        controller.error_changed.connect(self._sync)  # said after the trace's signals: a stopped forward
        controller.target_written_changed.connect(self._sync)
        self._sync()

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt's name
        """At least the height its title takes wrapped at this width: an encoder–decoder's three lines
        were cut at their top and bottom beside the model view at 1280 × 720."""
        return with_wrapped_label(super().minimumSizeHint(), self.title)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the title wraps anew: its least height changes

    def shown(self) -> list[tuple[str, float]]:
        """What the rows say: (token, probability), best first."""
        ptrace = self.controller.pretrained_trace
        return [(t.label, t.probability) for t in ptrace.next_tokens] if ptrace is not None else []

    def _target_title(self, model, ptrace, chosen: tuple[int, int, bool] | None) -> str:
        """What an encoder–decoder's rows are: the scores its decoder's last row gave the target's token."""
        if ptrace is None or chosen is None:
            return self.controller.error or "Running the model…"
        index, token, written = chosen
        label = repr(model.tokenizer.token_label(token))
        if not written:
            return f"Its guess at the target's last token, {label}, after the ones before it:"
        was = self.controller.target_written
        if was is not None and ptrace.off != was.off:
            return f"Token {index + 1} written was {label}; with the heads now off, the scores are:"
        return f"Token {index + 1} written, {label}, was chosen from:"

    def _sync(self, *_) -> None:
        model, ptrace = self.controller.real_model, self.controller.pretrained_trace
        chosen = self.controller.shown_choice()  # a generation's text so far: (index, token written after it)
        if model is None:
            self.title.setText("The next tokens of a decoder (SmolLM2, GPT-2, Llama, Qwen, Gemma, …) show here.")
        elif model.is_encoder_decoder:
            chosen = self.controller.target_choice()
            self.title.setText(self._target_title(model, ptrace, chosen))
        elif not model.is_decoder:
            self.title.setText(f"{model.name} is an encoder: it reads the whole text and guesses no next token.")
        elif ptrace is None:
            self.title.setText(self.controller.error or "Running the model…")  # a stopped or failed forward says so
        else:
            off = len(ptrace.ablated)  # the heads off in the forward these numbers came from
            note = f", with {off} head{'s' if off != 1 else ''} off" if off else ""
            if chosen is not None:
                written = model.tokenizer.label_after(ptrace.encoded, chosen[1])  # as the rows name it
                self.title.setText(f"Token {chosen[0] + 1} written, {written!r}, was chosen from{note}:")
            else:
                self.title.setText(f"What {model.name} would write next{note}:")
        chosen_id = None if chosen is None else chosen[1]
        candidates = ptrace.next_tokens if ptrace is not None else ()
        self.candidates.set_rows([(t.label, t.probability, t.token_id == chosen_id)  # bold: the token written here
                                  for t in candidates])
        self.candidates.setVisible(bool(candidates))
