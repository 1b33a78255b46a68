"""Thumbnails: every head's weights pooled to at most THUMB_PX a side, the largest weight of each block,
the same whether pooled whole or block of rows by block of rows as the forward does."""

import numpy as np
import pytest

from attention_explorer.engine.pretrained.thumbnails import THUMB_PX, pool_rows_into, pooled, thumb_size, thumb_step


def _reference(weights: np.ndarray) -> np.ndarray:
    n = weights.shape[-1]
    step = thumb_step(n)
    size = -(-n // step)
    padded = np.zeros((*weights.shape[:-2], size * step, size * step), dtype=weights.dtype)
    padded[..., :n, :n] = weights
    return padded.reshape(*weights.shape[:-2], size, step, size, step).max(axis=(-3, -1))


@pytest.mark.parametrize("n", [1, 5, THUMB_PX, THUMB_PX + 1, 500, 1943])
def test_each_pixel_is_the_largest_weight_of_its_block(n):
    weights = np.random.default_rng(n).random((2, n, n)).astype(np.float32)
    assert thumb_size(n) <= THUMB_PX
    np.testing.assert_array_equal(pooled(weights), _reference(weights))


def test_pooled_block_by_block_as_the_forward_goes_is_the_same_picture():
    n = 700
    weights = np.tril(np.random.default_rng(0).random((3, n, n))).astype(np.float32)  # causal: zeros beyond
    step = thumb_step(n)
    thumb = np.zeros((3, thumb_size(n), thumb_size(n)), dtype=np.float32)
    rows = 4 * step
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        pool_rows_into(thumb, weights[:, start:stop, :stop], start, step)  # a decoder's block: keys up to its end
    np.testing.assert_array_equal(thumb, _reference(weights))
