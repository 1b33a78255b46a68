"""Model selector and the switches of the computation: scaling, mask, positions, heads, what to show.

The colour map is chosen beside the heatmap (and in the View menu): this bar must fit a 1280-pixel
wide window together with Export and Copy image."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from .. import engine
from ..controller import Controller
from ..engine import SQUARE_MATRICES
from ..engine.pretrained import KNOWN_MODELS, installed_models
from ..engine.trace import NORM_UNAVAILABLE
from .get_models_dialog import not_found_tip

REAL_MODEL_TIP = "A real model's scaling, mask, positions and heads are its own: open a toy model to change them"
MATRIX_NAMES = {"weights": "weights (softmax)", "scores": "scores QKᵀ", "scaled": "scaled ÷√d_k",
                "masked": "masked scores", "norm": "weight × moved norm"}
NORM_TIP = ("Norm-based attention (Kobayashi et al. 2020): each weight times the length of the vector the head "
            "moves, ‖α_ij · f(x_j)‖ with f(x) = (x·W_V + b_V)·W_O — a token with a large weight and a tiny vector "
            "moves little")


OPENED_NAME_PX = 260  # an opened model's name longer than this is cut in the middle (its path in the tooltip)
SEPARATOR = None  # in a box's list of items: a separator line

# A box's item: (text, data, tooltip or None)
Item = tuple[str, object, str | None]


def fill_box(box: QtWidgets.QComboBox, items: list[Item | None], held: dict) -> None:
    """Give `box` these items (SEPARATOR: a line), unless `held[box]` says it holds them already.
    Cleared and filled again, a box sized to its contents asks the bar and then the window to lay out
    again: a head changed took five event-loop passes to settle, for boxes holding what they held."""
    if held.get(box) == items:
        return
    held[box] = items
    box.clear()
    for item in items:
        if item is SEPARATOR:
            box.insertSeparator(box.count())
            continue
        text, data, tip = item
        box.addItem(text, data)
        if tip is not None:
            box.setItemData(box.count() - 1, tip, QtCore.Qt.ItemDataRole.ToolTipRole)


def hold_chosen_text(box: QtWidgets.QComboBox) -> None:
    """Make `box` at least as wide as its chosen item's text: a box whose least width is a few letters
    (setMinimumContentsLength, so that a long item it is not showing does not widen the window) is
    squeezed to that width in a window narrower than its toolbar, and cut the model it shows. A box that
    follows its contents is squeezed to the least width Qt cached for its first items, which new, longer
    ones do not renew: it cut a real model's "12 (d_k = 32)" after a toy's "1 (d_k = 8)"."""
    option = QtWidgets.QStyleOptionComboBox()
    box.initStyleOption(option)
    metrics = box.fontMetrics()
    text = QtCore.QSize(metrics.horizontalAdvance(box.currentText()), metrics.height())
    box.setMinimumWidth(box.style().sizeFromContents(QtWidgets.QStyle.ContentsType.CT_ComboBox, option, text,
                                                     box).width())


class QtOptionsBar(QtWidgets.QWidget):
    """Every control writes through a controller setter; controller signals update the controls
    with their signals blocked, so nothing loops.

    The model box is the exception: replacing the model may lose unsaved edits, so picking one only
    emits `model_requested` and the window decides (it asks first); the box then shows what happened.
    """

    model_requested = QtCore.Signal(str)  # a built-in model's name or a model file's path

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.model_box = QtWidgets.QComboBox()
        self.model_box.setToolTip("The model: a toy one (its words, features and weights) or a real one")
        self._installed = installed_models()  # looked up again only when asked: refresh_real_models
        self.model_box.setMinimumContentsLength(14)
        self.scale = QtWidgets.QCheckBox("Scale ÷√d_k")
        self.scale.setToolTip("Divide the scores by √d_k before softmax, as the paper does")
        self.causal = QtWidgets.QCheckBox("Causal mask")
        self.causal.setToolTip("Forbid each word to look at later words (a decoder's mask)")
        self.positional = QtWidgets.QCheckBox("Positions")
        self.positional.setToolTip("Add the sinusoidal positional encoding to the embeddings")
        self.heads = QtWidgets.QComboBox()
        self.heads.setToolTip("How many heads split the projections")
        self.head = QtWidgets.QComboBox()
        self.head.setToolTip("Which head the heatmap shows")
        self.matrix = QtWidgets.QComboBox()
        for name in SQUARE_MATRICES:
            self.matrix.addItem(MATRIX_NAMES[name], name)
        self.matrix.setToolTip("Which matrix the heatmap shows")
        # a real model's "12 (d_k = 32)" outgrows a toy's width, an opened file's name the built-in names'
        for box in (self.model_box, self.heads, self.head):
            box.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        # its texts never change, only whether norm-based attention can be chosen: sized to them once,
        # so that change does not lay out the toolbar and the window again
        self.matrix.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContentsOnFirstShow)

        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("Model", self.model_box), (None, self.scale), (None, self.causal),
                              (None, self.positional), ("Heads", self.heads), ("Show head", self.head),
                              ("Matrix", self.matrix)):
            if label:
                caption = QtWidgets.QLabel(label)
                caption.setBuddy(widget)
                layout.addWidget(caption)
            layout.addWidget(widget)
        layout.addStretch(1)

        self.model_box.activated.connect(self._on_model_chosen)
        self.scale.toggled.connect(lambda on: controller.update_options(scale=on))
        self.causal.toggled.connect(lambda on: controller.update_options(causal=on))
        self.positional.toggled.connect(lambda on: controller.update_options(positional=on))
        self.heads.activated.connect(lambda i: controller.update_options(heads=self.heads.itemData(i)))
        self.head.activated.connect(controller.set_head)
        self.matrix.activated.connect(lambda i: controller.set_matrix(self.matrix.itemData(i)))

        controller.model_changed.connect(self._sync)
        controller.model_source_changed.connect(self._sync)
        controller.options_changed.connect(self._sync)
        controller.head_changed.connect(self._sync)
        controller.matrix_changed.connect(self._sync)
        controller.real_model_changed.connect(self._sync)
        controller.real_view_changed.connect(self._sync)  # words or rollout take the norms away
        self._toy_tips = {w: w.toolTip() for w in (self.scale, self.causal, self.positional, self.heads)}
        self._held: dict[QtWidgets.QComboBox, list] = {}  # the items each box was last given (fill_box)
        self._sync()

    def refresh_real_models(self) -> None:
        """Look for the real models' files again: the user may have put them in the models folder."""
        self._installed = installed_models()
        self._sync()

    def _on_model_chosen(self, index: int) -> None:
        source = self.model_box.itemData(index)
        if source != self.controller.model_source or self.controller.loading:  # the model shown, chosen back
            self.model_requested.emit(source)
            self._sync()  # declined or failed: show the model that is still there

    def _sync(self, *_):
        c = self.controller
        widgets = (self.model_box, self.scale, self.causal, self.positional, self.heads, self.head, self.matrix)
        blockers = [QtCore.QSignalBlocker(w) for w in widgets]
        models: list[Item | None] = [(name, name, None) for name in engine.builtin_model_names()]
        models.append(SEPARATOR)
        for known in KNOWN_MODELS:
            installed = known.name in self._installed
            models.append((known.name if installed else f"{known.name} — not installed", known.name,
                           "A real pretrained model" if installed else not_found_tip(known)))
        # an opened file or folder: its name, the path on hover
        if all(item is SEPARATOR or item[1] != c.model_source for item in models):
            name, file = c.real_model.name if c.is_real else c.model.name, Path(c.model_source).name
            text = name if name == file else f"{name} ({file})"
            models.append((self.model_box.fontMetrics().elidedText(text, QtCore.Qt.TextElideMode.ElideMiddle,
                                                                   OPENED_NAME_PX), c.model_source, c.model_source))
        fill_box(self.model_box, models, self._held)
        self.model_box.setCurrentIndex(self.model_box.findData(c.model_source))
        hold_chosen_text(self.model_box)
        self.scale.setChecked(c.options.scale)
        self.causal.setChecked(c.options.causal)
        self.positional.setChecked(c.options.positional)
        if c.is_real:  # the model's own heads, shown but not changeable
            d_k = c.trace.heads[0].d_k if c.trace else c.real_model.d_model // c.options.heads
            heads = [(f"{c.options.heads} (d_k = {d_k})", c.options.heads, None)]
        else:
            heads = [(f"{h} (d_k = {c.model.d_proj // h})", h, None) for h in c.model.allowed_heads()]
        fill_box(self.heads, heads, self._held)
        self.heads.setCurrentIndex(self.heads.findData(c.options.heads))
        fill_box(self.head, [(f"head {i + 1}", None, None) for i in range(c.options.heads)], self._held)
        self.head.setCurrentIndex(c.head)
        for box in (self.heads, self.head):
            hold_chosen_text(box)
        self.head.setEnabled(c.options.heads > 1)
        for toy_only in (self.scale, self.causal, self.positional, self.heads):
            toy_only.setEnabled(not c.is_real)
            toy_only.setToolTip(REAL_MODEL_TIP if c.is_real else self._toy_tips[toy_only])
        norm_item = self.matrix.model().item(self.matrix.findData("norm"))
        norm_item.setEnabled(c.matrix_available("norm"))
        norm_item.setToolTip(NORM_TIP if norm_item.isEnabled() else f"{NORM_TIP}. {NORM_UNAVAILABLE[0].upper()}"
                             f"{NORM_UNAVAILABLE[1:]}.")
        self.matrix.setCurrentIndex(self.matrix.findData(c.matrix))
        del blockers
