"""A model's layers made from the file when they are computed, a few kept made.

When the weights are kept as the file stores them (bf16 or f16 numbers, GGUF blocks: see
weights.choose_mode), a layer's matrices become float32, laid out as the products want
(LayerWeights), only when something computes that layer: the forward, a view's recomputation of one
layer (recompute.py), a generation's step, an ablation's rerun, the census. The last few layers made
are kept, so a view that recomputes the layer it shows, or one beside it, does not convert it again;
a forward through every layer converts each once (a generation, each step), which is what keeping
the weights stored costs in time for holding the model in about its file's size.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from .weights import LayerWeights

KEPT_LAYERS = 2  # layers kept made: the one a view shows and the one it showed before


class StoredLayers(Sequence):
    """Layers 0 … count − 1, each made by `make(index)` when it is read and not kept; safe to read
    from two threads (the window's worker runs the forward while a view recomputes a layer).
    `conversions` and `conversion_seconds` count what making them has cost so far."""

    def __init__(self, count: int, make: Callable[[int], LayerWeights], kept: int = KEPT_LAYERS):
        self._count, self._make, self._kept = count, make, kept
        self._made: OrderedDict[int, LayerWeights] = OrderedDict()
        self._lock = threading.Lock()
        self.conversions = 0
        self.conversion_seconds = 0.0

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError(f"layer {index} of {self._count}")
        index %= self._count
        with self._lock:
            if index in self._made:
                self._made.move_to_end(index)
                return self._made[index]
            while len(self._made) >= self._kept:  # room first: the layer it replaces is not held while made
                self._made.popitem(last=False)
            start = time.perf_counter()
            layer = self._make(index)
            self.conversion_seconds += time.perf_counter() - start
            self.conversions += 1
            self._made[index] = layer
            return layer
