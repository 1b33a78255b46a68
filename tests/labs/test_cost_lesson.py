"""Cost: the paper's Table 1, operations against n for the chosen d, the memory of the n × n matrix."""

import numpy as np

from attention_explorer.engine import TABLE_1
from attention_explorer.labs.cost_lesson import QtCostLesson


def test_the_papers_table_1(make_panel):
    panel = make_panel(QtCostLesson)
    assert panel.paper_table.column_texts(0) == ["Self-attention", "Recurrent", "Convolutional",
                                                 "Self-attention (restricted)"]
    assert panel.paper_table.column_texts(1) == ["O(n²·d)", "O(n·d²)", "O(k·n·d²)", "O(r·n·d)"]
    assert panel.paper_table.column_texts(2) == [row.sequential for row in TABLE_1]
    assert panel.paper_table.column_texts(3) == [row.path_length for row in TABLE_1]


def test_the_plot_follows_d(make_panel):
    panel = make_panel(QtCostLesson)
    n, ops = panel.plotted("self_attention")
    at_10 = int(np.flatnonzero(n == 10)[0])
    assert ops[at_10] == 100 * 512
    panel.d_box.setValue(64)
    n, ops = panel.plotted("self_attention")
    assert ops[at_10] == 100 * 64
    _, recurrent = panel.plotted("recurrent")
    assert recurrent[at_10] == 10 * 64 * 64
    assert "d = 64" in panel.plot.titleLabel.text


def test_memory_and_counts_at_the_chosen_n(make_panel):
    panel = make_panel(QtCostLesson)
    assert "4.0 MiB" in panel.memory_line.text() and "float32" in panel.memory_line.text()
    panel.dtype_box.setCurrentText("float64")
    assert "8.0 MiB" in panel.memory_line.text()
    panel.n_box.setValue(100)
    assert panel.at_n_table.cell_text(0, 1) == "5,120,000"      # 100² · 512
    assert panel.at_n_table.cell_text(1, 2) == "100"            # recurrent: n steps one after another
    assert "self-attention" in panel.crossover_line.text()      # n < d: attention is cheaper
    assert panel.sentence_line.value() == np.log10(6)           # the user's own sentence is marked
