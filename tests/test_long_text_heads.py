"""What a real model's long text keeps of its heads: the shown head's matrices, not every head looked at
or asked about, and not the trace a forward replaced while the views hear of the new one."""

import weakref
from pathlib import Path

import numpy as np
import pytest

from attention_explorer import controller as controller_module
from attention_explorer.controller import Controller
from attention_explorer.engine.lazy_trace import is_made

pytest.importorskip("tokenizers")

LLAMA = Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-llama.gguf"
TEXT = "the cat sat on the mat because it was tired"


@pytest.fixture
def controller(qtbot):
    controller = Controller()
    controller.open_model(str(LLAMA), TEXT)
    return controller


def made(head) -> list[str]:
    return [name for name in ("weights", "scores", "scaled", "masked", "output") if is_made(head, name)]


def read(head) -> np.ndarray:
    """A head's weights, as a view reads them (made on first read)."""
    return head.weights


def test_a_layer_shown_makes_the_shown_head_s_weights_only(controller):
    """The controller asked head 0 whether the layer has the matrix shown: head 0's weights were made
    and kept beside the shown head's on every layer, text and forward."""
    controller.set_head(3)
    controller.set_layer(1)
    read(controller.trace.heads[3])  # what the heatmap reads
    assert [made(head) for head in controller.trace.heads[:3]] == [[], [], []]
    assert controller.matrix_available("weights")
    assert [made(head) for head in controller.trace.heads[:3]] == [[], [], []]


def test_switching_heads_on_a_long_text_lets_the_last_head_s_matrices_go_and_they_come_back_the_same(
        controller, monkeypatch):
    """Clicking through a 2,048-token layer's heads kept every head's weights and scores (32 MB a head)."""
    monkeypatch.setattr(controller_module, "LONG_TEXT_TOKENS", 1)  # this text stands for a long one
    controller.set_head(1)
    head = controller.trace.heads[1]
    weights, masked = head.weights.copy(), head.masked.copy()
    controller.set_head(2)
    read(controller.trace.heads[2])
    assert made(head) == [] and made(controller.trace.heads[2]) == ["weights"]
    controller.set_head(1)
    np.testing.assert_array_equal(head.weights, weights)
    np.testing.assert_array_equal(head.masked, masked)


def test_a_reading_s_own_layer_lets_the_other_heads_go_too(controller, monkeypatch):
    monkeypatch.setattr(controller_module, "LONG_TEXT_TOKENS", 1)
    controller.update_real_view(merge_words=True)
    controller.set_head(1)
    read(controller.trace.heads[1])
    source = controller.trace.reading.source
    assert is_made(source.heads[1], "weights")
    controller.set_head(2)
    assert made(controller.trace.heads[1]) == [] and made(source.heads[1]) == []


def test_a_short_text_keeps_the_heads_it_made(controller):
    controller.set_head(1)
    head = controller.trace.heads[1]
    read(head)
    controller.set_head(2)
    assert made(head) == ["weights"]


def test_the_trace_a_forward_replaced_is_gone_when_the_views_hear_of_the_new_one(controller):
    """The views make the new trace's matrices when they hear of it; the old one's layer inputs, still
    held by the controller then, had set the window's peak beside the new forward's (SmolLM2, 2,048
    tokens: 135 MiB)."""
    old = weakref.ref(controller.pretrained_trace.forward_result)
    heard = []
    controller.pretrained_trace_changed.connect(lambda _trace: heard.append(old() is None))
    controller.toggle_ablated(1, 1)
    assert heard == [True]
