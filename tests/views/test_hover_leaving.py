"""Leaving a pane whose words are hovered: the focus goes, and the pane may change what it shows while
pyqtgraph is still telling the scene's items that the mouse left.

The row bars turn back to their hint when no word is in focus. Hiding their plot there, in the middle of
the plot's own leave event, made Qt send that plot a second leave; pyqtgraph then told the same items
twice, failed on its own bookkeeping (a KeyError), and the error escaping Qt's event handler crashed
the process in PySide6 6.11 a few mouse moves later.
"""

import numpy as np
import pytest

from gui_helpers import hover_axis_word, hover_cell, hover_widget


def test_leaving_a_word_on_the_row_bars_brings_the_hint_back_without_an_error(qtbot, make_window):
    window = make_window()
    bars = window.row_bars
    for _ in range(3):
        hover_cell(window.heatmap, 1, 1)  # "cat" in focus: the bars show its row
        qtbot.waitUntil(lambda: bars.currentWidget() is bars.graphics)
        hover_axis_word(bars.graphics, bars.axis, 2)  # over "sat" on the bars' own axis
        assert window.controller.focus == 2
        hover_widget(window.heatmap.colormap_box)  # and away, out of the pane
        qtbot.waitUntil(lambda: bars.currentWidget() is bars.hint)
        assert window.controller.focus is None and bars.shown_row() is None


def _focus_when_the_plot_shows(bars, word):
    """Showing the plot under a resting pointer can hover a word on it at once, inside the redraw that
    showed it: stood in for by a focus change made as the pane turns to its plot."""
    changes = [word]

    def hover_under_pointer(_index):
        if changes and bars.currentWidget() is bars.graphics:
            bars.controller.set_hovered(changes.pop())
    bars.currentChanged.connect(hover_under_pointer)


@pytest.mark.parametrize("word", [None, 3])
def test_a_focus_change_inside_the_redraw_that_shows_the_plot_is_the_one_drawn(qtbot, make_window, word):
    window = make_window()
    bars, controller = window.row_bars, window.controller
    qtbot.waitUntil(lambda: bars.graphics is not None)  # built while idle, the hint still shown
    _focus_when_the_plot_shows(bars, word)
    controller.set_hovered(1)
    qtbot.wait(20)
    assert controller.focus == word
    if word is None:
        assert bars.shown_row() is None and bars.currentWidget() is bars.hint
    else:
        np.testing.assert_array_equal(bars.shown_row(), controller.trace.heads[0].weights[word])
        assert bars.plot.titleLabel.text == f"where “{controller.trace.labels[word]}” looks (head 1)"
