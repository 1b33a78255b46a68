"""The keys and values of every token a decoder has read, per layer, so the next token reads them
instead of making them again (a step costs one token's work, not the whole text's).

One float32 block per kind, (layers, kv_heads, capacity, d_head): grouped key/value heads are kept
once, as the model computes them, and the query heads of a group read the same rows. Each layer's
rows are a view of the block, with no copy made. The capacity grows by doubling, so a long
generation copies each row a bounded number of times, never once per step.

A cache made with `inputs=True` also keeps the residual stream entering each layer, (layers,
capacity, d_model): what a real-model trace of the text so far is made from (generation_trace.py),
so the window can show a generation's text without running it through the model again.
"""

from __future__ import annotations

import numpy as np

from .weights import Architecture


class KVCache:
    def __init__(self, arch: Architecture, capacity: int, most: int, inputs: bool = False):
        """Room for `capacity` tokens at first, never more than `most` (the model's context)."""
        self.most = most
        capacity = min(capacity, most)
        self.keys = self._block(arch, capacity)
        self.values = self._block(arch, capacity)
        self.inputs = np.empty((arch.n_layers, capacity, arch.d_model), dtype=np.float32) if inputs else None

    @property
    def capacity(self) -> int:
        return self.keys.shape[2]

    def reserve(self, length: int) -> None:
        """Room for `length` tokens, doubling what there is (up to the context) when it is short. The
        blocks are replaced, not resized: a view of the old one (a trace of the text so far) stays valid."""
        if length <= self.capacity:
            return
        larger = min(max(length, 2 * self.capacity), self.most)
        for name, axis in (("keys", 2), ("values", 2), ("inputs", 1)):
            old = getattr(self, name)
            if old is None:
                continue
            shape = list(old.shape)
            shape[axis] = larger
            new = np.empty(shape, dtype=np.float32)
            new[(slice(None),) * axis + (slice(0, old.shape[axis]),)] = old
            setattr(self, name, new)

    def let_go_of_keys_and_values(self) -> None:
        """Nothing more will be read after this cache's tokens: keep only the layer inputs (what a text
        so far is made from). SmolLM2's keys and values of 1,000 tokens are 46 MB."""
        self.keys = self.values = None

    def write(self, layer: int, start: int, k: np.ndarray, v: np.ndarray) -> None:
        """The keys and values (kv_heads, tokens, d_head) of tokens start, start + 1, … in `layer`."""
        stop = start + k.shape[1]
        self.keys[layer, :, start:stop] = k
        self.values[layer, :, start:stop] = v

    def read(self, layer: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """The keys and values of the first `stop` tokens in `layer`: views, (kv_heads, stop, d_head)."""
        return self.keys[layer, :, :stop], self.values[layer, :, :stop]

    def write_input(self, layer: int, start: int, h: np.ndarray) -> None:
        """The residual stream (tokens, d_model) entering `layer` at tokens start, start + 1, …"""
        self.inputs[layer, start:start + h.shape[0]] = h

    def write_inputs(self, token: int, rows: np.ndarray) -> None:
        """The residual stream entering every layer at `token`, (layers, d_model): a generated token's,
        written once it is read (an array write a layer had been ~9 µs of a step's 44 ms each)."""
        self.inputs[:, token] = rows

    def layer_inputs(self, stop: int) -> list[np.ndarray]:
        """The residual stream entering each layer for the first `stop` tokens: views, each stop × d_model."""
        return list(self.inputs[:, :stop])

    @staticmethod
    def _block(arch: Architecture, capacity: int) -> np.ndarray:
        return np.empty((arch.n_layers, arch.n_kv_heads, capacity, arch.d_head), dtype=np.float32)
