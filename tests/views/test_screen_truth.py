"""What the window shows after a history of updates is what it would show built fresh, and what its
partial repaints left on screen is what a full repaint draws: each case below was seen by a user as
a stale word or number (see screen_oracle.py and view_twins.py for the two oracles)."""

from pathlib import Path

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer.controller import LOOKED_AT, LOOKING
from attention_explorer.views.arc_diagram import LEFT, RIGHT
from gui_helpers import hover_arc_end, hover_cell, hover_widget
from screen_oracle import check_backing_store, settle
from view_twins import check_twin

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"


def check_all(window, where: str) -> None:
    """Both oracles over every view of the window."""
    settle()
    check_backing_store(window, where)
    for view in (window.heatmap, window.arcs, window.row_bars, window.timeline, window.chips,
                 window.pretrained.model_view, window.pretrained.next_tokens):
        check_twin(view, where)


def test_the_arcs_after_pin_and_unpin_then_options_draw_each_word_on_its_own_row(make_window):
    window = make_window("it-was-tired", "the dog sat on the mat")
    c = window.controller
    c.toggle_pinned(2)
    settle()
    c.toggle_pinned(2)
    settle()
    window.options_bar.causal.click()
    window.options_bar.positional.click()
    hover_arc_end(window.arcs, LEFT, 0)
    assert (c.focus, c.focus_role) == (0, LOOKING)
    check_all(window, "pin, unpin, mask and positions, then a hover of the₁'s left end")


def test_the_focused_word_label_goes_when_the_focus_goes(make_window):
    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    hover_arc_end(window.arcs, RIGHT, 1)
    QTest.mouseMove(window.arcs.graphics.viewport(), QtCore.QPoint(5, 5))
    settle()
    window.controller.toggle_pinned(1, LOOKED_AT)
    settle()
    window.controller.toggle_pinned(1, LOOKED_AT)
    check_all(window, "hover, leave, pin and unpin of cat")


def test_a_new_sentence_then_a_pin_labels_every_row_with_its_word(make_window):
    window = make_window()
    window.sentence_box.setPlainText("the dog sat on the mat")
    settle()
    window.controller.toggle_pinned(2)
    check_all(window, "a sentence change, then pinning sat")


def test_folding_the_tables_keeps_the_arc_labels(make_window):
    window = make_window("it-was-tired", "the dog sat on the mat")
    hover_arc_end(window.arcs, LEFT, 0)
    for _ in range(2):
        window.timeline.tables_button.click()
        settle()
        check_all(window, "the Tables button")


def test_the_bars_carry_only_the_focused_word_values(make_window):
    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    c = window.controller
    c.set_hovered(2)
    settle()
    c.set_hovered(0)
    check_all(window, "hovering sat, then the₁")
    window.options_bar.causal.click()
    window.options_bar.positional.click()
    check_all(window, "the mask and positions turned on")
    c.set_hovered(None)
    hover_arc_end(window.arcs, RIGHT, 4)
    check_all(window, "a first hover of an arc's right end")


def test_the_heatmap_readout_follows_a_changed_cell(make_window):
    window = make_window("it-was-tired", "the cat sat on the mat because it was tired")
    hover_cell(window.heatmap, 3, 3)
    before = window.heatmap.readout.text()
    window.options_bar.positional.click()
    settle()
    assert window.heatmap.readout.text() != before
    assert window.heatmap.readout.text() == window.heatmap.cell_text(3, 3)
    check_all(window, "an option change under a hovered cell")


def test_fit_shows_the_labels_of_the_whole_matrix(make_window):
    window = make_window()
    words = ["the", "cat", "sat", "on", "the", "mat", "and", "the", "dog", "ran", "in", "the", "park"]
    window.sentence_box.setPlainText(" ".join(words[i % len(words)] for i in range(37)))
    settle()
    window.resize(1280, 720)
    settle()
    if not window.heatmap.is_zoomable():
        pytest.skip("the heatmap fits whole at this size")
    window.heatmap.fit_button.click()
    check_all(window, "Fit on a 37-word sentence")


def test_the_model_editor_beside_a_real_model_raises_nothing(make_window, monkeypatch, qtbot):
    window = make_window()
    window.model_editor_dock.toggleViewAction().trigger()
    settle()
    assert window.model_editor_dock.isVisible()
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(DATA / "tiny-bert"))
    window.pretrained.open_folder_action.trigger()
    qtbot.waitUntil(lambda: window.controller.is_real and window.controller.trace is not None, timeout=20_000)
    settle()
    assert not window.model_editor_dock.isVisible(), "the editor of a toy model is put away beside a real model"
    check_all(window, "opening the tiny BERT with the model editor open")
    window.options_bar.model_box.activated.emit(0)
    settle()
    assert not window.controller.is_real
    assert window.model_editor_dock.isVisible(), "the editor comes back with the toy model"


def test_the_cell_readout_is_never_cut_by_the_colour_controls(make_window, monkeypatch, qtbot):
    """Beside the model view at 1280 wide the heatmap's pane is narrow: its readout still shows whole."""
    window = make_window()
    window.resize(1280, 720)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(DATA / "tiny-bert"))
    window.pretrained.open_folder_action.trigger()
    qtbot.waitUntil(lambda: window.controller.is_real and window.controller.trace is not None, timeout=20_000)
    settle()
    hover_cell(window.heatmap, 7, 0)
    readout = window.heatmap.readout
    assert readout.text() == window.heatmap.cell_text(7, 0)
    assert readout.fontMetrics().horizontalAdvance(readout.text()) <= readout.contentsRect().width()


def test_a_long_text_labels_the_hovered_arc_end_with_its_own_word(make_window):
    window = make_window()
    words = sorted(window.controller.model.vocabulary)
    window.sentence_box.setPlainText(" ".join(words[(7 * i) % len(words)] for i in range(199)))
    settle()
    drawn = window.arcs.drawn_labels(LEFT)
    index, _rect = drawn[len(drawn) // 2]
    hover_arc_end(window.arcs, LEFT, index)
    assert window.controller.focus == index
    assert window.arcs.label(LEFT, index).text == window.controller.trace.labels[index]
    check_all(window, "a hover of an arc end in a 199-word text")


def test_the_heatmap_s_least_width_is_the_same_whether_fit_shows_or_not(make_window):
    """Fit comes while the matrix is zoomed in. When it widened the pane's least width, a pane on the edge
    of zooming showed and hid it without end (the splitter widened the pane for it, the matrix then fitted,
    Fit went, the pane narrowed), and the footer's last place on screen was stale (a random walk, seed 60)."""
    window = make_window(sentence=" ".join(["the", "cat", "sat", "on", "the", "mat"] * 34))
    heatmap = window.heatmap
    settle()
    assert heatmap.is_zoomable() and heatmap.fit_button.isVisible()
    zoomed = heatmap.minimumSizeHint().width()
    window.controller.set_sentence("the cat sat on the mat")  # the same words, whole in the pane
    settle()
    assert not heatmap.is_zoomable() and not heatmap.fit_button.isVisible()
    assert heatmap.minimumSizeHint().width() == zoomed


@pytest.mark.parametrize("extra_height", [0, 1])  # the text's place is a pixel off at one parity only
def test_the_bars_hint_after_their_plot_held_the_keyboard_focus_draws_as_a_fresh_one(make_window, extra_height,
                                                                                       qtbot):
    """Turning from the plot back to the hint, the pane gave the keyboard focus its plot held to the hint;
    a label given the focus lays its text out otherwise and centred it a pixel higher than a label never
    focused (a random walk with many resizes, seed 67). The pointer leaves the heatmap, as a hand would:
    a hover cleared while it rested on a cell came back from it on a busy machine."""
    window = make_window()
    window.resize(window.width(), window.height() + extra_height)
    bars = window.row_bars
    hover_cell(window.heatmap, 1, 1)
    settle()
    assert bars.currentWidget() is bars.graphics
    bars.graphics.setFocus()  # as a click on the plot gives it
    hover_widget(window.heatmap.colormap_box)  # out of the plot
    qtbot.waitUntil(lambda: window.controller.hovered is None)
    settle()
    assert bars.currentWidget() is bars.hint
    assert QtWidgets.QApplication.focusWidget() is not bars.hint
    check_twin(bars, "the hint back after the plot held the focus")


@pytest.mark.parametrize("extra_height", [0, 1])
def test_a_step_gate_s_note_after_its_view_held_the_keyboard_focus_draws_as_one_never_focused(make_window,
                                                                                              extra_height):
    """The same for the notes that stand in for the heatmap, bars and arcs before their step."""
    window = make_window()
    window.resize(window.width(), window.height() + extra_height)
    gate = window.heatmap.parentWidget()
    window.heatmap.graphics.setFocus()
    window.controller.set_step(0)
    settle()
    assert gate.currentWidget() is gate.note
    assert QtWidgets.QApplication.focusWidget() is not gate.note
    never_focused = type(gate)(window.controller, QtWidgets.QWidget(), gate.from_step, gate.note.text())
    never_focused.resize(gate.size())
    never_focused.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
    never_focused.show()
    settle()
    assert never_focused.note.grab().toImage() == gate.note.grab().toImage()
