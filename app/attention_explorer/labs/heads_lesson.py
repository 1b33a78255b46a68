"""Lesson: multi-head attention. Every head of the current trace side by side, how the projection
columns are split among them, and how their outputs are concatenated and mixed by W_O.

All matrices are the trace's own (the controller computed them); choosing another number of heads
goes through the controller, so the main window follows.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..controller import Controller
from ..engine import OptionsError, Trace
from ..views import theme
from ..views.matrix_plot import MatrixPlot
from .lesson_panel import LessonPanel

HEADS_PER_ROW = 4
PAPER_NOTE = ("In the paper: h = 8 heads, d_model = 512, d_k = d_v = 512 / 8 = 64. Each head works in a space "
              "8 times narrower, so all 8 heads together cost about as much as one head of full width.")


class QtHeadsLesson(LessonPanel):
    explanation = (
        "One head can only ask one question per word, such as “which word is my subject?”. Multi-head attention "
        "cuts the columns of Q, K and V into h slices and runs attention on each slice separately, so each head "
        "can ask its own question. The heads' outputs are then laid side by side and multiplied by W_O, which "
        "mixes what the heads found into one output per word.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.heads_box = QtWidgets.QComboBox()
        self.heads_box.setToolTip("How many heads split the projection columns (the main window follows)")
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Heads"))
        row.addWidget(self.heads_box)
        row.addStretch(1)
        self.body.addLayout(row)
        self.split_line = self.finding()
        self.split_line.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.body.addWidget(self.split_line)

        self.head_grid = QtWidgets.QGridLayout()
        self.body.addLayout(self.head_grid, 3)
        self.head_maps: list[MatrixPlot] = []
        combine = QtWidgets.QHBoxLayout()
        self.concat_map = MatrixPlot(min_size=(260, 160))
        self.output_map = MatrixPlot(min_size=(260, 160))
        combine.addWidget(self.concat_map)
        combine.addWidget(self.output_map)
        self.body.addLayout(combine, 2)
        self.body.addWidget(self.note(PAPER_NOTE))
        self.heads_box.activated.connect(self._on_heads_chosen)

    def _on_heads_chosen(self, index: int) -> None:
        try:
            self.controller.update_options(heads=self.heads_box.itemData(index))
        except OptionsError as exc:
            self.show_error(str(exc))

    def refresh(self) -> None:
        self._sync_heads_box()
        trace = self.current_trace()
        self._ensure_head_maps(len(trace.heads))
        labels = trace.labels
        for head, heatmap in zip(trace.heads, self.head_maps, strict=True):
            cols = head.columns
            heatmap.show_matrix(head.weights, labels, labels, mask=trace.mask, levels=(0, 1),
                                colormap=self.controller.colormap,
                                title=f"head {head.index + 1}: columns {cols.start + 1}–{cols.stop}, d_k = {head.d_k}")
        concat_labels = [f"h{h.index + 1}.{j + 1}" for h in trace.heads for j in range(h.d_k)]
        self.concat_map.show_matrix(trace.concat, labels, concat_labels, colormap=self.controller.colormap,
                                    title=f"concatenation: n × {trace.concat.shape[1]}")
        if trace.w_o is not None:
            self.output_map.show_matrix(trace.output, labels, trace.output_column_labels(),
                                        colormap=self.controller.colormap,
                                        title=f"output = concatenation · W_O: n × {trace.output.shape[1]}")
        else:
            self.output_map.show_message("This model has no W_O: its output is the concatenation itself.")
        self.split_line.setText(self._split_html(trace))

    def _sync_heads_box(self) -> None:
        model, heads = self.controller.model, self.controller.options.heads
        with QtCore.QSignalBlocker(self.heads_box):
            self.heads_box.clear()
            for h in model.allowed_heads():
                self.heads_box.addItem(f"{h} (d_k = {model.d_proj // h})", h)
            self.heads_box.setCurrentIndex(self.heads_box.findData(heads))

    def _ensure_head_maps(self, count: int) -> None:
        while len(self.head_maps) > count:
            heatmap = self.head_maps.pop()
            self.head_grid.removeWidget(heatmap)
            heatmap.deleteLater()
        while len(self.head_maps) < count:
            i = len(self.head_maps)
            heatmap = MatrixPlot(min_size=(200, 180))
            self.head_grid.addWidget(heatmap, i // HEADS_PER_ROW, i % HEADS_PER_ROW)
            self.head_maps.append(heatmap)

    @staticmethod
    def _split_html(trace: Trace) -> str:
        """The columns of Q, K, V coloured by the head that owns them, then the path to the output."""
        d_model, d_proj, h = len(trace.features), trace.concat.shape[1], len(trace.heads)
        d_k = d_proj // h
        cells = "".join(
            f"<td style='background:{theme.head_color(head.index).name()}; color:white; padding:2px 6px;'>"
            f"{j + 1}</td>" for head in trace.heads for j in range(head.columns.start, head.columns.stop))
        if trace.w_o is not None:
            ending = f"× W_O ({d_proj} × {d_model}) → output n × {d_model}."
        else:
            ending = "no W_O in this model: the concatenation is the output."
        return (f"d_model = {d_model} features → W_Q, W_K, W_V ({d_model} × {d_proj}) → Q, K, V with d_proj = "
                f"{d_proj} columns, split into h = {h} head{'s' if h != 1 else ''} of d_k = {d_proj} / {h} = "
                f"{d_k}:<table cellspacing='2'><tr>{cells}</tr></table>"
                f"each head: softmax(Q<sub>i</sub>K<sub>i</sub>ᵀ/√{d_k})·V<sub>i</sub> → n × {d_k}; "
                f"side by side → concatenation n × {d_proj}; {ending}")
