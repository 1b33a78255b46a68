"""The step timeline on a real Llama layer: the RoPE step's tables, a hovered cell's rotation written out
with its inputs outlined, and the shared key/value head in the title."""

from pathlib import Path

import numpy as np
import pytest

from attention_explorer import controller as controller_module
from attention_explorer.controller import Controller
from attention_explorer.engine.cell_arithmetic import fmt
from attention_explorer.engine.lazy_trace import is_made
from attention_explorer.engine.steps import step_index
from attention_explorer.views.step_timeline import QtStepTimeline

pytest.importorskip("tokenizers")

LLAMA = Path(__file__).parents[1] / "engine" / "pretrained" / "data" / "tiny-llama.gguf"


@pytest.fixture
def timeline(qtbot):
    controller = Controller()
    controller.open_model(str(LLAMA), "the cat sat on the mat")
    controller.set_layer(1)
    controller.set_head(3)
    view = QtStepTimeline(controller)
    qtbot.addWidget(view)
    view.resize(1400, 700)
    view.show()
    return view


def test_the_rope_step_shows_q_and_k_turned_and_writes_a_cell_out(timeline):
    trace = timeline.controller.trace
    head = trace.heads[3]
    timeline.go_to(step_index("rope"))
    title = timeline.panel.title.text()
    assert title.startswith("Step 4 of 11 · Rotary positions") and "query head 4 reads key/value head 2 of 2" in title
    assert list(timeline.panel.inputs()) == ["q_raw", "k_raw", "cos", "sin"]
    assert list(timeline.panel.results()) == ["q", "k"]
    timeline.panel.set_filled(10 ** 6, follow=False)  # every cell shown, as after the fill-in
    # the K table lies right of the window's width here, where no mouse reaches: hover it through the panel
    timeline.panel.hover_cell(("k", 2, 5))  # dimension 5 turns with 1 (d_head 8)
    a = trace.labels[2]
    text = timeline.panel.arithmetic_text()
    assert text.startswith(f"k'_{a}[5] = k_{a}[5]·cos θ + k_{a}[1]·sin θ = ")
    assert text.endswith(f" = {fmt(head.k[2, 5])}")
    marks = {key: table.matrix_model.marks() for key, table in timeline.panel.inputs().items()}
    assert marks == {"q_raw": (), "k_raw": ((2, 5), (2, 1)), "cos": ((2, 5),), "sin": ((2, 5),)}


def test_the_kv_step_names_the_shared_head_and_a_toy_model_skips_rope(timeline):
    timeline.go_to(step_index("kv"))
    assert "query head 4 reads key/value head 2 of 2" in timeline.panel.title.text()
    titles = [table.matrix_model.table.title for table in timeline.panel.results().values()]
    assert titles == ["K (key/value head 2, shared)", "V (key/value head 2, shared)"]
    timeline.controller.open_model("cats-chase-mice")
    assert timeline.strip.button(step_index("rope")).property("skipped")


def test_hidden_tables_let_go_of_a_closed_real_model(timeline):
    """The steps drew a real model's layer, then were put away and a toy model chosen: nothing may keep
    the real model's weights (the hidden tables held its layer, and through it 590 MB of SmolLM2)."""
    import gc
    import weakref

    controller = timeline.controller
    weights = weakref.ref(controller.pretrained_trace.model)
    timeline.hide()
    controller.open_model("cat-sat-on-mat")
    assert not controller.is_real
    gc.collect()
    assert weights() is None
    timeline.show()  # drawn again for the model now open
    assert timeline.controller.step_trace.model_name == "cat-sat-on-mat"


@pytest.mark.parametrize(("folder", "layers"), [
    ("tiny-gemma2", {0: "Causal and window mask: −∞ after the diagonal and before the sliding window",
                     1: "Causal mask: −∞ after the diagonal"}),
    ("tiny-modernbert", {1: "Window mask: −∞ outside each word's sliding window"}),
])
def test_the_mask_step_is_titled_by_the_mask_the_layer_has(qtbot, folder, layers):
    """Gemma 2's local layers hide keys too far back as well as later ones; ModernBERT's local layers
    hide keys too far either way: the step's title, explanation, formula and button say so, layer by layer."""
    controller = Controller()
    controller.open_model(str(LLAMA.parent / folder), "the cat sat on the mat because it was tired and cold")
    view = QtStepTimeline(controller)
    qtbot.addWidget(view)
    view.resize(1400, 700)
    view.show()
    view.go_to(step_index("masked"))
    for layer, title in layers.items():
        controller.set_layer(layer)
        assert f"· {title}" in view.panel.title.text()
        assert view.strip.button(step_index("masked")).toolTip() == title
        assert ("window" in view.panel.arithmetic_label.text()) == ("window" in title)  # the rule: no cell hovered
        explanation = view.panel.explanation.text()
        assert ("sliding window" in explanation) == ("window" in title)
        assert ("decoder" in explanation) == ("Causal" in title)  # an encoder's window says nothing of decoders


def test_leaving_a_step_lets_go_of_the_long_text_matrices_it_made_and_they_come_back_the_same(timeline,
                                                                                             monkeypatch):
    """At 8,192 tokens each head's scores, scaled and masked scores are 268 MB apiece: stepping through
    them kept every one. A step now makes those it shows and the next lets them go."""
    monkeypatch.setattr(controller_module, "LONG_TEXT_TOKENS", 1)  # this text stands for a long one
    c = timeline.controller
    timeline.go_to(step_index("scores"))
    head = c.trace.heads[3]
    assert is_made(head, "scores")
    scores = head.scores.copy()
    shown = timeline.panel.results()["scores"].matrix_model.table.values
    np.testing.assert_array_equal(shown, scores)
    for _ in range(3):  # to scaled (its tables read the scores), masked, softmax
        timeline.forward_button.click()
    assert timeline.controller.step == step_index("softmax")
    assert not is_made(head, "scores") and not is_made(head, "scaled") and is_made(head, "weights")
    timeline.go_to(step_index("scores"))
    np.testing.assert_array_equal(timeline.panel.results()["scores"].matrix_model.table.values, scores)
