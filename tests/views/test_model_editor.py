"""The model editor driven as a user would: typing numbers into cells, undo/redo, adding a word,
renaming a feature, saving and opening, and the Save / Discard / Cancel prompt before edits are lost."""

import json

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer import engine

Buttons = QtWidgets.QMessageBox.StandardButton


@pytest.fixture(autouse=True)
def discard_at_teardown(monkeypatch):
    """pytest-qt closes the windows after each test; with unsaved edits a real prompt would block,
    so unless a test answers the prompt itself, the answer is Discard."""
    monkeypatch.setattr(QtWidgets.QMessageBox, "question", lambda *a: Buttons.Discard)


@pytest.fixture
def editing_window(make_window):
    """A main window with the model editor shown."""
    def make(model: str = "cats-chase-mice", sentence: str | None = None):
        window = make_window(model, sentence)
        window.model_editor_dock.toggleViewAction().trigger()
        QtWidgets.QApplication.processEvents()
        return window
    return make


@pytest.fixture
def warnings(monkeypatch):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda parent, title, text, *a: shown.append(text))
    return shown


@pytest.fixture
def answer(monkeypatch):
    """Answer the unsaved-edits prompt with the given buttons in turn; records each question."""
    asked = []

    def set_answers(*answers):
        queue = list(answers)

        def question(parent, title, text, *args):
            asked.append(text)
            return queue.pop(0) if queue else Buttons.Discard
        monkeypatch.setattr(QtWidgets.QMessageBox, "question", question)
    set_answers.asked = asked
    return set_answers


def panel(window):
    return window.model_editor_dock.widget()


def table(window, field):
    return panel(window).tables[field]


def views_state(window):
    """What every view shows, to compare before and after."""
    trace = window.controller.trace
    return (engine.model_to_dict(window.controller.model), trace.heads[0].weights.copy(),
            np.array(window.heatmap.image.image, copy=True), window.arcs.drawn_arcs(),
            table(window, "w_q").values().copy())


def assert_views_state_equal(a, b):
    assert a[0] == b[0]
    for x, y in zip(a[1:], b[1:], strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def type_into_cell(qtbot, window, field, row, col, text):
    view = panel(window).views[field]
    panel(window).tabs.setCurrentWidget(view)
    view.setFocus()
    view.setCurrentIndex(view.model().index(row, col))
    QTest.keyClick(view, QtCore.Qt.Key.Key_F2)  # open the cell's editor
    editor = QtWidgets.QApplication.focusWidget()
    assert isinstance(editor, QtWidgets.QLineEdit), "the cell editor should open on F2"
    assert editor.text() == repr(float(table(window, field).values()[row, col])), "the editor starts exact"
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    QTest.keyClick(editor, QtCore.Qt.Key.Key_Return)
    QtWidgets.QApplication.processEvents()


def test_the_editor_dock_is_hidden_until_the_view_menu_shows_it(make_window):
    window = make_window("cats-chase-mice")
    dock = window.model_editor_dock
    assert not dock.isVisible()
    assert dock.widget() is None  # not even built: the start does not pay for it
    assert dock.toggleViewAction() in window.menuBar().actions()[2].menu().actions()
    dock.toggleViewAction().trigger()
    assert dock.isVisible() and dock.widget() is not None
    tab_names = [panel(window).tabs.tabBar().accessibleTabName(i) for i in range(5)]
    assert tab_names == ["Embeddings", "W_Q", "W_K", "W_V", "W_O"]
    assert not panel(window).tabs.isTabVisible(4), "cats-chase-mice has no W_O"
    w_q = table(window, "w_q")
    assert [w_q.headerData(i, QtCore.Qt.Orientation.Vertical) for i in range(3)] == ["animal", "action", "small"]
    np.testing.assert_array_equal(w_q.values(), [[0, 2], [2, 0], [0, 0]])


def test_typing_a_number_into_a_cell_recomputes_every_view(qtbot, editing_window):
    window = editing_window()
    before = window.controller.trace.heads[0].weights.copy()
    type_into_cell(qtbot, window, "w_q", 1, 0, "0.5")  # chase now looks for animals half as hard
    trace = window.controller.trace
    assert window.controller.model.w_q[1, 0] == 0.5
    assert not np.array_equal(trace.heads[0].weights, before)
    np.testing.assert_array_equal(window.heatmap.image.image, trace.heads[0].weights)
    assert {(i, j): w for _, i, j, w in window.arcs.drawn_arcs()} == pytest.approx(
        {(i, j): trace.heads[0].weights[i, j] for _, i, j, _ in window.arcs.drawn_arcs()})
    assert table(window, "w_q").data(table(window, "w_q").index(1, 0)) == "0.5"
    assert window.isWindowModified() and "cats-chase-mice[*]" in window.windowTitle()


def test_each_field_is_editable_through_its_table(editing_window):
    window = editing_window("cat-ate-fish")
    window.controller.update_options(causal=False)  # the heatmap draws masked cells as NaN
    assert panel(window).tabs.isTabVisible(4)
    for field, row, col in [("embeddings", 1, 0), ("w_q", 0, 2), ("w_k", 3, 3), ("w_v", 2, 1), ("w_o", 1, 1)]:
        model = table(window, field)
        assert model.setData(model.index(row, col), "0.25")
        assert engine.model_edits.values(window.controller.model, field)[row, col] == 0.25
        np.testing.assert_array_equal(window.heatmap.image.image, window.controller.trace.heads[0].weights)
    assert window.model_editor.undo_stack.count() == 5


def test_undo_restores_every_view_bit_for_bit_and_redo_reapplies(qtbot, editing_window):
    window = editing_window("cat-sat-on-mat")
    window.controller.update_options(heads=2)
    original = views_state(window)
    w_v = table(window, "w_v")
    assert w_v.setData(w_v.index(5, 6), "0.1")
    emb = table(window, "embeddings")
    cat = list(window.controller.model.vocabulary).index("cat")
    assert emb.setData(emb.index(cat, 5), str(0.1 + 0.2))
    edited = views_state(window)
    assert edited[0] != original[0]
    window.model_editor.undo_action.trigger()
    window.model_editor.undo_action.trigger()
    assert_views_state_equal(views_state(window), original)
    assert not window.isWindowModified()
    window.model_editor.redo_action.trigger()
    window.model_editor.redo_action.trigger()
    assert_views_state_equal(views_state(window), edited)
    assert window.controller.model.vocabulary["cat"][5] == 0.1 + 0.2


def test_undo_and_redo_have_the_usual_shortcuts(editing_window):
    window = editing_window()
    edit_menu = window.menuBar().actions()[1].menu()
    assert window.model_editor.undo_action in edit_menu.actions()
    assert "Ctrl+Z" in [k.toString() for k in window.model_editor.undo_action.shortcuts()]
    assert "Ctrl+Shift+Z" in [k.toString() for k in window.model_editor.redo_action.shortcuts()]
    assert window.model_editor.save_action.shortcut().toString() == "Ctrl+S"
    assert window.model_editor.save_as_action.shortcut().toString() == "Ctrl+Shift+S"


@pytest.mark.parametrize("typed", ["abc", "nan", "inf", "-inf", "1e308", ""])
def test_a_bad_cell_value_is_refused_with_a_message_and_changes_nothing(editing_window, warnings, typed):
    window = editing_window()
    before = views_state(window)
    model = table(window, "w_k")
    assert not model.setData(model.index(0, 0), typed)
    assert len(warnings) == 1 and "The model is unchanged" in warnings[0]
    assert "W_K feature 'animal', column 1" in warnings[0]
    assert_views_state_equal(views_state(window), before)
    assert window.model_editor.undo_stack.count() == 0 and not window.isWindowModified()


def test_typing_text_into_a_cell_shows_one_message_and_keeps_the_number(qtbot, editing_window, warnings):
    window = editing_window()
    type_into_cell(qtbot, window, "w_q", 0, 1, "two")
    assert len(warnings) == 1 and "'two' is not a number" in warnings[0]
    assert window.controller.model.w_q[0, 1] == 2.0
    type_into_cell(qtbot, window, "w_q", 0, 1, "2.0")  # the same number: no edit at all
    assert window.model_editor.undo_stack.count() == 0


def test_an_added_word_is_known_when_typed_in_the_sentence_box(qtbot, editing_window):
    window = editing_window()
    dialog = panel(window).open_add_word_dialog()
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.word, "Dogs")
    dialog.start_from.setCurrentText("cats")
    assert [e.text() for e in dialog.values] == ["1.0", "0.0", "0.0"]
    dialog.values[2].setText("0.5")
    QTest.mouseClick(dialog.ok_button, QtCore.Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    assert list(window.controller.model.vocabulary)[-1] == "dogs"
    embeddings = table(window, "embeddings")
    assert embeddings.headerData(3, QtCore.Qt.Orientation.Vertical) == "dogs"
    assert panel(window).views["embeddings"].currentIndex().row() == 3

    box = window.sentence_box
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "dogs chase mice")
    assert window.controller.trace.tokens == ["dogs", "chase", "mice"]
    assert box.flagged_words() == []
    assert "dogs" in box.completer.model().stringList()
    window.model_editor.undo_action.trigger()
    assert box.flagged_words() == ["dogs"] and "dogs" not in window.controller.model.vocabulary


def test_a_bad_new_word_keeps_the_dialog_open_with_the_reason(qtbot, editing_window):
    window = editing_window()
    dialog = panel(window).open_add_word_dialog()
    dialog.word.setText("mice")
    dialog.accept()
    assert dialog.isVisible() and "already in the vocabulary" in dialog.error.text()
    dialog.word.setText("rats")
    dialog.values[0].setText("nan")
    dialog.accept()
    assert dialog.isVisible() and "not a finite number" in dialog.error.text()
    assert window.model_editor.undo_stack.count() == 0
    dialog.reject()


def test_renaming_a_feature_shows_in_the_editor_and_in_the_saved_file(qtbot, editing_window, monkeypatch, tmp_path):
    window = editing_window()
    monkeypatch.setattr(QtWidgets.QInputDialog, "getText", lambda *a, **k: ("tiny", True))
    view = panel(window).views["embeddings"]
    panel(window).tabs.setCurrentWidget(view)
    header = view.horizontalHeader()
    x = header.sectionViewportPosition(2) + header.sectionSize(2) // 2
    QTest.mouseDClick(header.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(x, header.height() // 2))
    # QTest keeps double-click state that breaks later tests' synthetic hovers; one plain click clears it
    QTest.mouseClick(window.status_line, QtCore.Qt.MouseButton.LeftButton)
    assert window.controller.model.features == ["animal", "action", "tiny"]
    assert table(window, "embeddings").headerData(2, QtCore.Qt.Orientation.Horizontal) == "tiny"
    assert table(window, "w_q").headerData(2, QtCore.Qt.Orientation.Vertical) == "tiny"
    target = tmp_path / "renamed.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.model_editor.save_action.trigger()
    assert json.loads(target.read_text())["features"] == ["animal", "action", "tiny"]


def test_save_then_open_round_trips_the_model_bit_for_bit(editing_window, monkeypatch, tmp_path, answer):
    window = editing_window("cat-sat-on-mat")
    for field, row, col, value in [("w_q", 0, 0, 0.1 + 0.2), ("embeddings", 3, 7, -1e-300), ("w_o", 2, 4, 1e6)]:
        model = table(window, field)
        assert model.setData(model.index(row, col), repr(value))
    window.model_editor.add_word("zebra", ["1", "0", "0", "0", "0", "1", "0", "0"])
    edited = engine.model_to_dict(window.controller.model)
    target = tmp_path / "mine"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.model_editor.save_action.trigger()  # a built-in model is never overwritten: it asks where
    saved = tmp_path / "mine.json"
    assert saved.exists() and not window.isWindowModified()
    assert window.windowTitle().startswith("mine.json")
    assert window.controller.model_source == str(saved)
    assert window.options_bar.model_box.currentText() == "cat-sat-on-mat (mine.json)"

    window.options_bar.model_box.setCurrentIndex(window.options_bar.model_box.findData("it-was-tired"))
    window.options_bar.model_box.activated.emit(window.options_bar.model_box.currentIndex())
    assert answer.asked == [], "nothing unsaved: no question"
    assert window.open_model(str(saved))
    assert engine.model_to_dict(window.controller.model) == edited
    assert window.controller.model.w_q[0, 0] == 0.1 + 0.2


def test_save_writes_to_the_opened_file_without_asking(editing_window, monkeypatch, tmp_path):
    path = tmp_path / "m.json"
    engine.save_model(engine.load_builtin("cats-chase-mice"), path)
    window = editing_window()
    assert window.open_model(str(path))
    model = table(window, "w_v")
    model.setData(model.index(2, 1), "3")
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: pytest.fail("should not ask"))
    window.model_editor.save_action.trigger()
    assert engine.load_model(path).w_v[2, 1] == 3.0


def test_a_failed_save_says_why_and_keeps_the_edits(editing_window, monkeypatch, tmp_path, warnings):
    window = editing_window()
    model = table(window, "w_v")
    model.setData(model.index(2, 1), "3")
    target = tmp_path / "no-such-folder" / "m.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    assert not window.model_editor.save()
    assert "cannot write" in warnings[0] and window.isWindowModified()
    assert window.controller.model.w_v[2, 1] == 3.0


def test_closing_with_unsaved_edits_asks_and_cancel_keeps_them(editing_window, answer):
    window = editing_window()
    model = table(window, "w_q")
    model.setData(model.index(0, 1), "7")
    answer(Buttons.Cancel, Buttons.Discard)
    assert not window.close()
    assert window.isVisible() and window.controller.model.w_q[0, 1] == 7.0 and window.isWindowModified()
    assert "cats-chase-mice has edits that are not saved" in answer.asked[0]
    assert window.close()
    assert len(answer.asked) == 2


def test_switching_models_with_unsaved_edits_asks_first(editing_window, answer):
    window = editing_window()
    model = table(window, "w_q")
    model.setData(model.index(0, 1), "7")
    box = window.options_bar.model_box
    answer(Buttons.Cancel, Buttons.Discard)
    box.setCurrentIndex(box.findData("it-was-tired"))
    box.activated.emit(box.currentIndex())
    assert window.controller.model.name == "cats-chase-mice" and window.controller.model.w_q[0, 1] == 7.0
    assert box.currentData() == "cats-chase-mice", "the box shows the model that is still there"
    box.setCurrentIndex(box.findData("it-was-tired"))
    box.activated.emit(box.currentIndex())
    assert window.controller.model.name == "it-was-tired"
    assert not window.isWindowModified() and window.model_editor.undo_stack.count() == 0
    assert len(answer.asked) == 2


def test_open_model_asks_and_save_saves_before_it_switches(editing_window, answer, monkeypatch, tmp_path):
    window = editing_window()
    model = table(window, "w_q")
    model.setData(model.index(0, 1), "7")
    target = tmp_path / "kept.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    answer(Buttons.Save)
    assert window.open_model("it-was-tired")
    assert engine.load_model(target).w_q[0, 1] == 7.0
    assert window.controller.model.name == "it-was-tired"


def test_reset_asks_then_brings_back_the_built_in_keeping_sentence_and_options(editing_window, answer):
    window = editing_window()
    window.controller.set_sentence("mice chase cats")
    window.controller.update_options(causal=True)
    original = engine.model_to_dict(engine.load_builtin("cats-chase-mice"))
    model = table(window, "embeddings")
    model.setData(model.index(0, 0), "-2")
    answer(Buttons.Cancel, Buttons.Discard)
    window.model_editor.reset_action.trigger()
    assert window.controller.model.vocabulary["cats"][0] == -2.0
    window.model_editor.reset_action.trigger()
    assert engine.model_to_dict(window.controller.model) == original
    assert window.controller.sentence == "mice chase cats" and window.controller.options.causal
    assert table(window, "embeddings").values()[0, 0] == 1.0
    assert window.model_editor.reset_action.text() == "Reset to built-in"


def test_the_dock_is_remembered_across_restarts(qtbot, settings):
    from attention_explorer.app import MainWindow
    from attention_explorer.controller import Controller

    window = MainWindow(Controller(), settings)
    qtbot.addWidget(window)
    window.show()
    window.model_editor_dock.show()
    window.close()
    again = MainWindow(Controller(), settings)
    qtbot.addWidget(again)
    again.show()
    assert again.model_editor_dock.isVisible()
    assert again.model_editor_dock.widget() is not None  # the panel, built when the dock was shown


def test_the_undo_and_redo_arrows_draw_the_same_after_qts_pixmap_cache_lets_them_go(editing_window):
    """The editor's toolbar once scaled the style's 16 px arrows to 24 px, and Qt scales such an icon one
    way the first time and another once its pixmap cache has dropped it: a random walk saw the undo
    arrow's edge change on a repaint, the screen no longer what a full repaint draws."""
    window = editing_window()
    editor = panel(window)
    buttons = [button for button in editor.findChildren(QtWidgets.QToolButton)
               if button.defaultAction() in (window.model_editor.undo_action, window.model_editor.redo_action)]
    assert len(buttons) == 2
    first = [button.grab().toImage() for button in buttons]
    QtGui.QPixmapCache.clear()
    again = [button.grab().toImage() for button in buttons]
    assert first == again
    # the arrows are drawn at the size the style makes them in, not scaled
    small = editor.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_SmallIconSize)
    for button in buttons:
        option = QtWidgets.QStyleOptionToolButton()
        button.initStyleOption(option)
        assert option.iconSize == QtCore.QSize(small, small)
