"""A decoder read one token at a time: the text once through the forward (prefill), then each new token
alone against the keys and values of every token before it (kv_cache.py).

A step is the forward's own arithmetic on one row — the same embedding (at the token's position),
norms, projections, rotary tables, softmax, W_O and feed-forward (forward.py) — so the scores and
attention it gives are the forward's over the whole text so far, to rounding (a test checks 1e-5 at
every step). What the new token's query gives each key, for every layer and head, is kept as it is
made: "what it looked at when it wrote that word".

A rotary scaling whose frequencies follow the length of the text read (dynamic NTK, longrope: rope.py)
is read as transformers' generate reads it: the prompt turned by the frequencies of the prompt's
length, each new token by those of the text up to it, and the keys in the cache left as they were
turned. Past the model's original context a step is then not the forward over the text so far (which
turns every token by that text's frequencies) but that text as the generation read it, the forward
with rope_for's `at_once` (a test checks both against transformers, 1e-5). Phi-3's generation instead
drops its cache and reads the whole text again when it grows past its original context (its
prepare_inputs_for_generation; rope.reads_again), so each of its steps is the forward over the text so
far; the cache of the earlier reading is kept for the texts so far that end before it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .blocks import softmax_rows
from .forward import attention_input, embed, finish_layer, forward, next_logits, project, rope_for
from .kv_cache import KVCache
from .model import PretrainedModel, overflow_error
from .ops import soft_cap
from .progress import Progress
from .rope import reads_again
from .thumbnails import thumb_step

FIRST_ROOM = 256  # tokens of room beyond the prompt at first; the cache doubles when that is used


def attend_newest(arch, q_scaled: np.ndarray, keys: np.ndarray, values: np.ndarray, off: list[int] | None,
                  window: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One query per head (heads, d_head), already scaled (Projections.q_scaled), against every key so
    far (kv_heads, n, d_head); query head h reads key/value head h // group; with a sliding `window`,
    the keys before it get no weight. Returns the heads' outputs side by side (1, heads·d_head), those
    in `off` zero, and the weights (heads, n)."""
    n = keys.shape[1]
    grouped = q_scaled.reshape(arch.n_kv_heads, arch.group, arch.d_head)
    weights = np.matmul(grouped, keys.transpose(0, 2, 1)).reshape(arch.n_heads, n)
    if arch.attn_softcap:
        soft_cap(weights, arch.attn_softcap)
    if 0 < window < n:  # the query is token n − 1: keys j ≤ n − 1 − window are outside its window
        weights[:, :n - window] = -np.inf
    softmax_rows(weights, 0, causal=False)  # the keys end at the query: no later key to mask
    outputs = np.matmul(weights.reshape(arch.n_kv_heads, arch.group, n), values).reshape(arch.n_heads, arch.d_head)
    if off:
        outputs[off] = 0
    return outputs.reshape(1, -1), weights


class Decoder:
    """A decoder part-way through a text: the keys and values of the tokens read so far, and how many."""

    def __init__(self, model: PretrainedModel, ablate: frozenset[tuple[int, int]], most: int,
                 keep_inputs: bool = False, between_layers: Callable[[], None] | None = None):
        """`ablate`: (layer, head) pairs switched off, as in the forward; `most`: the longest text it
        will read (the cache never grows past it); `keep_inputs`: keep the residual stream entering
        each layer too, for a trace of the text so far (KVCache); `between_layers` is called once in
        each layer read, of a text read at once and of a token (a window lets the user act first)."""
        self.model, self.weights, self.arch = model, model.weights, model.arch
        self.between_layers = between_layers
        self.off = {layer: sorted(h for lay, h in ablate if lay == layer) for layer, _ in ablate}
        self.ablate = frozenset(ablate)
        self.most = most
        self.keep_inputs = keep_inputs
        self.cache: KVCache | None = None
        self.length = 0
        self.prompt = 0      # the tokens of the text first read
        self.at_once = 0     # the tokens the cache's keys were read with at once: the prompt, or the whole
                             # text when it was read again (reread_at)
        self.reread_at = 0   # the length at which the whole text was read again (Phi-3's longrope); 0: never
        self._earlier: KVCache | None = None  # the cache before that, for the texts so far ending before it
        self._ids: list[int] = []
        self._ropes: list[tuple | None] = []
        # every row read, (layers, heads, most, most), zero past each row's token, where texts so far keep
        # their inputs and pool a pixel a token (up to thumbnails.THUMB_PX tokens): a text so far is the
        # top-left corner of it, and its thumbnails need no layer made again (generation_trace; at 64
        # SmolLM2 tokens 40 ms of the writer's time, each time the window follows the newest text).
        # Only the first reading's: a text read again whole (reread_at) keeps none.
        self.rows_read: np.ndarray | None = None

    def prefill(self, ids: np.ndarray, special: np.ndarray | None = None, progress: Progress | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """Read the text `ids` through the forward, keeping every layer's keys and values. Returns the
        next-token scores (vocab,) and the last token's attention (layers, heads, n)."""
        self.prompt = len(ids)
        return self._read(ids, special, progress)

    def _read(self, ids: np.ndarray, special: np.ndarray | None = None, progress: Progress | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """`ids` through the forward at once, into a new cache (prefill)."""
        n = len(ids)
        self.cache = KVCache(self.arch, n + FIRST_ROOM, self.most, inputs=self.keep_inputs)
        last_queries = [np.empty(0)] * self.arch.n_layers

        def keep(index, p):
            self.cache.write(index, 0, p.k, p.v)
            last_queries[index] = p.q[:, -1] * np.float32(p.scale)  # as Projections.q_scaled, on one row
            if self.between_layers is not None:
                self.between_layers()

        result = forward(self.weights, ids, self.ablate, progress, special=special, keep=keep)
        if result.overflow:
            raise overflow_error(self.model.name, result.overflow)
        self.rows_read = self._first_rows(result.thumbnails, n) if self.length == 0 else None
        if self.keep_inputs:
            for index, h in enumerate(result.layer_inputs):
                self.cache.write_input(index, 0, h)
        rows = np.empty((self.arch.n_layers, self.arch.n_heads, n), dtype=np.float32)
        for index, query in enumerate(last_queries):
            _, rows[index] = attend_newest(self.arch, query, *self.cache.read(index, n), self.off.get(index),
                                           self.arch.window(index))
        self.length = self.at_once = n
        self._ids, self._ropes = [int(i) for i in ids], []
        return result.next_logits, rows

    def _first_rows(self, thumbnails: np.ndarray, n: int) -> np.ndarray | None:
        """rows_read holding the first reading's n rows: its thumbnails, which are its weights where they
        pool a pixel a token; None where no text so far will read it."""
        if not self.keep_inputs or thumb_step(self.most) != 1:
            return None
        rows = np.zeros((self.arch.n_layers, self.arch.n_heads, self.most, self.most), dtype=np.float32)
        rows[:, :, :n, :n] = thumbnails
        return rows

    def step(self, token_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Read one more token: the scores of the token after it (vocab,) and its attention on every
        token so far, itself included (layers, heads, length)."""
        arch, t = self.arch, self.length
        if self.cache is not None and self.cache.keys is None:
            raise RuntimeError("this decoder has stopped reading: its keys and values are gone")
        if reads_again(arch.rope_scaling, self.at_once, t + 1):
            self._earlier = self.cache if self.keep_inputs else None  # kept for the texts so far before it
            self.reread_at = t + 1
            return self._read(np.array([*self._ids, token_id]))
        self._ids.append(token_id)
        self.cache.reserve(t + 1)
        ropes = self._rope_rows(t)
        h = embed(self.weights, np.array([token_id]), start=t)
        rows = np.empty((arch.n_layers, arch.n_heads, t + 1), dtype=np.float32)
        inputs = []  # each layer's input, kept whole once the token is read: one copy instead of one a layer
        for index, layer in enumerate(self.weights.layers):
            inputs.append(h)
            p = project(arch, layer, attention_input(arch, layer, h), ropes[index])
            self.cache.write(index, t, p.k, p.v)
            merged, rows[index] = attend_newest(arch, p.q_scaled()[:, 0], *self.cache.read(index, t + 1),
                                                self.off.get(index), arch.window(index))
            h = finish_layer(arch, layer, h, merged)
            if self.between_layers is not None:
                self.between_layers()
        if self.keep_inputs:
            self.cache.write_inputs(t, np.concatenate(inputs))
        if self.rows_read is not None:
            self.rows_read[:, :, t, :t + 1] = rows
        logits = next_logits(self.weights, h[0])
        if not np.isfinite(logits).all():
            raise overflow_error(self.model.name, f"the scores after token {t + 1}")
        self.length = t + 1
        return logits, rows

    def stop_reading(self) -> None:
        """The text is read to its end: the keys and values go, the layer inputs kept for the texts so far
        stay. Reading on after this is a mistake of the caller's."""
        for cache in (self.cache, self._earlier):
            if cache is not None:
                cache.let_go_of_keys_and_values()

    def layer_inputs(self, length: int) -> list[np.ndarray]:
        """The residual stream entering each layer for the first `length` tokens, as this generation read
        them (views): from the cache before the text was read again when they end before that."""
        return (self._earlier if length < self.reread_at else self.cache).layer_inputs(length)

    def read_at_once(self, length: int) -> int | None:
        """How the first `length` tokens were read, as rope_for's `at_once`: how many at once before the
        rest one at a time; None when the model's rotary tables do not depend on it."""
        scaling = self.arch.rope_scaling
        if scaling is None or not scaling.by_length:
            return None
        return self.reread_at if 0 < self.reread_at <= length else self.prompt

    def _rope_rows(self, position: int) -> list[tuple | None]:
        """Each layer's rotary tables' row of `position`, from tables made for the whole cache (None
        without RoPE): the frequencies of a text of position + 1 tokens where they follow its length."""
        if not self.arch.rotary:
            return [None] * self.arch.n_layers
        if not self._ropes or self._ropes[0][0].shape[0] <= position:
            self._ropes = rope_for(self.arch, self.cache.capacity, self.at_once)
        return [(cos[position:position + 1], sin[position:position + 1]) for cos, sin in self._ropes]
