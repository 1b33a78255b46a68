"""The main window driven as a user would: typing, hovering words anywhere, toggling options."""

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer.views import theme
from attention_explorer.views.arc_diagram import LEFT, RIGHT
from event_log import EventLog
from gui_helpers import hover_arc_end, hover_cell, hover_widget
from screen_oracle import settle


def type_sentence(qtbot, window, text):
    box = window.sentence_box
    box.setFocus()
    box.selectAll()
    QTest.keyClick(box, QtCore.Qt.Key.Key_Delete)
    qtbot.keyClicks(box, text)


def test_window_opens_on_the_default_model_and_sentence(make_window):
    window = make_window()
    assert window.controller.model.name == "cat-sat-on-mat"
    assert window.sentence_box.toPlainText() == "the cat sat on the mat"
    assert [chip.text() for chip in window.chips.chips] == ["the₁", "cat", "sat", "on", "the₂", "mat"]
    assert "6 words" in window.status_line.text()


def test_typing_updates_the_heatmap_to_exactly_the_traces_weights(qtbot, make_window):
    window = make_window()
    type_sentence(qtbot, window, "my dog chased a ball")
    trace = window.controller.trace
    assert trace.tokens == ["my", "dog", "chased", "a", "ball"]
    np.testing.assert_array_equal(window.heatmap.image.image, trace.heads[0].weights)
    assert window.heatmap.left_axis.labels() == ["my", "dog", "chased", "a", "ball"]


def test_unknown_words_are_flagged_and_the_rest_computed(qtbot, make_window):
    window = make_window()
    type_sentence(qtbot, window, "the zebra sat on the mat")
    assert window.sentence_box.flagged_words() == ["zebra"]
    assert window.controller.trace.tokens == ["the", "sat", "on", "the", "mat"]
    unknown = [chip for chip in window.chips.chips if chip.token_index is None]
    assert [chip.text() for chip in unknown] == ["zebra"]
    assert "zebra" in window.status_line.text()
    hint = window.sentence_box.unknown_word_hint("zebra")
    assert "not in the vocabulary" in hint and "ran" not in hint  # nothing is spelled like "zebra"
    assert window.sentence_box.unknown_word_hint("catt").endswith("Known words spelled like it: cat.")


def test_a_status_longer_than_the_window_ends_in_an_ellipsis_and_is_whole_in_its_tooltip(qtbot, make_window):
    window = make_window()
    unknown = " ".join(f"unknownword{i}" for i in range(40))
    type_sentence(qtbot, window, f"the cat sat {unknown} on the mat")
    shown, whole = window.status_line.text(), window.status_line.toolTip()
    assert "unknownword39" in whole and whole.startswith("6 words")
    assert shown.endswith("…") and whole.startswith(shown[:-1])
    assert window.status_line.fontMetrics().horizontalAdvance(shown) <= window.status_line.width()


def test_a_new_status_does_not_lay_out_the_status_bar_again(qtbot, make_window):
    """The status line changes at every edit and step; its text asked the status bar and then the
    window to lay out again, an event-loop pass more each time, for a line that never moves. It
    still fills the bar's room."""
    window = make_window()
    settle()
    with EventLog([QtCore.QEvent.Type.LayoutRequest], window.statusBar()) as asked:
        before = window.status_line.full_text()
        type_sentence(qtbot, window, "the cat sat")
        settle()
        assert window.status_line.full_text() != before
    assert asked.seen == []
    line = window.status_line
    assert line.width() == line.parentWidget().width() and line.height() == line.parentWidget().height() > 10


def test_empty_text_shows_a_clear_message(qtbot, make_window):
    window = make_window()
    type_sentence(qtbot, window, "")
    assert window.controller.trace is None
    assert window.heatmap.message.isVisible() and "empty" in window.heatmap.message.text()
    assert window.arcs.message.isVisible()
    assert "empty" in window.status_line.text()
    type_sentence(qtbot, window, "the cat")
    assert window.heatmap.graphics.isVisible() and window.controller.trace.n == 2


def test_cell_tooltip_text_is_exact_for_cats_chase_mice(qtbot, make_window):
    window = make_window("cats-chase-mice")
    hover_cell(window.heatmap, row=0, col=1)
    assert window.heatmap.hover_text == "cats → chase 67.3 % (score 2.00, ÷√2 = 1.41)"
    assert window.heatmap.readout.text() == window.heatmap.hover_text
    assert window.controller.hovered == 0


def _assert_everyone_highlights(window, index):
    assert window.controller.focus == index
    heat = window.heatmap
    assert heat.row_highlight.isVisible() and heat.row_highlight.rect().center().y() == index
    assert heat.col_highlight.rect().center().x() == index
    assert heat.left_axis.focus() == index
    assert window.chips.chip_for_token(index).property("focused")
    assert window.arcs.label(LEFT, index).color == theme.highlight() and window.arcs.label(RIGHT, index).bold
    assert window.arcs.label(LEFT, (index + 1) % 6).color != theme.highlight()
    assert window.row_bars.shown_row() is not None
    np.testing.assert_array_equal(window.row_bars.shown_row(), window.controller.trace.heads[0].weights[index])


def test_hovering_a_chip_highlights_the_word_everywhere(qtbot, make_window):
    window = make_window()
    hover_widget(window.chips.chip_for_token(2))
    _assert_everyone_highlights(window, 2)
    assert {i for _, i, _, _ in window.arcs.drawn_arcs()} == {2}  # only sat's lines are kept


def test_hovering_a_heatmap_row_highlights_the_word_everywhere(qtbot, make_window):
    window = make_window()
    hover_cell(window.heatmap, row=3, col=0)
    _assert_everyone_highlights(window, 3)


def test_hovering_an_arc_end_highlights_the_word_everywhere(qtbot, make_window):
    window = make_window()
    hover_arc_end(window.arcs, LEFT, 1)
    _assert_everyone_highlights(window, 1)
    hover_arc_end(window.arcs, RIGHT, 5)
    assert window.controller.hovered == 5
    assert {j for _, _, j, _ in window.arcs.drawn_arcs()} == {5}  # lines into mat


def test_clicking_an_arc_end_pins_and_escape_unpins(qtbot, make_window):
    window = make_window()
    point = hover_arc_end(window.arcs, LEFT, 2)
    QTest.mouseClick(window.arcs.graphics.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point)
    assert window.controller.pinned == 2
    hover_widget(window.status_line)  # move away: the pinned word stays in focus
    window.controller.set_hovered(None)
    assert window.controller.focus == 2
    window.arcs.setFocus()
    QTest.keyClick(window.arcs, QtCore.Qt.Key.Key_Escape)
    assert window.controller.pinned is None


def test_causal_mask_draws_masked_cells_as_masked(qtbot, make_window):
    window = make_window("cats-chase-mice")
    window.options_bar.causal.click()
    assert window.controller.options.causal
    image = window.heatmap.image.image
    assert math.isnan(image[0, 1]) and math.isnan(image[0, 2]) and math.isnan(image[1, 2])
    assert image[1, 0] > 0
    rects = window.heatmap.hatch.masked_rects()  # one hatched run per row with later words
    assert [(r.left(), r.top(), r.width()) for r in rects] == [(0.5, -0.5, 2.0), (1.5, 0.5, 1.0)]
    hover_cell(window.heatmap, row=0, col=2)
    assert "masked" in window.heatmap.hover_text


def test_several_heads_get_one_colour_each_in_the_arcs(qtbot, make_window):
    window = make_window()
    pens = window.arcs.lines.batches()
    colours = {pen.color().name() for pen, _ in pens}
    assert colours == {theme.head_color(0).name(), theme.head_color(1).name()}
    heads = window.options_bar.heads
    heads.setCurrentIndex(heads.findData(1))
    heads.activated.emit(heads.currentIndex())
    assert window.controller.options.heads == 1
    assert {pen.color().name() for pen, _ in window.arcs.lines.batches()} == {theme.head_color(0).name()}


def test_strongest_arcs_control_limits_lines_per_word(qtbot, make_window):
    window = make_window()
    window.arcs.all_heads.setChecked(False)
    window.arcs.strongest.setValue(1)
    arcs = window.arcs.drawn_arcs()
    assert len(arcs) == 6
    weights = window.controller.trace.heads[0].weights
    assert all(j == int(np.argmax(weights[i])) or weights[i, j] == weights[i].max() for _, i, j, _ in arcs)


def test_switching_model_and_matrix_from_the_toolbar(qtbot, make_window):
    window = make_window()
    box = window.options_bar.model_box
    box.setCurrentIndex(box.findData("it-was-tired"))
    box.activated.emit(box.currentIndex())
    assert window.controller.model.name == "it-was-tired"
    assert window.sentence_box.toPlainText() == "the cat sat on the mat because it was tired"
    window.matrix_actions["scores"].trigger()
    np.testing.assert_array_equal(window.heatmap.image.image, window.controller.trace.heads[0].scores)
    assert window.options_bar.matrix.currentData() == "scores"


def test_another_head_leaves_the_toolbar_s_boxes_and_layout_as_they_were(qtbot, make_window):
    """The boxes were cleared and filled again on every change: the toolbar then laid out again, and
    the window after it (a head changed took five event-loop passes to settle). Their items stay;
    only the current one moves. Another model still refills them."""
    window = make_window()
    bar = window.options_bar
    window.controller.update_options(heads=2)
    settle()
    items = [bar.model_box.itemText(i) for i in range(bar.model_box.count())]
    with EventLog([QtCore.QEvent.Type.LayoutRequest], bar) as layouts:
        bar.head.setCurrentIndex(1)
        bar.head.activated.emit(1)  # as a user picks it
        settle()
    assert window.controller.head == 1 and bar.head.currentText() == "head 2"
    assert layouts.seen == [] and [bar.model_box.itemText(i) for i in range(bar.model_box.count())] == items
    box = bar.model_box
    box.setCurrentIndex(box.findData("it-was-tired"))
    box.activated.emit(box.currentIndex())
    heads = window.controller.options.heads
    assert [bar.head.itemText(i) for i in range(bar.head.count())] == [f"head {i + 1}" for i in range(heads)]
    assert bar.heads.currentData() == heads and box.currentData() == "it-was-tired"


def test_opening_a_damaged_model_keeps_the_current_one(qtbot, make_window, tmp_path, monkeypatch):
    window = make_window()
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: shown.append(a[2]))
    assert not window.open_model(str(bad))
    assert "not valid JSON" in shown[0]
    assert window.controller.model.name == "cat-sat-on-mat"


def test_enter_or_escape_leaves_the_sentence_box_so_keys_drive_the_steps(qtbot, make_window):
    window = make_window()
    box = window.sentence_box
    box.setFocus()
    QTest.keyClick(box, QtCore.Qt.Key.Key_Escape)
    assert not box.hasFocus()
    assert box.toPlainText() == "the cat sat on the mat"
    box.setFocus()
    QTest.keyClick(box, QtCore.Qt.Key.Key_Return)
    assert not box.hasFocus() and "\n" not in box.toPlainText()


def test_values_are_written_in_cells_only_while_they_fit(qtbot, make_window):
    window = make_window()
    assert window.heatmap.values_written()
    labels = window.heatmap.values.labels()
    assert len(labels) == 36 and labels[2 * 6 + 1].text == "0.80"  # sat → cat
    type_sentence(qtbot, window, " ".join(["the cat sat on the mat"] * 7))  # 42 words: cells too small
    assert not window.heatmap.values_written()


def test_a_message_after_an_export_does_not_move_the_views(make_window, tmp_path):
    window = make_window()
    QtWidgets.QApplication.processEvents()
    before = window.heatmap.mapTo(window, window.heatmap.rect().bottomRight())
    assert window.export_to("heatmap", str(tmp_path / "h.png"))
    QtWidgets.QApplication.processEvents()
    assert "Exported h.png" in window.statusBar().currentMessage()
    assert window.heatmap.mapTo(window, window.heatmap.rect().bottomRight()) == before


def test_a_pasted_long_sentence_shows_in_the_box_and_select_all_highlights_it(qtbot, make_window):
    """After pasting some 930 characters the box looked empty, not even Ctrl+A's highlight showing,
    though the text was there: what the screen holds is compared, not what the box says it holds."""
    from screen_oracle import backing_store, settle

    window = make_window()
    box = window.sentence_box
    words = sorted(window.controller.model.vocabulary)
    text = " ".join(words[(7 * i) % len(words)] for i in range(200))
    assert len(text) > 900
    QtWidgets.QApplication.clipboard().setText(text)
    box.setFocus()
    QTest.keyClick(box, QtCore.Qt.Key.Key_A, QtCore.Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(box, QtCore.Qt.Key.Key_V, QtCore.Qt.KeyboardModifier.ControlModifier)
    settle()
    assert box.toPlainText() == text and window.controller.sentence == text

    def shown_colours() -> set:
        place = QtCore.QRect(box.viewport().mapTo(window, QtCore.QPoint(0, 0)), box.viewport().size())
        image = backing_store(window).copy(place).convertToFormat(QtGui.QImage.Format.Format_RGB32)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
        return set(map(tuple, pixels[:, :image.width() * 4].reshape(-1, 4)[:, 2::-1].tolist()))  # BGRA bytes

    assert len(shown_colours()) > 8, "the box shows no text"
    QTest.keyClick(box, QtCore.Qt.Key.Key_A, QtCore.Qt.KeyboardModifier.ControlModifier)
    settle()
    highlight = box.palette().color(QtGui.QPalette.ColorRole.Highlight).getRgb()[:3]
    assert highlight in shown_colours(), "select all highlights nothing"
