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


def test_an_encoder_decoder_s_grid_reads_every_layer_as_the_window_reads_the_one_shown(qapp):
    """BART's cross-attention with Words and Hide specials on: every layer's panel merges the target's and
    the source's words and leaves out their specials, worked out with plain loops from the engine's run."""
    pytest.importorskip("tokenizers")
    from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder
    from reading_oracle import hidden, merged, not_special, words_of

    target = "unbelievably, the cats were tired"
    controller = Controller()
    controller.open_model(DATA + "tiny-bart", TEXT, target=target, part="cross")
    controller.update_real_view(merge_words=True, hide_specials=True)
    matrices, _titles, _labels, _masks = grid_matrices(controller, capture_state(controller, "heatmap", grid="layers"))
    destroy_now(controller)
    run = open_encoder_decoder(DATA + "tiny-bart").run(TEXT, target)
    rows, cols = list(run.target_labels), list(run.source.labels)
    keep_rows, keep_cols = not_special(rows), not_special(cols)
    for layer, matrix in enumerate(matrices):
        kept = hidden(run.cross_attention[layer, 0], keep_rows, keep_cols)
        expected = merged(kept, words_of([rows[i] for i in keep_rows]), words_of([cols[i] for i in keep_cols]))
        np.testing.assert_allclose(matrix, expected, atol=1e-6)
