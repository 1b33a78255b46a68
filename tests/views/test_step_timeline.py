"""The step timeline driven as a learner would: stepping, playing, pausing, hovering cells, keys, GIF."""

import numpy as np
import pytest
from PIL import Image
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer import cli, engine
from attention_explorer.controller import Controller
from attention_explorer.engine.cell_arithmetic import fmt
from attention_explorer.engine.steps import LAST_STEP, STEPS, skip_reason, step_index
from attention_explorer.image_export import export_gif, export_view_file
from attention_explorer.views.step_timeline import QtStepTimeline
from screen_oracle import check_backing_store, settle

Key = QtCore.Qt.Key


@pytest.fixture
def make_timeline(qtbot):
    def make(model="cats-chase-mice", sentence=None, options=None) -> QtStepTimeline:
        controller = Controller(engine.load_builtin(model), sentence, options)
        timeline = QtStepTimeline(controller)
        qtbot.addWidget(timeline)
        timeline.resize(1100, 600)
        timeline.show()
        return timeline
    return make


def activate(qtbot, window):
    """Make `window` the active window: window-context shortcuts only fire there."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QtWidgets.QApplication.activeWindow() is window)


def shown(table) -> list[list[str | None]]:
    """The texts a table shows (None for a cell not filled in yet)."""
    model = table.model()
    return [[model.data(model.index(r, c)) for c in range(model.columnCount())] for r in range(model.rowCount())]


def labels(table, orientation) -> list[str]:
    model = table.model()
    count = model.columnCount() if orientation == QtCore.Qt.Orientation.Horizontal else model.rowCount()
    return [model.headerData(i, orientation) for i in range(count)]


def assert_table_shows(table, values, rows, cols):
    assert shown(table) == [[fmt(x) for x in row] for row in values]
    assert table.matrix_model.table.values is values or np.shares_memory(table.matrix_model.table.values, values)
    assert labels(table, QtCore.Qt.Orientation.Vertical) == list(rows)
    assert labels(table, QtCore.Qt.Orientation.Horizontal) == list(cols)


def hover(table, row, col):
    center = table.visualRect(table.model().index(row, col)).center()
    for point in (center + QtCore.QPoint(1, 1), center):  # the first move into a widget may land late
        QTest.mouseMove(table.viewport(), point)
        QtWidgets.QApplication.processEvents()


def play_to_the_end(timeline, limit=2000):
    """Drive the animation tick by tick (what the timer does), recording what each tick showed."""
    seen = []
    timeline.play()
    for _ in range(limit):
        if not timeline.is_playing():
            return seen
        timeline.tick()
        if not timeline.is_playing():
            return seen  # that tick only stopped: nothing new was shown
        seen.append((timeline.controller.step, timeline.panel.filled(), timeline.panel.unit_count()))
    raise AssertionError("playing never reached the end")


def test_the_window_opens_on_the_finished_computation(make_timeline):
    timeline = make_timeline()  # one head: no W_O and nothing to concatenate, so × V finishes
    final = step_index("output")
    assert timeline.controller.step == timeline.controller.final_step() == final
    assert not skip_reason(timeline.controller.trace, STEPS[final].key)
    assert timeline.panel.filled() == timeline.panel.unit_count()
    assert timeline.strip.checkedId() == final and timeline.scrubber.value() == final


def test_the_opening_step_is_never_a_skipped_one():
    for name in engine.builtin_model_names():
        controller = Controller(engine.load_builtin(name))
        assert not skip_reason(controller.trace, STEPS[controller.step].key), name
        for later in STEPS[controller.step + 1:]:
            assert skip_reason(controller.trace, later.key), f"{name}: {later.key} applies after the opening step"
    controller = Controller(engine.load_builtin("cats-chase-mice"))
    controller.update_options(heads=2)  # two heads to concatenate now: the finished step moves with it
    assert controller.step == step_index("concat")


def test_stepping_shows_exactly_the_traces_matrices_with_their_names(make_timeline):
    timeline = make_timeline()
    trace, head = timeline.controller.trace, timeline.controller.trace.heads[0]
    words, feats, dims = trace.labels, trace.features, ["0", "1"]
    expected = {
        "embed": ({"embedding": (trace.embedding, words, feats)}, {"x": (trace.x, words, feats)}),
        "q": ({"x": (trace.x, words, feats), "w_q": (head.w_q, feats, dims)}, {"q": (head.q, words, dims)}),
        "kv": ({"w_k": (head.w_k, feats, dims), "w_v": (head.w_v, feats, dims)},
               {"k": (head.k, words, dims), "v": (head.v, words, dims)}),
        "scores": ({"q": (head.q, words, dims), "kt": (head.k.T, dims, words)},
                   {"scores": (head.scores, words, words)}),
        "scaled": ({"scores": (head.scores, words, words)}, {"scaled": (head.scaled, words, words)}),
        "softmax": ({"masked": (head.masked, words, words)}, {"weights": (head.weights, words, words)}),
        "output": ({"weights": (head.weights, words, words), "v": (head.v, words, dims)},
                   {"output": (head.output, words, dims)}),
    }
    timeline.go_first()
    for i, step in enumerate(STEPS):
        assert timeline.controller.step == i
        title = step.title_for(timeline.controller.trace)
        assert timeline.panel.title.text().startswith(f"Step {i + 1} of 11 · {title}")
        if step.key in expected:
            inputs, results = expected[step.key]
            for key, (values, rows, cols) in inputs.items():
                assert_table_shows(timeline.panel.inputs()[key], values, rows, cols)
            for key, (values, rows, cols) in results.items():
                assert_table_shows(timeline.panel.results()[key], values, rows, cols)
            assert list(timeline.panel.results()) == list(results)
        QTest.mouseClick(timeline.forward_button, QtCore.Qt.MouseButton.LeftButton)


def test_steps_that_are_off_are_shown_as_skipped_not_hidden(make_timeline):
    timeline = make_timeline(options=engine.Options(scale=False, causal=False))
    skipped = {STEPS[i].key for i in range(len(STEPS)) if timeline.strip.button(i).property("skipped")}
    assert skipped == {"rope", "scaled", "masked", "concat", "w_o"}
    button = timeline.strip.button(step_index("scaled"))
    assert button.isVisible() and button.font().strikeOut() and "skipped: scaling is off" in button.toolTip()
    timeline.go_to(step_index("scaled"))
    assert timeline.panel.results() == {} and "Skipped: scaling is off" in timeline.panel.arithmetic_label.text()
    scores = timeline.controller.trace.heads[0].scores
    assert_table_shows(timeline.panel.inputs()["scores"], scores, timeline.controller.trace.labels,
                       timeline.controller.trace.labels)
    timeline.controller.update_options(scale=True, causal=True)
    assert not timeline.strip.button(step_index("scaled")).property("skipped")
    assert not timeline.strip.button(step_index("masked")).property("skipped")
    assert list(timeline.panel.results()) == ["scaled"]


def test_playing_to_the_end_fills_every_cell_of_every_step(make_timeline):
    timeline = make_timeline()
    seen = play_to_the_end(timeline)  # from the finished step, Play starts over at step 1
    assert seen[0][:2] == (0, 1)
    final = timeline.controller.final_step()
    for i in range(final + 1):
        ticks = [(filled, units) for step, filled, units in seen if step == i]
        assert ticks, f"step {i + 1} was never shown while playing"
        assert ticks[-1][0] == ticks[-1][1], f"step {i + 1} was left before it was filled in"
        assert [f for f, _ in ticks if f] == sorted({f for f, _ in ticks if f}), "cells appeared out of order"
    assert timeline.controller.step == final and not timeline.is_playing()  # it stops on the finished step
    for table in timeline.panel.results().values():
        assert None not in sum(shown(table), [])


def test_softmax_fills_a_row_at_a_time(make_timeline):
    timeline = make_timeline()
    timeline.go_to(step_index("softmax"))
    timeline.play()
    assert timeline.panel.unit_count() == 3
    timeline.tick()
    assert shown(timeline.panel.results()["weights"])[0] == ["0.16", "0.67", "0.16"]
    assert shown(timeline.panel.results()["weights"])[1] == [None, None, None]


def test_the_timer_plays_on_its_own(qtbot, make_timeline):
    timeline = make_timeline()
    timeline.speed.setCurrentIndex(timeline.speed.count() - 1)
    timeline.go_to(step_index("scores"))
    timeline.play()
    assert timeline.panel.filled() == 0
    qtbot.waitUntil(lambda: timeline.panel.filled() > 0 or timeline.controller.step > step_index("scores"),
                    timeout=5000)
    timeline.pause()


def test_pausing_midway_shows_a_partial_consistent_fill(make_timeline):
    timeline = make_timeline()
    timeline.go_to(step_index("scores"))
    timeline.play()
    for _ in range(4):
        timeline.tick()
    timeline.pause()
    scores = timeline.controller.trace.heads[0].scores
    assert timeline.panel.filled() == 4
    assert shown(timeline.panel.results()["scores"]) == [[fmt(x) for x in scores[0]],
                                                        [fmt(scores[1, 0]), None, None], [None, None, None]]
    # the cell filled last is written out, and its query row and key column are outlined
    assert timeline.panel.arithmetic_text() == "q_chase · k_cats = 2×1 + 0×0 = 2"
    assert timeline.panel.inputs()["q"].matrix_model.marks() == ((1, None),)
    assert timeline.panel.inputs()["kt"].matrix_model.marks() == ((None, 0),)
    timeline.panel.set_filled(4)  # nothing moves while paused
    assert not timeline.is_playing() and timeline.panel.filled() == 4


@pytest.mark.parametrize(("step", "result", "cell", "text", "marks"), [
    ("scores", "scores", (0, 1), "q_cats · k_chase = 0×0 + 2×1 = 2", {"q": ((0, None),), "kt": ((None, 1),)}),
    ("scaled", "scaled", (0, 1), "2 ÷ √2 = 1.41", {"scores": ((0, 1),)}),
    ("softmax", "weights", (0, 1), "e^1.41 ÷ (e^0 + e^1.41 + e^0) = 0.67", {"masked": ((0, None),)}),
    ("output", "output", (0, 0), "out_cats[0] = 0.16×1 + 0.67×0 + 0.16×1 = 0.33",
     {"weights": ((0, None),), "v": ((None, 0),)}),
])
def test_hovering_a_cell_writes_out_its_arithmetic_and_outlines_its_inputs(make_timeline, step, result, cell, text,
                                                                           marks):
    timeline = make_timeline()
    timeline.go_to(step_index(step))
    hover(timeline.panel.results()[result], *cell)
    assert timeline.panel.arithmetic_text() == text
    assert text in timeline.panel.arithmetic_label.text()
    for key, table in timeline.panel.inputs().items():
        assert table.matrix_model.marks() == marks.get(key, ()), f"wrong outline on {key}"
    assert timeline.panel.results()[result].matrix_model.marks() == (cell,)


def test_clicking_a_cell_keeps_its_arithmetic_after_the_mouse_leaves(make_timeline):
    timeline = make_timeline()
    timeline.go_to(step_index("scores"))
    table = timeline.panel.results()["scores"]
    QTest.mouseClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton,
                     pos=table.visualRect(table.model().index(2, 1)).center())
    timeline.panel.hover_cell(None)
    assert timeline.panel.arithmetic_text() == "q_mice · k_chase = 0×0 + 2×1 = 2"
    hover(table, 0, 0)
    assert timeline.panel.arithmetic_text() == "q_cats · k_cats = 0×1 + 2×0 = 0"


def test_keys_step_and_play_but_leave_typing_alone(qtbot, make_timeline):
    timeline = make_timeline()
    box = QtWidgets.QLineEdit("cats chase mice")
    timeline.layout().addWidget(box)
    activate(qtbot, timeline)
    timeline.setFocus()
    QTest.keyClick(timeline, Key.Key_Home)
    assert timeline.controller.step == 0
    QTest.keyClick(timeline, Key.Key_Right)
    QTest.keyClick(timeline, Key.Key_Right)
    QTest.keyClick(timeline, Key.Key_Left)
    assert timeline.controller.step == 1
    QTest.keyClick(timeline, Key.Key_End)
    assert timeline.controller.step == LAST_STEP
    QTest.keyClick(timeline, Key.Key_Space)
    assert timeline.is_playing() and timeline.controller.step == 0
    QTest.keyClick(timeline, Key.Key_Space)
    assert not timeline.is_playing()

    box.setFocus()
    box.setCursorPosition(4)
    for key in (Key.Key_Left, Key.Key_Home, Key.Key_Right, Key.Key_End, Key.Key_Space):
        QTest.keyClick(box, key)
    assert timeline.controller.step == 0 and not timeline.is_playing()
    assert box.text() == "cats chase mice " and box.cursorPosition() == len(box.text())


def test_space_presses_a_focused_button_but_arrows_still_step(qtbot, make_timeline):
    timeline = make_timeline()
    check = QtWidgets.QCheckBox("scale")
    timeline.layout().addWidget(check)
    activate(qtbot, timeline)
    check.setFocus()
    QTest.keyClick(check, Key.Key_Space)
    assert check.isChecked() and not timeline.is_playing()
    QTest.keyClick(check, Key.Key_Left)
    assert timeline.controller.step == timeline.controller.final_step() - 1


def test_a_new_trace_keeps_the_step_and_clamps_a_partial_fill(make_timeline):
    timeline = make_timeline()
    timeline.go_to(step_index("scores"))
    timeline.play()
    for _ in range(7):
        timeline.tick()
    timeline.pause()
    timeline.controller.set_sentence("cats chase")  # 4 scores now, 7 were filled
    assert timeline.controller.step == step_index("scores")
    assert timeline.panel.filled() == timeline.panel.unit_count() == 4
    timeline.go_to(step_index("q"))
    timeline.controller.set_sentence("cats chase mice")
    assert timeline.panel.filled() == timeline.panel.unit_count() == 6  # finished stays finished


def test_the_controller_step_is_clamped_and_emitted_only_on_change(qtbot):
    controller = Controller(engine.load_builtin("cats-chase-mice"))
    controller.set_step(LAST_STEP)
    with qtbot.assertNotEmitted(controller.step_changed):
        controller.set_step(LAST_STEP)
        controller.set_step(99)
    with qtbot.waitSignal(controller.step_changed) as blocker:
        controller.set_step(-3)
    assert blocker.args == [0] and controller.step == 0


def test_the_window_heatmap_and_arcs_follow_the_step(make_window):
    window = make_window("cats-chase-mice")
    controller, head = window.controller, window.controller.trace.heads[0]
    arcs_gate, heat_gate = window.arcs.parentWidget(), window.heatmap.parentWidget()
    assert arcs_gate.view_shown() and heat_gate.view_shown()
    for key, matrix, values in (("scores", "scores", head.scores), ("scaled", "scaled", head.scaled),
                                ("masked", "masked", head.masked), ("softmax", "weights", head.weights)):
        window.timeline.go_to(step_index(key))
        assert controller.matrix == matrix
        np.testing.assert_array_equal(window.heatmap.shown_matrix(), values)
    window.timeline.go_to(step_index("scaled"))
    assert not arcs_gate.view_shown() and "softmax step" in arcs_gate.note.text() and heat_gate.view_shown()
    window.timeline.go_first()
    assert not heat_gate.view_shown()
    window.steps_dock.toggleViewAction().trigger()  # closing the timeline shows the finished computation
    assert controller.step == controller.final_step() and arcs_gate.view_shown()


def test_the_play_through_exports_as_a_gif_with_a_frame_per_step(tmp_path, make_timeline):
    timeline = make_timeline()
    timeline.go_to(step_index("q"))
    path = tmp_path / "steps.gif"
    export_gif(timeline, path)
    with Image.open(path) as gif:
        assert gif.format == "GIF" and gif.n_frames >= len(STEPS)
    assert timeline.controller.step == step_index("q")  # the window was left as it was


def test_the_current_step_exports_as_png_and_svg(tmp_path, make_timeline):
    timeline = make_timeline()
    export_view_file(timeline, tmp_path / "step.png", scale=2)
    with Image.open(tmp_path / "step.png") as png:
        assert png.size == (timeline.panel.width() * 2, timeline.panel.height() * 2)
    export_view_file(timeline, tmp_path / "step.svg")
    assert "<svg" in (tmp_path / "step.svg").read_text()


def test_the_command_line_writes_the_steps_as_gif_and_png(tmp_path):
    gif, png = tmp_path / "steps.gif", tmp_path / "last.png"
    assert cli.main(["export", "--model", "cats-chase-mice", "--view", "steps", "-o", str(gif)]) == 0
    with Image.open(gif) as image:
        assert image.n_frames >= len(STEPS)
    assert cli.main(["export", "--model", "cats-chase-mice", "--view", "steps", "-o", str(png)]) == 0
    assert png.stat().st_size > 0


def test_a_gif_of_a_view_that_does_not_play_says_what_to_do(tmp_path, capsys):
    assert cli.main(["export", "--view", "heatmap", "-o", str(tmp_path / "h.gif")]) != 0
    assert "steps" in capsys.readouterr().err


def test_in_the_window_the_sentence_box_keeps_its_keys_until_the_timeline_is_clicked(qtbot, make_window):
    window = make_window("cats-chase-mice")
    activate(qtbot, window)
    box, timeline = window.sentence_box, window.timeline
    box.setFocus()
    box.moveCursor(box.textCursor().MoveOperation.End)
    QTest.keyClick(box, Key.Key_Space)
    QTest.keyClick(box, Key.Key_Left)
    QTest.keyClick(box, Key.Key_Home)
    assert box.toPlainText() == "cats chase mice " and box.textCursor().position() == 0
    final = window.controller.final_step()
    assert window.controller.step == final and not timeline.is_playing()
    timeline.set_tables_shown(True)  # a window this short opens with them folded
    qtbot.waitUntil(lambda: timeline.panel.isVisible() and timeline.scroll.viewport().height() > 50)
    QTest.mouseClick(timeline.panel, QtCore.Qt.MouseButton.LeftButton)
    assert QtWidgets.QApplication.focusWidget() is timeline
    QTest.keyClick(timeline, Key.Key_Left)
    assert window.controller.step == final - 1


def test_the_export_menu_writes_the_steps_as_gif_and_the_step_as_png(tmp_path, make_window):
    from attention_explorer.views.export_dialog import EXPORT_KINDS, QtExportDialog

    window = make_window("cats-chase-mice")
    assert "*.gif" in EXPORT_KINDS["steps"][1]
    dialog = QtExportDialog(window, "steps")
    assert dialog.chosen()[0] == "steps" and dialog.scale.isEnabled()
    dialog.deleteLater()
    assert window.export_to("steps", str(tmp_path / "steps.gif"))
    with Image.open(tmp_path / "steps.gif") as gif:
        assert gif.n_frames >= len(STEPS)
    assert window.export_to("steps", str(tmp_path / "step.png"), scale=1)
    with Image.open(tmp_path / "step.png") as png:
        assert png.size == (window.timeline.panel.width(), window.timeline.panel.height())


def test_folded_tables_are_drawn_when_unfolded_and_show_the_step_then_current(make_timeline):
    timeline = make_timeline()
    timeline.set_tables_shown(False)
    timeline.controller.set_step(step_index("scores"))
    timeline.controller.set_sentence("cats chase mice")
    # folded, the tables wait: what they would show has changed twice, nothing was drawn
    assert timeline._panel.title.text() != "" and not timeline._panel.title.text().startswith("Step 5 ")
    timeline.set_tables_shown(True)
    assert timeline._panel.title.text().startswith("Step 5 of 11")
    scores = timeline.controller.trace.heads[timeline.controller.head].scores
    labels_ = timeline.controller.trace.labels
    assert_table_shows(timeline._panel.results()["scores"], scores, labels_, labels_)


class _TablePaintsAfterTheFirstPass(QtCore.QObject):
    """Which parts of the panel's tables (their cells, headers, corner) paint once the event loop's first
    pass after a change is over."""

    def __init__(self, panel: QtWidgets.QWidget):
        super().__init__(panel)
        self.panel, self.late, self.first_pass = panel, [], True
        QtWidgets.QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if not self.first_pass and event.type() == QtCore.QEvent.Type.Paint and isinstance(watched, QtWidgets.QWidget):
            tables = [t for t in (*self.panel.inputs().values(), *self.panel.results().values())
                      if t is watched or t.isAncestorOf(watched)]
            if tables:
                self.late.append(f"{type(watched).__name__} of {tables[0].matrix_model.table.key}")
        return False


def test_a_shorter_text_s_tables_are_laid_out_and_painted_in_one_pass(make_timeline):
    """Each word less (as a generation's scrubber steps back) shrinks every table: the panel fits its
    texts to the tables' new widths as it shows them, not on a later pass that paints the tables again."""
    timeline = make_timeline("cat-sat-on-mat", "the cat sat on the mat and the cat sat")
    timeline.controller.set_step(step_index("softmax"))
    settle()
    paints = _TablePaintsAfterTheFirstPass(timeline.panel)
    words = timeline.controller.sentence.split()
    for count in range(len(words) - 1, 6, -1):
        paints.first_pass = True
        timeline.controller.set_sentence(" ".join(words[:count]))
        QtWidgets.QApplication.processEvents()
        paints.first_pass = False
        settle()
        assert paints.late == [], (count, paints.late)
        assert [t.matrix_model.rowCount() for t in timeline.panel.results().values()] == [timeline.controller.trace.n]
    check_backing_store(timeline, "seven words")  # once: its full repaint of the window lays the tables out again


def test_new_tables_paint_the_steps_dock_on_the_pass_that_paints_the_window(make_window):
    """The tables' new size laid the panel and the scroll area out again, and Qt lays the scroll bars out on
    a queued call: both ran after the window was painted (a plot's scene paints it from a queued call of
    its own), and the Steps dock was painted again on a later pass. Now it is laid out as the tables are
    set, and neither laid out nor painted again after the first pass: it shows what a full repaint shows."""
    from event_log import EventLog

    long = " ".join(["the cat sat on the mat"] * 5)  # tables wider than the dock: its scroll bars' ranges change
    window = make_window(sentence=long)
    window.steps_dock.show()
    settle()
    c, dock = window.controller, window.steps_dock
    timeline = dock.widget()
    if not timeline.tables_shown():  # folded away on a short screen
        timeline.tables_button.click()
        settle()
    for change in (lambda: c.set_sentence(long + " the cat"), lambda: c.set_head(1),
                   lambda: c.set_sentence(long), lambda: c.set_sentence(long + " the mat sat on the cat")):
        widgets = (dock, *dock.findChildren(QtWidgets.QWidget))
        change()
        with EventLog({QtCore.QEvent.Type.LayoutRequest}, *widgets) as laid_out_later:
            QtWidgets.QApplication.processEvents()  # the pass that paints the window
            with EventLog({QtCore.QEvent.Type.Paint}, *widgets) as painted_later:
                settle()
        assert laid_out_later.seen == []
        # nothing at all, a table's caption neither: its rich text laid out in its paint asked for a
        # paint from within it, which Qt put off to the next pass
        assert [type(widget).__name__ for widget, _ in painted_later.seen] == []
    check_backing_store(window, "new sentences and heads with the Steps dock open")
