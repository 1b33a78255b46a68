"""The Lessons menu opens a non-modal window on the chosen lesson; only a lesson on screen recomputes."""

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.labs.lesson_list import LESSONS
from attention_explorer.labs.lessons_window import QtLessonsWindow


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    main = MainWindow(Controller(engine.load_builtin("cat-sat-on-mat")), settings)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    yield main
    if main.lessons_window is not None:  # its own top-level window: close it too, or it lingers over later tests
        main.lessons_window.close()


def test_the_lessons_menu_sits_between_view_and_help(window):
    titles = [action.text() for action in window.menuBar().actions()]
    assert titles.index("&Lessons") == titles.index("&View") + 1 == titles.index("&Help") - 1
    menu = window.menuBar().actions()[titles.index("&Lessons")].menu()
    assert [a.text() for a in menu.actions()] == [title for _, title in LESSONS]
    assert len(LESSONS) == 9


def test_each_action_opens_the_window_on_its_lesson(qtbot, window):
    assert window.lessons_window is None  # not built until asked for
    for key, _title in LESSONS:
        window.lesson_actions[key].trigger()
        lessons = window.lessons_window
        qtbot.waitExposed(lessons)
        assert lessons.isVisible() and not lessons.isModal()
        assert lessons.current_key() == key
        assert lessons.current_panel().controller is window.controller
        assert not lessons.current_panel().is_stale()


def test_a_hidden_lessons_window_does_no_work_while_the_user_types(qtbot, window):
    window.show_lesson("masking")
    lessons = window.lessons_window
    qtbot.waitExposed(lessons)
    counts = {key: panel.refresh_count for key, panel in lessons.panels.items()}
    lessons.hide()
    for text in ("the dog", "the dog sat", "the dog sat on the mat"):
        window.controller.set_sentence(text)
    assert {key: panel.refresh_count for key, panel in lessons.panels.items()} == counts
    window.show_lesson("masking")
    qtbot.waitExposed(lessons)
    masking = lessons.panels["masking"]
    assert masking.refresh_count == counts["masking"] + 1
    assert masking.decoder_scores.row_labels() == ["the₁", "dog", "sat", "on", "the₂", "mat"]


def test_only_the_lesson_on_screen_follows_live_and_the_others_catch_up(qtbot, window):
    window.show_lesson("two_matrices")
    lessons = window.lessons_window
    qtbot.waitExposed(lessons)
    two, cross = lessons.panels["two_matrices"], lessons.panels["cross"]
    cross_count = cross.refresh_count
    window.controller.set_sentence("my dog chased a ball")
    assert two.before_map.row_labels() == ["my", "dog", "chased", "a", "ball"]  # live
    assert cross.refresh_count == cross_count and cross.is_stale()             # waits
    window.show_lesson("cross")
    QtWidgets.QApplication.processEvents()
    assert cross.weights_map.shown_matrix().shape[0] == 5


def test_a_new_model_reaches_the_open_lesson(qtbot, window):
    window.show_lesson("heads")
    lessons = window.lessons_window
    qtbot.waitExposed(lessons)
    window.controller.open_model("cat-ate-fish")
    heads = lessons.panels["heads"]
    assert len(heads.head_maps) == 2
    np.testing.assert_array_equal(heads.head_maps[1].shown_matrix(), window.controller.trace.heads[1].weights)


def test_the_window_can_stand_alone(qtbot):
    lessons = QtLessonsWindow(Controller())
    qtbot.addWidget(lessons)
    lessons.show_lesson("cost")
    assert lessons.tabs.tabText(lessons.tabs.currentIndex()) == "Cost"


def test_an_empty_sentence_leaves_only_the_message_in_a_lesson(qtbot, window):
    window.show_lesson("masking")
    masking = window.lessons_window.panels["masking"]
    qtbot.waitExposed(window.lessons_window)
    window.controller.set_sentence("")
    assert masking.error_line.isVisible() and "empty" in masking.error_line.text()
    assert not masking.content.isVisible()  # no drawing of a sentence that is gone
    window.controller.set_sentence("the cat sat")
    assert not masking.error_line.isVisible() and masking.content.isVisible()
    assert masking.decoder_scores.row_labels() == ["the", "cat", "sat"]


def test_a_lesson_that_needs_no_sentence_keeps_working_without_one(qtbot, window):
    window.show_lesson("scaling")
    scaling = window.lessons_window.panels["scaling"]
    qtbot.waitExposed(window.lessons_window)
    window.controller.set_sentence("")
    assert scaling.content.isVisible()
