"""The controller's one focus: a word and its role (looking or looked at), hovered over pinned."""

import pytest

from attention_explorer import engine
from attention_explorer.controller import LOOKED_AT, LOOKING, Controller


def make_controller(sentence="the cat sat on the mat"):
    return Controller(engine.load_builtin("cat-sat-on-mat"), sentence)


def test_hover_sets_focus_and_role_and_defaults_to_looking(qtbot):
    controller = make_controller()
    with qtbot.waitSignal(controller.focus_changed) as blocker:
        controller.set_hovered(2, LOOKED_AT)
    assert blocker.args == [2]
    assert (controller.focus, controller.focus_role) == (2, LOOKED_AT)
    controller.set_hovered(3)
    assert (controller.focus, controller.focus_role) == (3, LOOKING)


def test_a_change_of_role_alone_is_announced_and_a_repeat_is_not(qtbot):
    controller = make_controller()
    controller.set_hovered(2, LOOKING)
    with qtbot.waitSignal(controller.focus_changed) as blocker:
        controller.set_hovered(2, LOOKED_AT)
    assert blocker.args == [2]
    with qtbot.assertNotEmitted(controller.focus_changed):
        controller.set_hovered(2, LOOKED_AT)


def test_hovered_word_wins_over_pinned_and_pinned_role_returns_when_mouse_leaves(qtbot):
    controller = make_controller()
    controller.set_pinned(1, LOOKED_AT)
    controller.set_hovered(4, LOOKING)
    assert (controller.focus, controller.focus_role) == (4, LOOKING)
    with qtbot.waitSignal(controller.focus_changed) as blocker:
        controller.set_hovered(None)
    assert blocker.args == [1]
    assert controller.focus_role == LOOKED_AT


def test_toggle_pinned_unpins_in_the_same_role_and_switches_in_the_other():
    controller = make_controller()
    controller.toggle_pinned(2)
    assert (controller.pinned, controller.focus_role) == (2, LOOKING)
    controller.toggle_pinned(2, LOOKED_AT)
    assert (controller.pinned, controller.focus_role) == (2, LOOKED_AT)
    controller.toggle_pinned(2, LOOKED_AT)
    assert controller.pinned is None
    assert controller.focus is None and controller.focus_role == LOOKING


def test_a_shrinking_sentence_drops_a_hovered_index_past_the_last_word(qtbot):
    controller = make_controller()
    controller.set_hovered(5, LOOKED_AT)
    controller.set_pinned(4)
    seen = []
    controller.focus_changed.connect(seen.append)
    controller.set_sentence("the cat sat")
    assert seen[-1] is None
    assert (controller.hovered, controller.pinned, controller.focus) == (None, None, None)


def test_an_index_past_the_last_word_is_never_held():
    controller = make_controller("the cat sat")
    controller.set_hovered(3)
    controller.set_pinned(7)
    assert (controller.hovered, controller.pinned) == (None, None)


def test_an_unknown_role_is_refused():
    controller = make_controller()
    with pytest.raises(ValueError, match="looking"):
        controller.set_hovered(1, "sideways")
