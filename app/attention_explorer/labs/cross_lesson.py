"""Lesson: cross-attention. The main sentence's words look at the words of a second sentence.

engine.cross_attention takes the queries from the target (the main window's sentence) and the keys
and values from the source typed here, with the same weights and options; the weights are then a
rectangle, one row per target word and one column per source word.
"""

from __future__ import annotations

from PySide6 import QtWidgets

from .. import engine
from ..controller import Controller
from ..engine import CrossTrace
from ..views.matrix_plot import MatrixPlot
from .lesson_panel import LessonPanel

AXIS_TITLES = ("target word (query)", "source word (key, value)")


class QtCrossLesson(LessonPanel):
    explanation = (
        "In a translation model the decoder's words look at the encoder's words: the queries come from the "
        "sentence being written (the target), the keys and values from the sentence being read (the source). "
        "The arithmetic is the same as self-attention, only the two sides are different sentences, so the "
        "weights form an n_target × n_source rectangle instead of a square.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.cross: CrossTrace | None = None
        self.target_line = QtWidgets.QLabel()
        self.source_box = QtWidgets.QLineEdit()
        self.source_box.setPlaceholderText("a second sentence, in this model's words")
        form = QtWidgets.QFormLayout()
        form.addRow("Target (main window):", self.target_line)
        form.addRow("Source:", self.source_box)
        self.body.addLayout(form)
        maps = QtWidgets.QHBoxLayout()
        self.weights_map, self.scores_map = MatrixPlot(), MatrixPlot()
        maps.addWidget(self.weights_map)
        maps.addWidget(self.scores_map)
        self.body.addLayout(maps, 1)
        self.shape_line = self.finding()
        self.body.addWidget(self.shape_line)
        self.body.addWidget(self.note(
            "No causal mask here: the mask stops a word from seeing later words of its own sentence, and the "
            "source is another sentence, read in full. With positional encoding on, each sentence counts its "
            "places from 0."))
        self.source_box.textChanged.connect(self.request_refresh)
        controller.model_changed.connect(self._on_model_changed)
        self._on_model_changed()

    def _on_model_changed(self, *_) -> None:
        """A new vocabulary: start from a sentence this model knows, other than the main one if it can."""
        model = self.controller.model
        examples = model.extra.get("examples", {}).get("sentences", [])
        others = [s for s in examples if isinstance(s, str) and s != self.controller.sentence]
        self.source_box.setText(others[0] if others else model.default_sentence)

    def refresh(self) -> None:
        c = self.controller
        self.current_trace()
        self.cross = cross = engine.cross_attention(c.model, c.sentence, self.source_box.text(), c.options)
        h = self.current_head()
        head = cross.heads[h]
        self.target_line.setText(" ".join(cross.target_tokens))
        self.source_box.setToolTip("Words this model knows: " + ", ".join(sorted(c.model.vocabulary)))
        rows, cols = cross.target_labels, cross.source_labels
        which = f", head {h + 1} of {len(cross.heads)}" if len(cross.heads) > 1 else ""
        self.weights_map.show_matrix(head.weights, rows, cols, levels=(0, 1), colormap=c.colormap,
                                     axis_titles=AXIS_TITLES, title=f"weights, target × source{which}")
        divided = f" ÷ √{head.d_k}" if cross.options.scale else ""
        self.scores_map.show_matrix(head.scaled, rows, cols, colormap=c.colormap, axis_titles=AXIS_TITLES,
                                    title=f"scores q_target · k_source{divided}")
        n_a, n_b = cross.shape
        text = (f"The weights are {n_a} × {n_b}: each of the {n_a} target words shares out its attention over "
                f"the {n_b} source words (every row adds up to 1).")
        if cross.source_unknown:
            text += f" Left out of the source (unknown here): {', '.join(cross.source_unknown)}."
        self.shape_line.setText(text)
