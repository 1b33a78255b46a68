"""A matrix plot after a seeded history of updates draws what a plot built fresh on the last state draws.

The heatmap's plot fits its cells to the pane from what its labels, title and colour bar leave, and
keeps what it measured from one update to the next: each shortcut is a way for a plot to show another
picture than a fresh one. Here a plot goes through random matrices (one cell to seventy words, short
and long labels, square and not), titles, axis titles, pane sizes, zooms, Fit and focused rows, and
after each step is compared pixel by pixel with a plot made fresh at the same size, shown the same
matrix (and, zoomed, the same range and focus). Before the fixes their tests name (test_matrix_plot.py),
a quarter of the seeds found a difference; these three found one each: a title set where there was
none (39), a long word after short ones (57), a zoom in a pane one column wide (132).
"""

import random

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attention_explorer.views.matrix_plot import MatrixPlot
from screen_oracle import check_same_picture, settle

WORDS = ["a", "because", "unexpectedly", "x" * 16, "cat", "sat", "on", "the", "mat", "a" * 40, "miceeeeeeeeet",
         "‹s›", "·ly"]
TITLES = ["scaled scores QKᵀ/√d_k — layer 2, head 1 of 9",
          "attention weights softmax(QKᵀ/√d_k) — layer 1, head 3 of 9 · a very long reading note that goes on", ""]
AXIS_TITLES = [("word looking", "word looked at"), ("target", "source token looked at")]
SIZES = [(330, 130), (330, 180), (200, 120), (500, 300), (330, 250), (700, 500), (260, 140), (330, 160)]
STEPS = 40


def _plot(size: tuple[int, int]) -> tuple[QtWidgets.QWidget, MatrixPlot]:
    """The heatmap's kind of plot in a plain host, as a docked view is (smaller than its least size)."""
    host = QtWidgets.QWidget()
    host.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
    host.resize(*size)
    plot = MatrixPlot(host, min_size=None, title_size="10pt", square_cells=True)
    plot.resize(*size)
    host.show()
    settle()
    return host, plot


def _show(plot: MatrixPlot, state: tuple) -> None:
    matrix, rows, columns, title, axis_titles = state
    plot.show_matrix(matrix, rows, columns, title=title, levels=(0, 1), axis_titles=axis_titles)


def _new_state(rng: random.Random, numbers: np.random.Generator) -> tuple:
    n = rng.choice([1, 1, 2, 3, 5, 12, 40, 70])
    n_keys = n if rng.random() < 0.8 else rng.choice([1, 2, 6])
    rows = [rng.choice(WORDS) for _ in range(n)]
    columns = (rows + [rng.choice(WORDS) for _ in range(n_keys)])[:n_keys]
    return numbers.random((n, n_keys)), rows, columns, rng.choice(TITLES), rng.choice(AXIS_TITLES)


def _step(rng: random.Random, numbers: np.random.Generator, host: QtWidgets.QWidget, plot: MatrixPlot,
          state: tuple | None) -> tuple[tuple, str]:
    """One update of the plot, as the window makes them; the state shown after it, and what was done."""
    kind = rng.random()
    if kind < 0.6 or state is None:
        state = _new_state(rng, numbers)
        _show(plot, state)
        return state, f"a {state[0].shape[0]} × {state[0].shape[1]} matrix"
    if kind < 0.75:
        size = rng.choice(SIZES)
        host.resize(*size)
        plot.resize(*size)
        return state, f"the pane made {size}"
    if kind < 0.85:
        factor = rng.choice([0.8, 1.25, 1.25])
        plot.frame.zoom(factor)
        return state, f"zoomed by {factor}"
    if kind < 0.92:
        plot.fit()
        return state, "Fit"
    row = rng.choice([None, rng.randrange(state[0].shape[0])])
    plot.set_focus(row, None)
    return state, f"row {row} focused"


@pytest.mark.parametrize("seed", [39, 57, 132])
def test_a_plot_after_any_history_draws_what_a_fresh_plot_draws(qtbot, seed):
    rng, numbers = random.Random(seed), np.random.default_rng(seed)
    host, plot = _plot(rng.choice(SIZES))
    qtbot.addWidget(host)
    state = None
    for step in range(STEPS):
        state, done = _step(rng, numbers, host, plot, state)
        settle()
        fresh_host, fresh = _plot((plot.width(), plot.height()))
        try:
            _show(fresh, state)
            settle()
            fresh.set_focus(*plot.focus())
            if plot.frame.zoomable:
                (x0, x1), (y0, y1) = plot.view.viewRange()
                fresh.view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
            settle()
            check_same_picture(plot, fresh, f"seed {seed}, step {step} ({done})")
        finally:
            fresh_host.close()
            fresh_host.deleteLater()
