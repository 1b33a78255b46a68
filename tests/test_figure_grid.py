"""The grid of every layer of a real model: each panel masked as its own layer is (Gemma 2, Gemma 3 and
ModernBERT have sliding windows in some layers only)."""

import numpy as np
import pytest

from attention_explorer.controller import Controller
from attention_explorer.figure_controller import capture_state
from attention_explorer.figure_grid import grid_matrices
from attention_explorer.headless import destroy_now

DATA = "tests/engine/pretrained/data/"
TEXT = "the cat sat on the mat because it was tired"


def _layers(folder: str):
    pytest.importorskip("tokenizers")
    controller = Controller()
    controller.open_model(DATA + folder, TEXT)
    matrices, _, _, masks = grid_matrices(controller, capture_state(controller, "heatmap", grid="layers"))
    destroy_now(controller)
    return matrices, masks


def test_each_layer_s_panel_carries_its_own_layer_s_mask(qapp):
    """Gemma 3's tiny layers: sliding (4 tokens back), global, sliding."""
    matrices, masks = _layers("tiny-gemma3")
    i, j = np.indices(masks[0].shape)
    for mask, outside in zip(masks, [(j > i) | (j <= i - 4), j > i, (j > i) | (j <= i - 4)], strict=True):
        np.testing.assert_array_equal(mask, outside)
    assert all((matrix[mask] == 0).all() for matrix, mask in zip(matrices, masks, strict=True))


def test_an_encoder_s_local_layer_alone_is_masked_in_the_grid(qapp):
    """ModernBERT's tiny layers: global, local (2 tokens either way), global."""
    matrices, masks = _layers("tiny-modernbert")
    assert masks[0] is None and masks[2] is None and (matrices[0] > 0).all()
    i, j = np.indices(masks[1].shape)
    np.testing.assert_array_equal(masks[1], np.abs(i - j) > 2)
    assert (matrices[1][masks[1]] == 0).all()
