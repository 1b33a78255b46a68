"""The real model's controls: which layer the main views show, how the layer is read (words, without
special tokens or sinks, rollout), switching heads off, and a line saying what the reading did. For an
encoder–decoder also which of its attentions is shown (the heads switched off are the ones of that
attention); the readings read it too, but for Rollout on cross-attention, off with its tooltip saying why.

Shown only while a real model is open; every control writes through a controller setter and follows
its signals with the control's own signals blocked, as the options bar does.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..controller import Controller
from ..pretrained_display import CROSS_ROLLOUT_WHY, MERGE_RULE
from .elided_label import ElidedLabel
from .layout_seals import LayoutSeal

# the parts of an encoder–decoder, as engine/pretrained/encoder_decoder_view.PARTS names them (that module
# loads with the real models, not at start)
PARTS = (("cross", "Cross-attention (target reads source)"), ("encoder", "Encoder self-attention"),
         ("decoder", "Decoder self-attention (causal)"))
PART_TIP = ("Which attention of the encoder–decoder the views show: the encoder's over the source, the "
            "decoder's over the target (each token sees only the ones before it), or cross-attention, where "
            "each target token reads the source")
NO_CROSS_ROLLOUT = (f"Not for cross-attention: {CROSS_ROLLOUT_WHY}. Choose Encoder or Decoder self-attention "
                    f"to roll one of them out")


class QtPretrainedBar(QtWidgets.QWidget):
    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.layer = QtWidgets.QComboBox()
        self.layer.setToolTip("Which layer the heatmap, arcs and steps show")
        # One width for every model, room for "100 of 100": "10 of 30" outgrew the width the first model's
        # "1 of 6" gave it, and a box that followed its items moved the whole bar at each model opened
        self.layer.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.layer.setMinimumContentsLength(len("100 of 100"))
        self.merge = QtWidgets.QCheckBox("Words")
        self.merge.setToolTip("Merge subword pieces into words — " + MERGE_RULE.split(": ", 1)[1])
        self.hide_specials = QtWidgets.QCheckBox("Hide specials")
        self.hide_specials.setToolTip("Leave out special tokens ([CLS], [SEP], <|im_start|>…) and share each "
                                      "row's remaining weight out again so it sums to 1")
        self.hide_first = QtWidgets.QCheckBox("Hide first token")
        self.hide_first.setToolTip("Leave out the first token, where many heads park their weight (a sink), "
                                   "and share each row's remaining weight out again")
        self.rollout = QtWidgets.QCheckBox("Rollout")
        self.rollout.setToolTip("Show attention rollout up to this layer (Abnar & Zuidema 2020): how much of "
                                "each token after this layer comes from each input token")
        self.heads_on = QtWidgets.QPushButton("All heads on")
        self.heads_on.setToolTip("Switch every head back on (right-click a cell of the model view to switch "
                                 "one off)")
        self.ablate = QtWidgets.QCheckBox("Shown head off")
        self.ablate.setToolTip("Switch the shown head of the shown layer off: its output becomes zero and "
                               "the later layers change")
        self._rollout_tip = self.rollout.toolTip()  # back when another attention or model is shown
        self.part = QtWidgets.QComboBox()
        self.part.setObjectName("attentionPart")
        self.part.setToolTip(PART_TIP)
        for key, title in PARTS:
            self.part.addItem(title, key)
        self.part.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.part_caption = QtWidgets.QLabel("Attention")
        self.part_caption.setBuddy(self.part)
        self.note = ElidedLabel()  # one line, whatever the reading: the bar never changes its height
        self.note.setObjectName("readingNote")

        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        caption = QtWidgets.QLabel("Layer")
        caption.setBuddy(self.layer)
        for widget in (self.part_caption, self.part, caption, self.layer, self.merge, self.hide_specials,
                       self.hide_first, self.rollout, self.ablate, self.heads_on):
            layout.addWidget(widget)
        layout.addWidget(LayoutSeal(self.note), 1)

        self.layer.activated.connect(controller.set_layer)
        self.part.activated.connect(lambda index: controller.set_part(self.part.itemData(index)))
        self.merge.toggled.connect(lambda on: controller.update_real_view(merge_words=on))
        self.hide_specials.toggled.connect(lambda on: controller.update_real_view(hide_specials=on))
        self.hide_first.toggled.connect(lambda on: controller.update_real_view(hide_first=on))
        self.rollout.toggled.connect(lambda on: controller.update_real_view(rollout=on))
        self.ablate.toggled.connect(lambda _on: controller.toggle_ablated(controller.layer, controller.head))
        self.heads_on.clicked.connect(lambda: controller.set_ablated(()))
        for signal in (controller.real_model_changed, controller.layer_changed, controller.head_changed,
                       controller.ablation_changed, controller.real_view_changed, controller.trace_changed,
                       controller.part_changed):
            signal.connect(self._sync)
        self._sync()

    def _sync(self, *_):
        c = self.controller
        widgets = (self.part, self.layer, self.merge, self.hide_specials, self.hide_first, self.rollout, self.ablate)
        blockers = [QtCore.QSignalBlocker(w) for w in widgets]
        model = c.real_model
        layers = model.n_layers if model is not None else 0
        if self.layer.count() != layers:
            self.layer.clear()
            self.layer.addItems([f"{i + 1} of {layers}" for i in range(layers)])
        self.layer.setCurrentIndex(c.layer)
        view = c.real_view
        self.merge.setChecked(view.merge_words)
        self.hide_specials.setChecked(view.hide_specials)
        self.hide_first.setChecked(view.hide_first)
        self.rollout.setChecked(view.rollout)
        self.ablate.setChecked((c.layer, c.head) in c.ablated)
        self.heads_on.setEnabled(bool(c.ablated))
        self.note.set_full_text(c.display_note)
        self._sync_encoder_decoder()
        del blockers

    def _sync_encoder_decoder(self) -> None:
        """The part shown; Rollout is off for cross-attention (its box keeps the choice for the other parts)."""
        c = self.controller
        pair = c.is_encoder_decoder
        self.part.setVisible(pair)
        self.part_caption.setVisible(pair)
        self.part.setCurrentIndex(max(0, self.part.findData(c.part)))
        cross = pair and c.part == "cross"
        self.rollout.setEnabled(not cross)
        self.rollout.setToolTip(NO_CROSS_ROLLOUT if cross else self._rollout_tip)

