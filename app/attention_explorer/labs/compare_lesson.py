"""Lesson: compare two attention results cell by cell — two sentences, two heads, or two option sets.

The engine's compare_sentences / compare_heads / compare_options give B's weights minus A's; the
panel shows A, B and the difference on a diverging colour map centred on zero, and says plainly
when two results cannot be compared (different numbers of words, a head that does not exist).
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from .. import engine
from ..controller import Controller
from ..engine import ComparisonError, Options, WeightsDifference
from ..views.matrix_plot import MatrixPlot, symmetric_levels
from .lesson_panel import LessonPanel

DIFFERENCE_COLORMAP = "CET-D1"  # blue (B looks less) – white (no change) – red (B looks more)
MODES = {"sentences": "two sentences", "heads": "two heads", "options": "two option sets"}
SWITCHES = {"scale": "scale ÷√d_k", "causal": "causal mask", "positional": "positions"}


class QtCompareLesson(LessonPanel):
    explanation = (
        "Two heatmaps side by side hide small changes; their difference shows them. Pick what to compare: the "
        "main sentence against a second one with the same number of words, two heads of the main sentence, or "
        "the main sentence under two sets of switches. Red cells are where B looks more than A, blue where it "
        "looks less, white where nothing changed.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.difference: WeightsDifference | None = None
        self.mode_box = QtWidgets.QComboBox()
        for key, text in MODES.items():
            self.mode_box.addItem(text, key)
        self.mode_box.setCurrentIndex(list(MODES).index("sentences"))  # B starts one word apart: see below
        self.sentence_b = QtWidgets.QLineEdit()
        self.sentence_b.setPlaceholderText("sentence B, with as many words as the main sentence")
        self.head_a, self.head_b = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        self.switches_b = {name: QtWidgets.QCheckBox(text) for name, text in SWITCHES.items()}
        self.stack = QtWidgets.QStackedWidget()
        self.stack.addWidget(self._row(QtWidgets.QLabel("B:"), self.sentence_b))
        self.stack.addWidget(self._row(QtWidgets.QLabel("A: head"), self.head_a, QtWidgets.QLabel("B: head"),
                                       self.head_b, stretch=True))
        self.stack.addWidget(self._row(QtWidgets.QLabel("A: the main window's switches. B:"),
                                       *self.switches_b.values(), stretch=True))
        self.stack.setCurrentIndex(self.mode_box.currentIndex())
        self.stack.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Maximum)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Compare"))
        top.addWidget(self.mode_box)
        top.addWidget(self.stack, 1)
        self.body.addLayout(top)

        maps = QtWidgets.QHBoxLayout()
        self.map_a, self.map_b, self.map_difference = MatrixPlot(), MatrixPlot(), MatrixPlot()
        for heatmap in (self.map_a, self.map_b, self.map_difference):
            maps.addWidget(heatmap)
        self.body.addLayout(maps, 1)
        self.summary = self.finding()
        self.body.addWidget(self.summary)

        self.mode_box.currentIndexChanged.connect(self._on_mode_changed)
        self.sentence_b.textChanged.connect(self.request_refresh)
        self.head_a.activated.connect(self.request_refresh)
        self.head_b.activated.connect(self.request_refresh)
        for box in self.switches_b.values():
            box.toggled.connect(self.request_refresh)
        controller.model_changed.connect(self._on_model_changed)
        self._on_model_changed()

    @staticmethod
    def _row(*widgets: QtWidgets.QWidget, stretch: bool = False) -> QtWidgets.QWidget:
        row = QtWidgets.QWidget()
        layout = QtWidgets.QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            layout.addWidget(widget)
        if stretch:
            layout.addStretch(1)
        return row

    # --- controls -------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.mode_box.currentData()

    def set_mode(self, mode: str) -> None:
        self.mode_box.setCurrentIndex(list(MODES).index(mode))

    def _on_mode_changed(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        self.request_refresh()

    def _on_model_changed(self, *_) -> None:
        """Start B where it shows something: the main sentence with two words swapped, and the
        opposite scaling."""
        c = self.controller
        with QtCore.QSignalBlocker(self.sentence_b):
            self.sentence_b.setText(two_words_swapped(c))
        b_options = c.options.with_changes(scale=not c.options.scale)
        for name, box in self.switches_b.items():
            with QtCore.QSignalBlocker(box):
                box.setChecked(getattr(b_options, name))

    def options_b(self) -> Options:
        return self.controller.options.with_changes(**{n: box.isChecked() for n, box in self.switches_b.items()})

    def _sync_head_boxes(self) -> None:
        heads = self.controller.options.heads
        for box, default in ((self.head_a, 0), (self.head_b, min(1, heads - 1))):
            chosen = box.currentIndex() if 0 <= box.currentIndex() < heads else default
            with QtCore.QSignalBlocker(box):
                box.clear()
                box.addItems([f"head {i + 1}" for i in range(heads)])
                box.setCurrentIndex(chosen)

    # --- drawing --------------------------------------------------------------------------------
    def refresh(self) -> None:
        c = self.controller
        trace = self.current_trace()
        self._sync_head_boxes()
        h = self.current_head()
        options_a = options_b = c.options
        names = ("A: main sentence", "B: second sentence")
        try:
            if self.mode == "sentences":
                result = engine.compare_sentences(c.model, c.sentence, self.sentence_b.text(), c.options, head=h)
            elif self.mode == "heads":
                head_a, head_b = self.head_a.currentIndex(), self.head_b.currentIndex()
                if trace.options.heads < 2:
                    raise ComparisonError("the main window computes a single head: choose 2 heads or more there "
                                          "(or in the Multi-head lesson) to compare two heads")
                result = engine.compare_heads(trace, head_a, head_b)
                names = (f"A: head {head_a + 1}", f"B: head {head_b + 1}")
            else:
                options_b = self.options_b()
                result = engine.compare_options(c.model, c.sentence, options_a, options_b, head=h)
                names = (f"A: {_describe(options_a)}", f"B: {_describe(options_b)}")
        except ComparisonError:
            self.difference = None
            for heatmap in (self.map_a, self.map_b, self.map_difference):
                heatmap.show_message("Nothing to compare: see the message above.")
            self.summary.setText("")
            raise
        self.difference = result
        n = len(result.labels_a)
        self.map_a.show_matrix(result.weights_a, result.labels_a, result.labels_a, levels=(0, 1),
                               mask=_mask(options_a, n), masked_text="0", colormap=c.colormap, title=names[0])
        self.map_b.show_matrix(result.weights_b, result.labels_b, result.labels_b, levels=(0, 1),
                               mask=_mask(options_b, n), masked_text="0", colormap=c.colormap, title=names[1])
        rows = result.labels_a if result.labels_a == result.labels_b else \
            [f"{a}/{b}" if a != b else a for a, b in zip(result.labels_a, result.labels_b, strict=True)]
        self.map_difference.show_matrix(result.difference, rows, rows, levels=symmetric_levels(result.difference),
                                        colormap=DIFFERENCE_COLORMAP, value_format="{:+.2f}",
                                        title="difference B − A (red: B looks more)")
        self.summary.setText(self._summary(result, rows))

    @staticmethod
    def _summary(result: WeightsDifference, labels: list[str]) -> str:
        if result.max_abs == 0:
            return ("The two weight matrices are identical, cell for cell: nothing that matters to this model "
                    "changed. Try another word in B, other heads or other switches.")
        i, j = result.largest_change
        change = result.difference[i, j]
        return (f"Largest change: “{labels[i]}” → “{labels[j]}”, from {result.weights_a[i, j]:.0%} in A to "
                f"{result.weights_b[i, j]:.0%} in B ({change:+.1%} of the row's attention).")


def _describe(options: Options) -> str:
    return ", ".join(text if getattr(options, name) else f"no {text.split(' ')[0]}" for name, text in SWITCHES.items())


def _mask(options: Options, n: int):
    return engine.causal_mask(n) if options.causal else None


def two_words_swapped(controller: Controller) -> str:
    """The main sentence with two alike words swapped ("the mat sat on the cat", "mice chase cats"):
    still a sentence, and the difference shows how attention follows the words. Alike: their
    features point most nearly the same way without being the same (cosine below 1), the pair
    farthest apart winning a tie. The main sentence when no two words are alike."""
    vocabulary, sentence = controller.model.vocabulary, controller.sentence
    known = [w for w in controller.words if w.known]
    vectors = [np.asarray(vocabulary[w.text], dtype=float) for w in known]
    norms = [float(np.linalg.norm(v)) for v in vectors]
    pairs = []
    for i in range(len(known)):
        for j in range(i + 1, len(known)):
            if known[i].text == known[j].text or not norms[i] or not norms[j]:
                continue
            cosine = float(vectors[i] @ vectors[j]) / (norms[i] * norms[j])
            if 0 < cosine < 0.999:
                pairs.append((round(cosine, 6), j - i, i, j))
    if not pairs:
        return sentence
    *_, i, j = max(pairs)
    first, second = known[i], known[j]
    return (sentence[:first.start] + second.text + sentence[first.end:second.start] + first.text
            + sentence[second.end:])
