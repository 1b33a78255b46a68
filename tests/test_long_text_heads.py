"""What a real model's text keeps of its heads: the shown head's matrices, not those of a head only
asked about."""

from pathlib import Path

import numpy as np
import pytest

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
