"""Lesson: the causal mask. The same sentence through an encoder (no mask) and a decoder (causal mask).

The engine runs the sentence twice, once with each setting of the mask; the panel shows the scores
just before softmax (−∞ above the diagonal in the decoder) and the weights after it (exact zeros
there), and reads off the facts the learner should check.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtWidgets

from .. import engine
from ..controller import Controller
from ..views.matrix_plot import MatrixPlot, shared_levels
from .lesson_panel import LessonPanel

AXIS_TITLES = ("word looking", "word looked at")


class QtMaskingLesson(LessonPanel):
    explanation = (
        "An encoder reads the whole sentence at once, so every word may look at every other word. A decoder "
        "writes one word at a time and must not peek at words it has not written yet: before softmax, the "
        "scores of later words are set to −∞, and e to the power −∞ is exactly 0. So each row of weights "
        "still adds up to 1, shared only among the word itself and the words before it.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.encoder_scores, self.decoder_scores = MatrixPlot(), MatrixPlot()
        self.encoder_weights, self.decoder_weights = MatrixPlot(), MatrixPlot()
        grid = QtWidgets.QGridLayout()
        grid.addWidget(self._heading("Encoder: no mask"), 0, 0)
        grid.addWidget(self._heading("Decoder: causal mask"), 0, 1)
        grid.addWidget(self.encoder_scores, 1, 0)
        grid.addWidget(self.decoder_scores, 1, 1)
        grid.addWidget(self.encoder_weights, 2, 0)
        grid.addWidget(self.decoder_weights, 2, 1)
        self.body.addLayout(grid, 1)
        self.first_word_line = self.finding()
        self.zeros_line = self.finding()
        self.body.addWidget(self.first_word_line)
        self.body.addWidget(self.zeros_line)

    @staticmethod
    def _heading(text: str) -> QtWidgets.QLabel:
        label = QtWidgets.QLabel(f"<b>{text}</b>")
        label.setContentsMargins(4, 6, 0, 0)
        return label

    def refresh(self) -> None:
        c = self.controller
        self.current_trace()  # nothing to show while the main sentence itself has an error
        encoder = engine.run(c.model, c.sentence, c.options.with_changes(causal=False))
        decoder = engine.run(c.model, c.sentence, c.options.with_changes(causal=True))
        h = self.current_head()
        enc, dec = encoder.heads[h], decoder.heads[h]
        labels = decoder.labels
        divided = f"÷√{dec.d_k}" if c.options.scale else "not divided"
        head = f" (head {h + 1} of {c.options.heads})" if c.options.heads > 1 else ""
        levels = shared_levels(enc.masked, dec.masked)
        colormap = c.colormap
        self.encoder_scores.show_matrix(enc.masked, labels, labels, title=f"scores {divided}{head}", levels=levels,
                                        colormap=colormap, axis_titles=AXIS_TITLES)
        self.decoder_scores.show_matrix(dec.masked, labels, labels, title=f"scores {divided}, later words set to −∞",
                                        levels=levels, colormap=colormap, masked_text="−∞", axis_titles=AXIS_TITLES)
        self.encoder_weights.show_matrix(enc.weights, labels, labels, title="weights after softmax", levels=(0, 1),
                                         colormap=colormap, axis_titles=AXIS_TITLES)
        self.decoder_weights.show_matrix(dec.weights, labels, labels, title="weights after softmax: masked = exactly 0",
                                         mask=decoder.mask, levels=(0, 1), colormap=colormap, masked_text="0",
                                         axis_titles=AXIS_TITLES)
        self.first_word_line.setText(self._first_word_text(labels, dec.weights))
        self.zeros_line.setText(self._zeros_text(decoder.mask, dec.weights))

    @staticmethod
    def _first_word_text(labels: list[str], weights: np.ndarray) -> str:
        first = labels[0]
        text = (f"The first word, “{first}”, has no earlier word: in the decoder it can only look at itself, "
                f"with weight {weights[0, 0]:.0%}.")
        if len(labels) > 1:
            text += (f" The last word, “{labels[-1]}”, sees all {len(labels)} words, as every word does in the "
                     "encoder.")
        return text

    @staticmethod
    def _zeros_text(mask: np.ndarray, weights: np.ndarray) -> str:
        if not mask.any():
            return "With a single word there is nothing above the diagonal to mask."
        largest = float(weights[mask].max())
        held = ("every one of them is held as 0.0, not a tiny number shown rounded" if largest == 0.0
                else f"the largest of them is held as {largest!r}")
        return (f"Above the diagonal the decoder's {int(mask.sum())} weights are exactly zero, because e to the "
                f"power −∞ is 0: {held}. Each row's remaining weights still add up to 1.")
