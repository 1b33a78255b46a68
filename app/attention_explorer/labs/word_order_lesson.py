"""Lesson: attention alone does not see word order; the positional encoding makes it see it.

Sentence A is the main window's sentence; sentence B is the same words in another order (shuffled,
typed, or the model's own example pair). engine.compare_same_words lines the two up word by word
and measures how much each word's output changed; the panel shows that difference per word.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from .. import engine
from ..controller import Controller
from ..engine import WordOrderComparison
from ..views.matrix_plot import MatrixPlot
from .lesson_panel import LessonPanel
from .number_table import QtNumberTable

EXACT = 1e-12  # "the same output": equal up to float64 rounding
TABLE_HEADERS = ("word", "place in A", "place in B", "largest change in its output")


class QtWordOrderLesson(LessonPanel):
    explanation = (
        "Self-attention compares every word with every other word, but nothing in softmax(QKᵀ/√d_k)·V says "
        "where a word stands: shuffle the sentence and each word gets exactly the same output as before, only "
        "in its new place. The Transformer fixes this by adding a positional encoding, a pattern of sines and "
        "cosines that differs for every place, to each word's embedding. Then the same word in another place "
        "has another input, and usually another output.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.comparison: WordOrderComparison | None = None
        self._seed = 0
        self._tokens_a: list[str] = []

        self.sentence_a = QtWidgets.QLabel()
        self.sentence_b = QtWidgets.QLineEdit()
        self.sentence_b.setPlaceholderText("the same words in another order")
        self.sentence_b.setToolTip("Type the words of sentence A in another order, or press Shuffle")
        self.shuffle_button = QtWidgets.QPushButton("Shuffle")
        self.shuffle_button.setToolTip("Put the words of sentence A in a new random order")
        self.example_button = QtWidgets.QPushButton()
        self.example_button.setToolTip("Load this model's own example pair into A and B")
        self.positional = QtWidgets.QCheckBox("Add positional encoding")
        self.positional.setToolTip("Add the sinusoidal encoding of each place to the embeddings (this lesson only)")

        form = QtWidgets.QGridLayout()
        form.addWidget(QtWidgets.QLabel("A (main window):"), 0, 0)
        form.addWidget(self.sentence_a, 0, 1, 1, 3)
        form.addWidget(QtWidgets.QLabel("B (same words):"), 1, 0)
        form.addWidget(self.sentence_b, 1, 1)
        form.addWidget(self.shuffle_button, 1, 2)
        form.addWidget(self.positional, 1, 3)
        form.addWidget(self.example_button, 2, 1, QtCore.Qt.AlignmentFlag.AlignLeft)
        form.setColumnStretch(1, 1)
        self.body.addLayout(form)

        maps = QtWidgets.QHBoxLayout()
        self.weights_a, self.weights_b = MatrixPlot(), MatrixPlot()
        self.encoding_map = MatrixPlot()
        for heatmap in (self.weights_a, self.weights_b, self.encoding_map):
            maps.addWidget(heatmap)
        self.body.addLayout(maps, 1)

        bottom = QtWidgets.QHBoxLayout()
        self.table = QtNumberTable(TABLE_HEADERS)
        self.summary = self.finding()
        bottom.addWidget(self.table)
        text = QtWidgets.QVBoxLayout()
        text.addWidget(self.summary)
        text.addWidget(self.note("The causal mask is left off in this lesson, whatever the main window says: it "
                                 "lets word i see only the words before it, so it depends on places as well and "
                                 "would change the outputs on its own."))
        text.addStretch(1)
        bottom.addLayout(text, 1)
        self.body.addLayout(bottom)

        self.shuffle_button.clicked.connect(self.shuffle)
        self.example_button.clicked.connect(self._on_example_clicked)
        self.sentence_b.textChanged.connect(self.request_refresh)
        self.positional.toggled.connect(self.request_refresh)
        controller.model_changed.connect(self._on_model_changed)
        self._on_model_changed()

    # --- controls -------------------------------------------------------------------------------
    def example_pair(self) -> list[str] | None:
        pair = self.controller.model.extra.get("examples", {}).get("word_order")
        return pair if isinstance(pair, list) and len(pair) == 2 else None

    def _on_model_changed(self, *_) -> None:
        pair = self.example_pair()
        self.example_button.setVisible(pair is not None)
        if pair is not None:
            self.example_button.setText(f"Example: “{pair[0]}” / “{pair[1]}”")

    def _on_example_clicked(self) -> None:
        a, b = self.example_pair()
        self.sentence_b.setText(b)
        self.controller.set_sentence(a)

    def shuffle(self) -> None:
        """Fill B with a new random order of A's words (a new seed each press)."""
        if not self._tokens_a:
            return
        self._seed += 1
        self.sentence_b.setText(engine.shuffle_words(self._tokens_a, seed=self._seed).sentence)

    # --- drawing --------------------------------------------------------------------------------
    def refresh(self) -> None:
        c = self.controller
        trace = self.current_trace()
        self.sentence_a.setText(" ".join(trace.tokens))
        if trace.tokens != self._tokens_a:
            self._tokens_a = list(trace.tokens)
            tokens_b = engine.tokenize(self.sentence_b.text(), c.model.vocabulary).tokens
            if sorted(tokens_b) != sorted(self._tokens_a):
                self.shuffle()  # A has new words: B follows with a fresh order (its textChanged refreshes)
                return
        # The causal mask depends on places too (word i sees words 0..i), so it would break the symmetry on
        # its own and hide the lesson: it stays off here, as in an encoder.
        options = c.options.with_changes(positional=self.positional.isChecked(), causal=False)
        self.comparison = result = engine.compare_same_words(c.model, c.sentence, self.sentence_b.text(), options)
        h = self.current_head()
        colormap = c.colormap
        a, b = result.original, result.reordered
        self.weights_a.show_matrix(a.heads[h].weights, a.labels, a.labels, mask=a.mask, levels=(0, 1),
                                   colormap=colormap, title="A: weights")
        self.weights_b.show_matrix(b.heads[h].weights, b.labels, b.labels, mask=b.mask, levels=(0, 1),
                                   colormap=colormap, title="B: weights, same words moved")
        where = {int(old): new for new, old in enumerate(result.order)}
        self.table.set_rows([[label, str(i + 1), str(where[i] + 1), _difference_text(d)]
                             for i, (label, d) in enumerate(zip(result.labels, result.difference, strict=True))])
        self.summary.setText(self._summary(result))
        self._show_encoding(a)

    def _show_encoding(self, trace) -> None:
        encoding = trace.positional if trace.positional is not None else \
            engine.sinusoidal_encoding(trace.n, len(trace.features))
        dims = [f"{'sin' if j % 2 == 0 else 'cos'}{j // 2}" for j in range(encoding.shape[1])]
        rows = [f"{pos} {label}" for pos, label in enumerate(trace.labels)]
        state = "added to the embeddings" if trace.positional is not None else "not added (switch it on)"
        self.encoding_map.show_matrix(encoding, rows, dims, levels=(-1, 1), colormap=self.controller.colormap,
                                      title=f"positional encoding (places × dimensions),<br>{state}")

    @staticmethod
    def _summary(result: WordOrderComparison) -> str:
        largest = result.max_difference
        if result.original.positional is None:
            verdict = ("every word's output is the same in both orders, only moved: attention did not notice "
                       "the new order." if largest <= EXACT else
                       "larger than rounding: the two outputs differ.")
        else:
            verdict = ("with positions added, the same word in a new place gets a different output."
                       if largest > EXACT else "the outputs happen to be the same: try another order.")
        return f"Largest change over all words: <b>{_difference_text(largest)}</b> — {verdict}"


def _difference_text(d: float) -> str:
    if d == 0:
        return "0 (exactly)"
    if d <= EXACT:
        return f"{d:.1e} (rounding)"
    return f"{d:.3g}"
