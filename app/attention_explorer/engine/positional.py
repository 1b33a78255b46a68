"""The sinusoidal positional encoding of "Attention Is All You Need" (section 3.5)."""

from __future__ import annotations

import numpy as np


def sinusoidal_encoding(n_positions: int, d_model: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).

    Works for odd d_model too (the last column is then a sine). Shape: positions × d_model.
    """
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    pair_index = np.arange(d_model) // 2  # i for both columns 2i and 2i+1
    angles = positions / np.power(10000.0, 2.0 * pair_index / d_model)
    encoding = np.empty((n_positions, d_model), dtype=np.float64)
    encoding[:, 0::2] = np.sin(angles[:, 0::2])
    encoding[:, 1::2] = np.cos(angles[:, 1::2])
    return encoding
