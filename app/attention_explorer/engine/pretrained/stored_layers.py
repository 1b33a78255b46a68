"""A model's layers made from the file when they are computed, a few kept made, the next one made ahead.

When the weights are kept as the file stores them (bf16 or f16 numbers, GGUF blocks: see
weights.choose_mode), a layer's matrices become float32, laid out as the products want
(LayerWeights), only when something computes that layer: the forward, a view's recomputation of one
layer (recompute.py), a generation's step, an ablation's rerun, the census. The last few layers made
are kept, so a view that recomputes the layer it shows, or one beside it, does not convert it again.

A forward through every layer converts each once (a generation, each step): what keeping the weights
stored costs in time for holding the model in about its file's size. When layers are read one after
the other, the next one is made on a thread of its own while the reader computes with this one, so
that the conversion (copies, which leave the interpreter free) runs beside the products (one BLAS
thread, model.py) instead of before them. One layer is made at a time, so at most KEPT_LAYERS + 1
are held converted.

A model whose weights were converted at open, while it fits the memory free (weights.choose_mode's
"auto"), holds its layers here too, every one made and kept (`made`): as fast as a list of them. A
long text's layer inputs outgrow its layers (SmolLM2 at 8,192 tokens: 540 MiB of inputs, 404 MiB of
layers, and an ablation holds two sets of inputs), so for one it keeps only a few made (`hold_all`),
at the cost of converting each layer again when it is computed (~17 ms against a forward of ~50 s);
the layers are kept again as they are made once the texts are short.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from .weights import LayerWeights

KEPT_LAYERS = 2  # layers kept made: the one a view shows and the one it showed before


class _Ahead:
    """A layer being made on a thread of its own: its index, and once done, the layer or the error."""

    def __init__(self, index: int, make: Callable[[int], LayerWeights], spent: Callable[[float], None]):
        self.index, self.layer, self.error = index, None, None
        self._thread = threading.Thread(target=self._run, args=(make, spent), daemon=True,
                                        name=f"layer {index} ahead")
        self._thread.start()

    def _run(self, make: Callable[[int], LayerWeights], spent: Callable[[float], None]) -> None:
        start = time.perf_counter()
        try:
            self.layer = make(self.index)
        except BaseException as error:  # noqa: BLE001 - handed to the reader of this layer
            self.error = error
        spent(time.perf_counter() - start)

    def wait(self) -> LayerWeights:
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.layer


class StoredLayers(Sequence):
    """Layers 0 … count − 1, each made by `make(index)` when it is read and not kept; safe to read
    from two threads (the window's worker runs the forward while a view recomputes a layer).
    `conversions` and `conversion_seconds` count what making them has cost so far (on any thread),
    `waited_seconds` how long the readers waited for them. `made`: every layer, made already (a model
    converted at open), kept until `hold_all(False)`."""

    def __init__(self, count: int, make: Callable[[int], LayerWeights], kept: int = KEPT_LAYERS,
                 made: Sequence[LayerWeights] | None = None):
        self._count, self._make, self._kept = count, make, kept
        self._made: OrderedDict[int, LayerWeights] = OrderedDict()
        self.can_hold_all = made is not None
        self._every = made is not None  # every layer kept as it is made (hold_all)
        if made is not None:
            self._kept = count
            self._made.update(enumerate(made))
        self._lock = threading.Lock()
        self._ahead: _Ahead | None = None
        self._last = -1  # the layer read last, to see reads one after the other
        self.conversions = 0
        self.conversion_seconds = 0.0
        self.waited_seconds = 0.0

    def hold_all(self, every_layer: bool) -> None:
        """Keep every layer made as it is read (every_layer), or only KEPT_LAYERS of them, letting the
        others go now; only for layers that were all made at open (can_hold_all): kept stored, a
        model holds a few, whatever it is told."""
        if not self.can_hold_all:
            return
        with self._lock:
            self._every = every_layer
            self._kept = self._count if every_layer else KEPT_LAYERS
            while len(self._made) > self._kept:
                self._made.popitem(last=False)

    @property
    def holds_all(self) -> bool:
        return self._every

    @property
    def held(self) -> int:
        """How many layers are made and kept now."""
        with self._lock:
            return len(self._made)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> LayerWeights:
        if not -self._count <= index < self._count:
            raise IndexError(f"layer {index} of {self._count}")
        index %= self._count
        with self._lock:
            start = time.perf_counter()
            layer = self._take(index)
            self.waited_seconds += time.perf_counter() - start
            following = index + 1  # read on when reading from the first layer or one after another
            if (index == 0 or index == self._last + 1) and following < self._count \
                    and following not in self._made and self._ahead is None:
                self._ahead = _Ahead(following, self._make, self._spent)
            self._last = index
            return layer

    def _take(self, index: int) -> LayerWeights:
        """Layer `index`: kept, being made ahead, or made now (once the one ahead is done: the file is
        read by one thread at a time)."""
        if index in self._made:
            self._made.move_to_end(index)
            return self._made[index]
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            try:
                made = ahead.wait()
            except BaseException:
                if ahead.index == index:
                    raise
            else:
                self._keep(ahead.index, made)
                if ahead.index == index:
                    return made
        self._keep(index, None)  # room first: the layer it replaces is not held while this one is made
        start = time.perf_counter()
        layer = self._make(index)
        self._spent(time.perf_counter() - start)
        self._keep(index, layer)
        return layer

    def _keep(self, index: int, layer: LayerWeights | None) -> None:
        """Keep `layer` as layer `index` (None: only make room for it), letting the oldest go."""
        while len(self._made) >= self._kept:
            self._made.popitem(last=False)
        if layer is not None:
            self._made[index] = layer

    def _spent(self, seconds: float) -> None:
        self.conversions += 1
        self.conversion_seconds += seconds
