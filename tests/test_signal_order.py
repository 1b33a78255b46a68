"""Found by the random walk: views read the controller's state in their slots, so every signal must
come when the state is whole. A shrinking sentence or a new model drops the hovered and pinned words
first, announces the trace, and only then the focus, head and step that fit it."""

from attention_explorer import engine
from attention_explorer.controller import Controller


def _record(controller: Controller) -> list:
    seen = []
    n = lambda: controller.trace.n if controller.trace else 0  # noqa: E731 - read at emit time
    controller.trace_changed.connect(lambda trace: seen.append(("trace", n())))
    controller.focus_changed.connect(lambda focus: seen.append(("focus", focus, n(), controller.words)))
    controller.head_changed.connect(lambda head: seen.append(("head", head, len(controller.trace.heads))))
    controller.model_changed.connect(lambda model: seen.append(("model", [w.text for w in controller.words])))
    return seen


def test_a_pinned_word_past_the_end_is_never_the_focus():
    controller = Controller(engine.load_builtin("cat-sat-on-mat"), "the cat sat on the mat")
    controller.set_pinned(5)
    controller.set_hovered(4)
    seen = _record(controller)
    controller.set_sentence("the cat")
    assert seen[0] == ("trace", 2)
    focus_events = [event for event in seen if event[0] == "focus"]
    assert [event[1] for event in focus_events] == [None], "one focus change, straight to none"
    assert controller.hovered is None and controller.pinned is None


def test_fewer_heads_are_announced_after_the_trace_that_has_them():
    controller = Controller(engine.load_builtin("cat-sat-on-mat"))
    controller.update_options(heads=2)
    controller.set_head(1)
    seen = _record(controller)
    controller.update_options(heads=1)
    assert seen[0] == ("trace", controller.trace.n)
    assert ("head", 0, 1) in seen


def test_a_new_model_comes_with_the_words_of_its_sentence():
    controller = Controller(engine.load_builtin("cat-sat-on-mat"), "the cat sat")
    seen = _record(controller)
    controller.open_model("cats-chase-mice")
    words = seen[0][1]
    assert words == engine.load_builtin("cats-chase-mice").default_sentence.split()
