"""A layer made again from the residual stream that entered it: its q, k, v, its heads' weights and
outputs, exactly as the forward made them, with a small cache for the layers last asked for.

The forward keeps only each layer's input (n × d_model); a view that shows a layer, a file that
writes one or the census that measures one asks here. The cache holds the projections of as many
layers as fit in PROJECTION_BYTES (at least two) and
as many heads' weights as fit in WEIGHTS_CACHE_BYTES (at 128 tokens every head of SmolLM2 fits; at
8,192 one head is 268 MB and is not cached: the trace shown holds it while it is shown), a short
text's layer made whole, a longer one's head by head (WHOLE_LAYER_BYTES).
One row of one head (a hover on the model view) is made from that head's q and k projected alone,
where they come out to the bit as the whole layer's (see _one_head), and those are kept within
HEADS_ALONE_BYTES.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..row_matrix import RowMatrix
from ..softmax import causal_mask
from .blocks import block_of, block_weights, head_scores, head_weights, keys_for, outside_window, row_blocks, score_rows
from .forward import ForwardResult, Projections, attention_input, project, project_head, rope_for
from .weights import Architecture, ModelWeights

PROJECTION_LAYERS = 2            # layers' q, k, v kept at least, and as many more as fit in PROJECTION_BYTES
PROJECTION_BYTES = 48 * 1024 * 1024  # (every layer of a short text: hovering the model view's cells is then a row)
WEIGHTS_CACHE_BYTES = 128 * 1024 * 1024
# A layer's heads are made together while their weights take at most this (every head of MiniLM at 512
# tokens, of SmolLM2 at 680), else one by one as they are read: past 256 tokens the views show one head,
# and a long generation's texts so far each held nine of SmolLM2's (36 MB a layer at 1,000 tokens).
WHOLE_LAYER_BYTES = 16 * 1024 * 1024
HEADS_ALONE_BYTES = 16 * 1024 * 1024  # heads projected alone (project_head): 4 MB a head at 8,192 tokens
WHOLE_SCORES_CELLS = 2048 * 2048  # a head's scores of more cells are made a block of rows at a time (RowMatrix)


def whole_layer_fits(arch: Architecture, n: int) -> bool:
    """Whether one layer's heads are made, and kept, together at n tokens: while the layer's weights are
    small (WHOLE_LAYER_BYTES) and fit the weights' cache twice over."""
    size = arch.n_heads * n * n * 4
    return size <= WHOLE_LAYER_BYTES and size * 2 <= WEIGHTS_CACHE_BYTES


class ProjectionSource(Protocol):
    """Where a forward's layers take their q, k, v from instead of projecting them (a generation's
    texts so far share those of its whole text: generation_trace.SharedProjections)."""

    def __call__(self, layer: int, n: int) -> Projections | None:
        """The first n tokens' projections of `layer`, or None: project them from the layer's input."""

    def before_rope(self, layer: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """q and k before RoPE of those it gave without them (q_raw None)."""


class _ByteCache:
    """Least recently used first out, within a number of bytes; a value larger than all of it is not kept."""

    def __init__(self, budget: int):
        self.budget, self.used = budget, 0
        self._items: OrderedDict = OrderedDict()

    def get(self, key):
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def clear(self) -> None:
        self._items.clear()
        self.used = 0

    def put(self, key, value: np.ndarray | tuple[np.ndarray, ...]) -> None:
        if _nbytes(value) > self.budget or key in self._items:
            return
        self._items[key] = value
        self.used += _nbytes(value)
        while self.used > self.budget:
            _, old = self._items.popitem(last=False)
            self.used -= _nbytes(old)


def _nbytes(value: np.ndarray | tuple[np.ndarray, ...]) -> int:
    return sum(part.nbytes for part in value) if isinstance(value, tuple) else value.nbytes


class LayerMaker:
    """The layers of one forward, made again on demand (thread-safe: the census and the window's
    worker may ask while the window draws)."""

    def __init__(self, model: ModelWeights, result: ForwardResult, ablated: frozenset[tuple[int, int]]):
        self.model, self.result, self.ablated = model, result, ablated
        self.n = result.layer_inputs[0].shape[0] if result.layer_inputs else 0
        self._projections: OrderedDict[int, Projections] = OrderedDict()
        self._weights = _ByteCache(WEIGHTS_CACHE_BYTES)
        self._heads_alone = _ByteCache(HEADS_ALONE_BYTES)  # (layer, head) → project_head's (q scaled, k_t)
        self._row_memos: dict[tuple, dict] = {}  # what passes over a long text's scores found (RowMatrix.memo)
        self._alone_exact: bool | None = None  # whether project_head gives this forward's bits (None: unseen)
        self._ropes: list[tuple | None] | None = None
        self._masks: dict = {}  # n, or ("window", n, window) → a read-only mask
        self._lock = threading.RLock()
        self._projections_from: ProjectionSource | None = None
        if result.shown:  # the layer the window draws, made by the forward on the way (forward's show_layer)
            shown = result.shown.pop()  # taken, not shared: let_go then lets go of it
            self._projections[shown.layer] = shown.projections
            shown.weights.flags.writeable = False  # shared by every view that reads it
            self._weights.put(shown.layer, shown.weights)

    def let_go(self) -> None:
        """Drop every cached projection and weight: a forward that will replace this one has started, and
        the two sets of caches together set the window's peak (the layers are made again if asked)."""
        with self._lock:
            self._projections.clear()
            self._weights.clear()  # in place: the one-layer makers (for_layer) share it
            self._heads_alone.clear()

    def for_layer(self, layer: int) -> LayerMaker:
        """A maker of layer `layer` alone, for the trace the views draw of it: it holds that layer's q, k
        and v and shares this maker's caches, masks and lock, but not the forward's layer inputs. A view
        still holding the layer trace of a forward that was replaced then holds that layer, not every
        layer's input: 135 MiB at 2,048 tokens of SmolLM2, beside the new forward's while the views took
        the new trace in (it asks only for its own layer: another layer's projections are not there)."""
        with self._lock:
            projections = self.projections(layer)
            self.rope(layer)  # the tables are made from the forward's length first
            return self._without_forward(OrderedDict({layer: projections}))

    def _without_forward(self, projections: OrderedDict) -> LayerMaker:
        """A copy of this maker that shares its caches, masks and lock, holds `projections` and nothing
        of the forward (its result, its source of projections)."""
        alone = copy.copy(self)
        alone.result, alone._projections_from, alone._projections = None, None, projections
        return alone

    def take_projections_from(self, source: ProjectionSource) -> None:
        """Read each layer's q, k, v as `source(layer, n)` (None: make them here), instead of projecting
        this forward's own layer inputs: a generation's texts so far share those of its whole text."""
        with self._lock:
            self._projections_from = source
            self._projections.clear()

    @property
    def arch(self):
        return self.model.arch

    def rope(self, layer: int) -> tuple | None:
        """Layer `layer`'s rotary tables (cos, sin: n × rotary_dims), None without RoPE."""
        with self._lock:
            if self._ropes is None:
                self._ropes = rope_for(self.arch, self.n, self.result.at_once)
            return self._ropes[layer]

    def causal_mask(self, n: int) -> np.ndarray:
        """n × n, True where a key comes after its query: one array for every layer and reading of
        this length (so a view that keeps what it worked out from a mask keeps it across layers)."""
        with self._lock:
            if n not in self._masks:
                if len(self._masks) > 2:
                    self._masks.clear()
                mask = causal_mask(n)
                mask.flags.writeable = False
                self._masks[n] = mask
            return self._masks[n]

    def masks_alone(self) -> Callable[[int], np.ndarray]:
        """causal_mask, from a copy of this maker that shares its masks and lock and holds none of the
        forward: a reading's trace keeps the function, and a view may hold that trace after the forward
        was replaced (it held every layer's input, 135 MiB at 2,048 tokens of SmolLM2)."""
        with self._lock:
            return self._without_forward(OrderedDict()).causal_mask

    def layer_mask(self, layer: int) -> np.ndarray | None:
        """n × n, True where a query of `layer` may not look, which a view draws as masked: a decoder's
        keys after it, and in a layer with a sliding window the keys outside it (before a decoder's
        query, on either side of an encoder's). None where an encoder's query sees every key."""
        decoder, window = self.arch.is_decoder, self.arch.window(layer)
        if not window:
            return self.causal_mask(self.n) if decoder else None
        with self._lock:
            key = ("window", self.n, window, decoder)
            if key not in self._masks:
                far = outside_window(0, self.n, self.n, window, both=not decoder)
                if not decoder:
                    mask = far
                else:
                    mask = self.causal_mask(self.n) if far is None else self.causal_mask(self.n) | far
                if mask is not None:
                    mask.flags.writeable = False
                self._masks[key] = mask
            return self._masks[key]

    def attention_input(self, layer: int) -> np.ndarray:
        """What layer `layer`'s W_Q, W_K, W_V read (normalised first when pre-LN): n × d_model."""
        return attention_input(self.arch, self.model.layers[layer], self.result.layer_inputs[layer])

    def projections(self, layer: int, keep: bool = True) -> Projections:
        """Layer `layer`'s q, k, v; a sweep over every layer (a text so far's thumbnails) passes `keep`
        False, as for layer_weights: kept, they held the last 48 MiB of layers of a text so far the views
        no longer show (at 1,000 SmolLM2 tokens, six layers each of the last two texts written)."""
        with self._lock:
            if layer in self._projections:
                self._projections.move_to_end(layer)
                return self._projections[layer]
            made = self._projections_from(layer, self.n) if self._projections_from is not None else None
            if made is None:
                made = project(self.arch, self.model.layers[layer], self.attention_input(layer), self.rope(layer))
            if not keep:
                return made
            self._projections[layer] = made
            kept = max(PROJECTION_LAYERS, PROJECTION_BYTES // max(made.nbytes(), 1))
            while len(self._projections) > kept:
                self._projections.popitem(last=False)
            return made

    def before_rope(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Layer `layer`'s q and k before RoPE (what the Steps dock shows turned): its projections', or
        where those do not keep them (a generation's shared projections), made by their source."""
        p = self.projections(layer)
        if p.q_raw is not None:
            return p.q_raw, p.k_raw
        return self._projections_from.before_rope(layer, self.n)

    def head_weights(self, layer: int, head: int) -> np.ndarray:
        """The forward's weights of one head, n × n float32 (rows sum to 1)."""
        with self._lock:
            whole = self._weights.get(layer)
            if whole is not None:
                return whole[head]
            one = self._weights.get((layer, head))
            if one is not None:
                return one
            if self.layer_fits():
                return self.layer_weights(layer)[head]
            q_scaled, k_t = self.projections(layer).one_head(head, self.arch.group)
            one = head_weights(self.arch, q_scaled, k_t, [0], self.arch.window(layer))[0]
            one.flags.writeable = False  # shared by every view that reads it
            self._weights.put((layer, head), one)
            return one

    def weight_row(self, layer: int, head: int, row: int) -> np.ndarray:
        """Row `row` of one head's weights (n,) float32: from the cache, else only the block of rows
        that holds it (the forward's own numbers: the same block, the same products)."""
        with self._lock:
            whole = self._weights.get(layer)
            one = whole[head] if whole is not None else self._weights.get((layer, head))
            if one is not None:
                return one[row]
            q_scaled, k_t = self._one_head(layer, head)
            start, stop = block_of(self.n, row)
            block = block_weights(self.arch, q_scaled, k_t, start, stop, [0], window=self.arch.window(layer))[0]
            weights = np.zeros(self.n, dtype=np.float32)
            weights[:block.shape[-1]] = block[row - start]
            return weights

    def _one_head(self, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
        """Head `head`'s q × scale (1, n, d_head) and its key head's k transposed (1, d_head, n): from
        the layer's projections when they are at hand, else projected alone (project_head), once this
        maker has seen a head projected alone come out to the bit as the whole layer's projections
        (the first time it makes both and compares)."""
        made = self._heads_alone.get((layer, head))
        if made is not None:
            return made
        if layer not in self._projections and self._projections_from is None and self._alone_exact is not False:
            made = project_head(self.arch, self.model.layers[layer], self.attention_input(layer), self.rope(layer),
                                head)
            if made is not None and self._alone_exact is None:
                whole = self.projections(layer).one_head(head, self.arch.group)
                self._alone_exact = all(np.array_equal(alone, its) for alone, its in zip(made, whole, strict=True))
                if not self._alone_exact:
                    return whole
            if made is not None:
                self._heads_alone.put((layer, head), made)
                return made
        return self.projections(layer).one_head(head, self.arch.group)

    def layer_weights(self, layer: int, keep: bool = True) -> np.ndarray:
        """Every head's weights of one layer, (heads, n, n) float32. A sweep over every layer (rollout, a
        reading's model-view cells) passes `keep` False: it reads each layer once, so caching them would
        only push out the layers on screen and hold every layer at once (75 MB at 512 tokens of MiniLM)."""
        with self._lock:
            whole = self._weights.get(layer)
            if whole is None:
                p = self.projections(layer)
                whole = head_weights(self.arch, p.q_scaled(), p.k_t, window=self.arch.window(layer))
                whole.flags.writeable = False  # shared by every view that reads it
                if keep:
                    self._weights.put(layer, whole)
            return whole

    def layer_fits(self) -> bool:
        """Whether a head is made with its whole layer (whole_layer_fits)."""
        return whole_layer_fits(self.arch, self.n)

    def head_output(self, layer: int, head: int, weights: np.ndarray) -> np.ndarray:
        """weights · V of one head (n × d_head), zero when it is switched off; block by block, as the
        forward multiplied them, so it is the forward's own to the bit."""
        p = self.projections(layer)
        v = p.v[head // self.arch.group]
        if (layer, head) in self.ablated:
            return np.zeros((self.n, self.arch.d_head), dtype=np.float32)
        output = np.empty((self.n, self.arch.d_head), dtype=np.float32)
        for start, stop in row_blocks(self.n):
            keys = keys_for(stop, self.n, self.arch.is_decoder)
            np.matmul(weights[start:stop, :keys], v[:keys], out=output[start:stop])
        return output

    def head_output_by_blocks(self, layer: int, head: int) -> np.ndarray:
        """weights · V of one head (n × d_head) with its weights made a block of rows at a time and let
        go: a long text's output without its n × n weights (268 MB a head at 8,192 tokens). The same
        blocks and products as the forward, so the same numbers."""
        p = self.projections(layer)
        v = p.v[head // self.arch.group]
        if (layer, head) in self.ablated:
            return np.zeros((self.n, self.arch.d_head), dtype=np.float32)
        q_scaled, window = p.q_scaled(), self.arch.window(layer)
        output = np.empty((self.n, self.arch.d_head), dtype=np.float32)
        for start, stop in row_blocks(self.n):
            block = block_weights(self.arch, q_scaled, p.k_t, start, stop, [head], window=window)[0]
            np.matmul(block, v[:block.shape[-1]], out=output[start:stop])
        return output

    def head_scores(self, layer: int, head: int, divisor: float = 1.0, masked: bool = False, cap: float = 0.0
                    ) -> np.ndarray | RowMatrix:
        """q · kᵀ of one head ÷ `divisor`, soft-capped at `cap` when given, n × n float32, −∞ where a
        query may not look (layer_mask) when `masked`: made whole, or for a long text a
        RowMatrix that makes the rows that are read."""
        p = self.projections(layer)
        window = self.arch.window(layer)
        if self.n * self.n <= WHOLE_SCORES_CELLS:
            return head_scores(self.arch, p.q, p.k_t, head, divisor, masked, window, cap)
        arch = self.arch

        def rows(start: int, stop: int) -> np.ndarray:  # read later, by a view
            return score_rows(arch, p.q, p.k_t, head, start, stop, divisor, masked, window=window, cap=cap)

        # the same scores each time this head is shown: a pass over them (a step table's range, their
        # products made again: 100 ms at 8,192 tokens) is made once
        memo = self._row_memos.setdefault((layer, head, divisor, masked, cap), {})
        return RowMatrix((self.n, self.n), np.float32, rows, row_blocks(self.n), memo)
