"""The keys and values of every token a decoder has read, per layer, so the next token reads them
instead of making them again (a step costs one token's work, not the whole text's).

One float32 block per kind, (layers, kv_heads, capacity, d_head): grouped key/value heads are kept
once, as the model computes them, and the query heads of a group read the same rows. Each layer's
rows are a view of the block, with no copy made. The capacity grows by doubling, so a long
generation copies each row a bounded number of times, never once per step.
"""

from __future__ import annotations

import numpy as np

from .weights import Architecture


class KVCache:
    def __init__(self, arch: Architecture, capacity: int, most: int):
        """Room for `capacity` tokens at first, never more than `most` (the model's context)."""
        self.most = most
        self.keys = self._block(arch, min(capacity, most))
        self.values = self._block(arch, min(capacity, most))

    @property
    def capacity(self) -> int:
        return self.keys.shape[2]

    def reserve(self, length: int) -> None:
        """Room for `length` tokens, doubling what there is (up to the context) when it is short."""
        if length <= self.capacity:
            return
        larger = min(max(length, 2 * self.capacity), self.most)
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = np.empty((*old.shape[:2], larger, old.shape[3]), dtype=np.float32)
            new[:, :, :old.shape[2]] = old
            setattr(self, name, new)

    def write(self, layer: int, start: int, k: np.ndarray, v: np.ndarray) -> None:
        """The keys and values (kv_heads, tokens, d_head) of tokens start, start + 1, … in `layer`."""
        stop = start + k.shape[1]
        self.keys[layer, :, start:stop] = k
        self.values[layer, :, start:stop] = v

    def read(self, layer: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """The keys and values of the first `stop` tokens in `layer`: views, (kv_heads, stop, d_head)."""
        return self.keys[layer, :, :stop], self.values[layer, :, :stop]

    @staticmethod
    def _block(arch: Architecture, capacity: int) -> np.ndarray:
        return np.empty((arch.n_layers, arch.n_kv_heads, capacity, arch.d_head), dtype=np.float32)
