"""A real model's layer read as words, without its specials or rolled out. Such weights are no softmax
of any scores, so the steps write out the layer's own computation and say so on screen (their
arithmetic adds up), the heatmap's readout and title write each shown weight out from what it was made
of, the bars say whose weights they are, and the focus reaches a merged word's pieces."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attention_explorer.engine.softmax import softmax  # noqa: E402
from attention_explorer.engine.steps import step_index  # noqa: E402
from gui_helpers import hover_cell  # noqa: E402
from screen_oracle import settle  # noqa: E402

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
GPT2, BERT = str(DATA / "tiny-gpt2"), str(DATA / "tiny-bert")
TEXT = "the unbelievable cat sat quietly"  # the tiny GPT-2 cuts "unbelievable" into twelve pieces


def turn_on(window, qtbot, box) -> None:
    box.click()
    qtbot.waitUntil(lambda: not window.controller.busy)
    settle()


def softmax_step(window):
    window.timeline.set_tables_shown(True)
    window.controller.set_step(step_index("softmax"))
    settle()
    return window.timeline.panel


def test_with_words_the_steps_show_the_layer_s_own_softmax_and_say_so(real_window, qtbot):
    window = real_window(GPT2, TEXT)
    c = window.controller
    turn_on(window, qtbot, window.pretrained.bar.merge)
    assert c.trace.n < c.pretrained_trace.n  # words shown, pieces in the model
    panel = softmax_step(window)
    assert panel.reading_note.isVisible()
    assert panel.reading_note.text().startswith(f"These steps are layer 1, head 1 as the model computes it, over "
                                                f"its own {c.pretrained_trace.n} tokens.")
    scores = panel.inputs()["masked"].matrix_model.table.values
    weights = panel.results()["weights"].matrix_model.table.values
    assert weights.shape == (c.pretrained_trace.n,) * 2
    np.testing.assert_allclose(weights, softmax(scores), atol=1e-6)  # "softmax of each row =" holds
    np.testing.assert_array_equal(weights, c.pretrained_trace.head_weights(0, 0))


def test_with_words_the_readout_sums_over_the_pieces(real_window, qtbot):
    window = real_window(GPT2, TEXT)
    c = window.controller
    turn_on(window, qtbot, window.pretrained.bar.merge)
    groups = c.trace.reading.groups
    looked_at = next(i for i, group in enumerate(groups) if len(group) > 1)  # "unbelievable"
    looking = next(i for i, group in enumerate(groups) if len(group) == 1 and i > looked_at)  # "cat", after it
    hover_cell(window.heatmap, looking, looked_at)
    readout = window.heatmap.readout.full_text()
    shown = c.trace.heads[0].weights[looking, looked_at]
    pieces = c.pretrained_trace.head_weights(0, 0)[groups[looking][0], list(groups[looked_at])]
    assert readout.startswith(f"{c.trace.labels[looking]} → {c.trace.labels[looked_at]} {shown * 100:.1f} % "
                              f"— words: ")
    assert f"(summed over the pieces of {c.trace.labels[looked_at]})" in readout
    assert shown == pytest.approx(pieces.sum())
    assert window.heatmap.title().startswith("attention weights, pieces merged into words — layer 1, head 1")


def test_hovering_a_merged_word_frames_its_pieces_in_the_steps(real_window, qtbot):
    window = real_window(GPT2, TEXT)
    c = window.controller
    turn_on(window, qtbot, window.pretrained.bar.merge)
    panel = softmax_step(window)
    long_word = next(i for i, group in enumerate(c.trace.reading.groups) if len(group) > 1)
    c.set_hovered(long_word)
    settle()
    group = c.trace.reading.groups[long_word]
    table = panel.results()["weights"]
    assert table.focus_mark() == (group[0], None) and table.focus_span() == len(group)


def test_with_rollout_the_steps_show_the_head_and_the_readout_multiplies_through_the_layers(real_window, qtbot):
    window = real_window(BERT)
    c = window.controller
    c.set_layer(1)
    qtbot.waitUntil(lambda: not c.busy)
    turn_on(window, qtbot, window.pretrained.bar.rollout)
    hover_cell(window.heatmap, 2, 1)
    assert window.heatmap.readout.full_text().split(" — ", 1)[1].startswith(
        f"rollout: R₂[{c.trace.labels[2]}, {c.trace.labels[1]}] = Σₖ Â₂[")
    assert window.heatmap.title() == "attention rollout up to layer 2 (all heads)"
    assert window.row_bars.title().endswith("(rollout)")
    panel = softmax_step(window)
    weights = panel.results()["weights"].matrix_model.table.values
    np.testing.assert_array_equal(weights, c.pretrained_trace.head_weights(1, 0))  # the head's own, not the rollout
    assert "rollout" in panel.reading_note.text()


def test_with_the_specials_hidden_the_readout_divides_by_what_is_left(real_window, qtbot):
    window = real_window(BERT)
    turn_on(window, qtbot, window.pretrained.bar.hide_specials)
    hover_cell(window.heatmap, 0, 1)
    readout = window.heatmap.readout.full_text()
    assert " — hidden: " in readout
    assert "of the₁'s weight is on the shown tokens; the rest was on [CLS], [SEP])" in readout
    assert window.row_bars.title().endswith("(head 1, hidden)")
    panel = softmax_step(window)
    assert panel.results()["weights"].matrix_model.table.rows[0] == "[CLS]"  # the steps keep every token


def test_a_long_note_or_readout_neither_moves_the_controls_nor_runs_past_its_pane(real_window, qtbot):
    """The reading's note wrapped to three lines and pushed the check boxes 48 px down, so the next
    click missed; a reading's arithmetic is longer than the heatmap's pane is wide."""
    window = real_window(GPT2, TEXT)
    bar = window.pretrained.bar
    window.resize(1280, 720)
    settle()
    before = (bar.height(), bar.merge.mapTo(window, bar.merge.rect().topLeft()))
    turn_on(window, qtbot, bar.merge)
    turn_on(window, qtbot, bar.hide_first)
    assert (bar.height(), bar.merge.mapTo(window, bar.merge.rect().topLeft())) == before
    assert bar.note.full_text() == window.controller.display_note and bar.note.toolTip() == bar.note.full_text()
    readout = window.heatmap.readout
    hover_cell(window.heatmap, window.controller.trace.n - 1, 1)
    assert readout.full_text() == window.heatmap.cell_text(window.controller.trace.n - 1, 1)
    for label in (bar.note, readout):
        assert label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


def test_a_reading_toggled_does_not_lay_out_the_toolbar_again(real_window, qtbot):
    """The note in the toolbar changes with the reading and never its size; its text asked the bar, the
    toolbar and then the window to lay out again (four to six event-loop passes to settle). It is shown
    cut to its width as before, and the window looks as a fresh one would. (The chips above the views
    may take fewer rows with words merged: that lays out the window, rightly.)"""
    from PySide6 import QtCore

    from event_log import EventLog
    from screen_oracle import check_backing_store

    window = real_window(GPT2, TEXT)
    bar = window.pretrained.bar
    settle()
    with EventLog([QtCore.QEvent.Type.LayoutRequest], bar, bar.parentWidget()) as asked:
        for box in (bar.merge, bar.rollout, bar.merge, bar.rollout):
            before = bar.note.full_text()
            turn_on(window, qtbot, box)
            assert bar.note.full_text() == window.controller.display_note
            assert before != bar.note.full_text() or not before
    assert asked.seen == []
    assert bar.note.isVisible() and bar.note.width() == bar.note.parentWidget().width() > 100
    assert bar.note.fontMetrics().horizontalAdvance(bar.note.text()) <= bar.note.contentsRect().width()
    check_backing_store(window, "readings toggled")


def test_the_steps_note_on_a_reading_is_painted_on_the_pass_that_paints_the_window(real_window, qtbot):
    """The Steps dock says, above its tables, which layer and head they are, and that they show the layer's
    own computation while a reading is on. Qt asks a widget it shows to paint itself on a later pass: the
    note was painted again a pass after the window, and each reading turned on took two passes to settle."""
    from PySide6 import QtCore, QtWidgets

    from event_log import EventLog
    from screen_oracle import check_backing_store

    window = real_window(BERT, TEXT)
    window.steps_dock.show()
    softmax_step(window)
    note = window.timeline.panel.reading_note
    plain = f"These steps are layer 1, head 1 as the model computes it, over its {window.controller.trace.n} tokens."
    assert note.isVisibleTo(window) and note.text() == plain
    for box in (window.pretrained.bar.merge, window.pretrained.bar.rollout):
        box.click()  # on: the note shown
        qtbot.waitUntil(lambda: not window.controller.busy)
        assert note.isVisibleTo(window)
        with EventLog([QtCore.QEvent.Type.Paint], note) as painted:
            QtWidgets.QApplication.processEvents()  # the pass that paints the window
            assert painted.seen
            painted.seen.clear()
            settle()
        assert painted.seen == []
        check_backing_store(window, f"{box.text()} on")
        turn_on(window, qtbot, box)  # off again
        assert note.isVisibleTo(window) and note.text() == plain


def test_a_reading_switched_on_and_off_leaves_the_steps_tables_and_their_written_cell(real_window, qtbot):
    """The steps show the layer's own computation whatever the reading: switching one changes only the
    note, which keeps its height. The tables are not set again and do not move, the cell pinned stays
    written out, and the panel draws what a timeline built fresh draws."""
    from PySide6 import QtCore

    from view_twins import check_twin

    window = real_window(BERT)
    c = window.controller
    panel = softmax_step(window)
    weights = panel.results()["weights"]
    shown = weights.matrix_model.table
    panel.toggle_pinned(("weights", 2, 1))
    written = panel.arithmetic_text()
    assert written.startswith("e^")
    plain = panel.reading_note.text()
    assert plain == "These steps are layer 1, head 1 as the model computes it, over its 8 tokens."
    places = [block.mapTo(panel, QtCore.QPoint()) for block in panel._blocks]
    note_height = panel.reading_note.height()
    for box, word in ((window.pretrained.bar.hide_specials, "hidden"), (window.pretrained.bar.merge, "words")):
        turn_on(window, qtbot, box)
        assert c.trace.reading is not None
        assert panel.reading_note.isVisible() and word in panel.reading_note.text()
        assert panel.results()["weights"] is weights and weights.matrix_model.table is shown
        assert panel.arithmetic_text() == written
        assert panel.reading_note.height() == note_height
        assert [block.mapTo(panel, QtCore.QPoint()) for block in panel._blocks] == places
        check_twin(window.timeline, f"{word} on")
        turn_on(window, qtbot, box)
        assert c.trace.reading is None and panel.reading_note.text() == plain
        assert weights.matrix_model.table is shown and panel.arithmetic_text() == written
        assert [block.mapTo(panel, QtCore.QPoint()) for block in panel._blocks] == places
        check_twin(window.timeline, f"{word} off")
