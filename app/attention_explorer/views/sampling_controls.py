"""How the decoder picks each token when it writes in the window: greedy, or drawn at a temperature
with top-k, top-p and a seed; and whether the prompt is asked as a chat, in the model's own template.

The same choices as `attention-explorer generate` (--temperature, --top-k, --top-p, --seed, --chat),
read back as the engine's Sampling. A temperature of 0 is greedy, as on the command line; top-k,
top-p and the seed only matter for a draw, so they are greyed out while it is greedy. "As a chat"
is offered only when the model's files carry a chat template, and says so when they do not.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..engine.pretrained.sampling import Sampling

MOST_TEMPERATURE = 5.0   # past a few, every token is as likely as any other: noise, not a draw
MOST_TOP_K = 100_000     # more than any vocabulary the app opens; 0 keeps them all
MOST_SEED = 2**31 - 1    # what a spin box holds


class QtSamplingControls(QtWidgets.QWidget):
    changed = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.temperature = QtWidgets.QDoubleSpinBox()
        self.temperature.setRange(0.0, MOST_TEMPERATURE)
        self.temperature.setDecimals(2)
        self.temperature.setSingleStep(0.1)
        self.temperature.setSpecialValueText("greedy")  # 0: the likeliest token each time
        self.temperature.setToolTip("0 (greedy): the likeliest token each time. Above 0 each token is drawn, "
                                    "the scores divided by the temperature first: lower sharpens, higher "
                                    "flattens")
        self.top_k = QtWidgets.QSpinBox()
        self.top_k.setRange(0, MOST_TOP_K)
        self.top_k.setSpecialValueText("all")
        self.top_k.setToolTip("Draw only from the k likeliest tokens (all: no limit)")
        self.top_p = QtWidgets.QDoubleSpinBox()
        self.top_p.setRange(0.01, 1.0)
        self.top_p.setDecimals(2)
        self.top_p.setSingleStep(0.05)
        self.top_p.setValue(1.0)
        self.top_p.setToolTip("Draw only from the likeliest tokens whose probabilities together reach p "
                              "(1: no limit)")
        self.seed = QtWidgets.QSpinBox()
        self.seed.setRange(0, MOST_SEED)
        self.seed.setToolTip("The same seed and settings write the same text again")
        self.chat = QtWidgets.QCheckBox("As a chat")
        self.chat.setEnabled(False)

        # two rows of three: the dock beside the views is often under 400 pixels wide
        layout = QtWidgets.QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setHorizontalSpacing(8)
        layout.setVerticalSpacing(2)
        for at, (label, widget) in enumerate((("Temperature", self.temperature), ("top-k", self.top_k),
                                              ("top-p", self.top_p), ("seed", self.seed))):
            layout.addWidget(_labelled(label, widget), at // 3, at % 3)
        layout.addWidget(self.chat, 1, 1, 1, 2, QtCore.Qt.AlignmentFlag.AlignLeft)  # no dead space to click
        layout.setColumnStretch(3, 1)

        self.temperature.valueChanged.connect(self._sync)
        for signal in (self.temperature.valueChanged, self.top_k.valueChanged, self.top_p.valueChanged,
                       self.seed.valueChanged, self.chat.toggled):
            signal.connect(self.changed)
        self._sync()

    def sampling(self) -> Sampling:
        """The choices as the engine reads them (top-k, top-p and seed kept as set, used only for a draw)."""
        return Sampling(temperature=self.temperature.value(), top_k=self.top_k.value(), top_p=self.top_p.value(),
                        seed=self.seed.value())

    def as_chat(self) -> bool:
        return self.chat.isEnabled() and self.chat.isChecked()

    def offer_chat(self, model_name: str | None, has_template: bool) -> None:
        """"As a chat" for a model whose files carry a chat template; greyed out, saying why, otherwise."""
        self.chat.setEnabled(has_template)
        if has_template:
            self.chat.setToolTip(f"Put the text into {model_name}'s chat template, as the user's turn, and let "
                                 f"the model write its reply; the views show the template's tokens too")
        else:
            self.chat.setToolTip("This model's files carry no chat template: it writes after the text as it is")

    def _sync(self, *_) -> None:
        drawn = self.temperature.value() > 0
        for widget in (self.top_k, self.top_p, self.seed):
            widget.setEnabled(drawn)


def _labelled(text: str, widget: QtWidgets.QWidget) -> QtWidgets.QWidget:
    """`widget` with its name in front, kept together when the row wraps."""
    pair = QtWidgets.QWidget()
    row = QtWidgets.QHBoxLayout(pair)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(3)
    label = QtWidgets.QLabel(text)
    label.setBuddy(widget)
    row.addWidget(label)
    row.addWidget(widget)
    return pair
