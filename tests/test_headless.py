"""Headless rendering leaves no Qt object behind for the interpreter's shutdown to tear down (where a
half-destroyed view once crashed the finished export with a segmentation fault)."""

import shiboken6

from attention_explorer import engine
from attention_explorer.headless import offscreen_view


def test_the_view_and_its_controller_are_destroyed_when_the_export_ends(qapp):
    model = engine.load_builtin("cats-chase-mice")
    for name in ("heatmap", "arcs", "steps"):
        with offscreen_view(model, model.default_sentence, model.default_options, view=name, matrix="weights",
                            head=0) as view:
            controller = view.controller
            assert view.isVisible() and controller.trace.tokens == ["cats", "chase", "mice"]
        assert not shiboken6.isValid(view), f"the {name} view outlived its export"
        assert not shiboken6.isValid(controller), f"the {name} view's controller outlived its export"


def test_the_arcs_draw_every_head_unless_one_is_chosen(qapp):
    model = engine.load_builtin("cat-sat-on-mat")
    heads = len(engine.run(model, model.default_sentence, model.default_options).heads)
    assert heads > 1
    with offscreen_view(model, model.default_sentence, model.default_options, view="arcs", matrix="weights",
                        head=None) as view:
        assert view.heads_shown() == list(range(heads))  # as the window opens: every head
    with offscreen_view(model, model.default_sentence, model.default_options, view="arcs", matrix="weights",
                        head=1) as view:
        assert view.heads_shown() == [1]  # `export --view arcs --head 2`: that head alone
        assert {head for head, *_ in view.drawn_arcs()} == {1}
