"""A generation's text so far as a real-model trace, made from what its decoder kept: no forward again.

A decoder's token t reads only tokens 0 … t, so the residual stream entering each layer at the
first m tokens is the same whatever is written after them. The decoder of a generation made with
`keep_reader` keeps those inputs (kv_cache.py); the trace of the prompt and the first k tokens
written is the trace of a forward over them (to rounding: a test checks 1e-5), whose layers are made
again from the kept inputs as for any forward, and whose thumbnails and sink sums are worked out
from them here, or taken from the rows the decoder read where it kept them (a generation of up to
128 tokens in all: Decoder.rows_read). Under a rotary scaling that follows the length of the text read
(dynamic NTK, longrope) it is those tokens as the generation read them (decode.py): the forward whose
tokens after the prompt are each turned by the frequencies of the text up to them
(ForwardResult.at_once).

Its next tokens are the five candidates the next token was chosen from, with the model's own
probabilities, or after the last token written, the model's guess for the token after it. The
tokens written carry tokenizing.WRITTEN_MARK before their label, so every view and every file that names
tokens tells them from the prompt's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise

import numpy as np

from ..memory import own_pages
from .forward import ForwardResult, Projections, project, sink_sums_into
from .generate import Generation
from .model import CheckedTrace, PretrainedModel
from .real_trace import (
    SHARED_THUMBNAIL_ROWS,
    NextToken,
    PretrainedTrace,
    make_labels,
    next_label,
    summarise_rows,
)
from .recompute import LayerMaker
from .thumbnails import thumb_size, thumb_step
from .tokenizing import Encoded, first_tokens, marked_written

WRITTEN_KEY = "tokens written"  # in a text so far's memo: how many of its tokens were written


def written_in(trace: PretrainedTrace) -> int | None:
    """How many written tokens a generation's text so far holds; None for a forward's own trace."""
    return trace.memo.get(WRITTEN_KEY)


def written_so_far(generation: Generation) -> int | None:
    """How many written tokens a trace can hold now: each one once the decoder has read it (the last
    one only once the generation has ended and read it too); None before the prompt is read (or
    when the generation kept no reader)."""
    reader = generation.reader
    if reader is None or reader.length < len(generation.prompt_ids):
        return None
    return min(len(generation.steps), reader.length - len(generation.prompt_ids))


class SharedProjections:
    """Every layer's q, k, v over the whole text of a generation that has ended, made once, for all of
    its texts so far: scrubbing then makes no projection again, only each text's weights.

    A decoder's query, key and value of token t read only tokens 0 … t (rotary turns each by its own
    position, q/k norms work row by row), so those of a text so far are the first rows of the whole
    text's (to the rounding of products of another length: a test checks 1e-5, as for the inputs).
    Each layer keeps q, k transposed and v: k is a view of its transpose, and q and k before RoPE (which
    only the Steps dock shows, for one layer) are made again for the last BEFORE_ROPE_LAYERS layers
    asked for; kept with every layer, they doubled what was shared (SmolLM2 at 1,000 tokens: 215 →
    108 MiB). Shared only while every layer's fit in MAX_BYTES (SmolLM2: about 2,300 tokens); past
    that each text so far makes its own (at 1,000 SmolLM2 tokens about 0.9 s, against 15 ms shared).
    Thread-safe: the window's worker and its GUI thread may both ask.
    """

    MAX_BYTES = 256 * 1024 * 1024
    BEFORE_ROPE_LAYERS = 2

    def __init__(self, model: PretrainedModel, generation: Generation):
        reader = generation.reader
        if reader is None or not generation.stopped:
            raise ValueError("only an ended generation that kept its reader shares its projections")
        self.length = reader.length
        self._from = reader.reread_at  # a text so far shorter than that was read otherwise (decode.py)
        self._result = ForwardResult(reader.layer_inputs(self.length), np.zeros(0, dtype=np.float32),
                                     np.zeros(0, dtype=np.float32), None, at_once=reader.read_at_once(self.length),
                                     to_the_bit=False)
        self._maker = LayerMaker(model.weights, self._result, reader.ablate)
        self._made: dict[int, Projections] = {}
        self._before_rope: OrderedDict[int, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._too_large = False  # every layer's would not fit in MAX_BYTES
        self._lock = threading.Lock()
        # the whole text as encoded, of which each text so far is the first tokens (first_tokens)
        self.encoded = model.tokenizer.extended(generation.encoded, [s.token_id for s in generation.steps])
        self._special = self.encoded.special[:self.length]
        self._summary: tuple[np.ndarray, np.ndarray] | None = None  # the whole text's thumbnails and sinks

    def __call__(self, layer: int, n: int) -> Projections | None:
        """The first n tokens' projections of `layer` (views, no copy); None past the whole text, before
        the text was read again whole (Phi-3's longrope) or past the budget."""
        if n > self.length or n < self._from or self._too_large:
            return None
        with self._lock:
            whole = self._made.get(layer)
            if whole is None:
                made = self._project(layer)
                whole = replace(made, k=made.k_t.transpose(0, 2, 1), q_raw=None, k_raw=None)
                if whole.nbytes() * self._maker.arch.n_layers > self.MAX_BYTES:
                    self._too_large = True
                    return None
                self._made[layer] = whole
        return first_rows(whole, n)

    def before_rope(self, layer: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The first n tokens' q and k of `layer` before RoPE (views): the layer projected again, kept
        for the last BEFORE_ROPE_LAYERS layers (a layer shown as the scrubber steps)."""
        with self._lock:
            made = self._before_rope.get(layer)
            if made is None:
                projected = self._project(layer)
                made = self._before_rope[layer] = (projected.q_raw, projected.k_raw)
                while len(self._before_rope) > self.BEFORE_ROPE_LAYERS:
                    self._before_rope.popitem(last=False)
            self._before_rope.move_to_end(layer)
        return made[0][:, :n], made[1][:, :n]

    def _project(self, layer: int) -> Projections:
        maker = self._maker
        return project(maker.arch, maker.model.layers[layer], maker.attention_input(layer), maker.rope(layer))

    def summarised_rows(self, n: int, thumbnails: np.ndarray, sinks: np.ndarray) -> int:
        """Fill the first rows of the thumbnails (layers, heads, m, m) and sink sums (layers, heads, n, 2)
        of the text so far of n tokens from the whole text's, made once; return how many rows it filled.

        A decoder's row t reads tokens 0 … t alone, so the rows of a text so far are the whole text's (to
        the rounding of products of another length) and read nothing past them: the whole text's pooled
        blocks of those rows hold exactly their maxima. Every row of a whole block of thumbnail rows is
        taken when both texts pool by the same step (thumbnails.py); 0 when they do not, or the
        projections are not shared, and the text so far makes its rows itself."""
        step = thumb_step(n)
        if thumb_step(self.length) != step or self(0, n) is None:
            return 0
        whole = self._whole_summary()
        if whole is None:
            return 0
        rows = n // step * step
        whole_thumbnails, whole_sinks = whole
        thumbnails[:, :, :rows // step] = whole_thumbnails[:, :, :rows // step, :thumbnails.shape[-1]]
        sinks[:, :, :rows] = whole_sinks[:, :, :rows]
        return rows

    def summary_of(self, n: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The thumbnails and sink sums of the text so far of n tokens as read-only views into the whole
        text's, when its rows make whole blocks of thumbnail rows (every text so far up to THUMB_PX
        tokens): nothing of it to make, nor to copy (a copy of SmolLM2's 6 MB into fresh pages took
        5 ms of a scrubber step). None when a block is partial or the projections are not shared."""
        step = thumb_step(n)
        if n % step or thumb_step(self.length) != step or self(0, n) is None:
            return None
        whole = self._whole_summary()
        if whole is None:
            return None
        thumbnails, sinks = whole[0][:, :, :n // step, :n // step], whole[1][:, :, :n]
        thumbnails.flags.writeable = sinks.flags.writeable = False  # the whole text's, shared by every text so far
        return thumbnails, sinks

    def whole_thumbnails(self) -> np.ndarray | None:
        """The whole text's thumbnails, once a text so far made them (summary_of, summarised_rows)."""
        return None if self._summary is None else self._summary[0]

    def _whole_summary(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The whole text's thumbnails and sink sums, made the first time a text so far asks (None: its
        projections are past the budget)."""
        if self._summary is None:
            arch, n = self._maker.arch, self.length
            made = [self(layer, n) for layer in range(arch.n_layers)]
            if any(p is None for p in made):
                return None
            m = thumb_size(n)
            # kept as long as the generation, in pages of their own (engine/memory.py), as each text so far's
            thumbnails = own_pages((arch.n_layers, arch.n_heads, m, m))
            sinks = own_pages((arch.n_layers, arch.n_heads, n, 2))
            summarise_rows(arch, made.__getitem__, n, np.flatnonzero(self._special), thumbnails, sinks)
            with self._lock:
                self._summary = self._summary or (thumbnails, sinks)
        return self._summary


def first_rows(p: Projections, n: int) -> Projections:
    """The projections of the first n tokens: views into `p`'s arrays."""
    q_raw, k_raw = (None, None) if p.q_raw is None else (p.q_raw[:, :n], p.k_raw[:, :n])
    return replace(p, q=p.q[:, :n], k=p.k[:, :n], v=p.v[:, :n], q_raw=q_raw, k_raw=k_raw, k_t=p.k_t[:, :, :n])


def trace_so_far(model: PretrainedModel, generation: Generation, written: int,
                 shared: SharedProjections | None = None) -> PretrainedTrace:
    """The prompt and the first `written` tokens written (0 … written_so_far), as a forward's trace;
    `shared`: the projections of the generation's whole text, when it has ended."""
    ready = written_so_far(generation)
    if ready is None or not 0 <= written <= ready:
        raise ValueError(f"the text with {written} tokens written is not read yet (with {ready} it is)")
    prompt = len(generation.prompt_ids)
    length = prompt + written
    ids = [step.token_id for step in generation.steps[:written]]
    whole = first_tokens(shared.encoded, length) if shared is not None else model.tokenizer.extended(
        generation.encoded, ids)
    encoded = marked_written(whole, prompt)
    n_layers, n_heads, m = model.n_layers, model.n_heads, thumb_size(length)
    reader = generation.reader
    shared_summary = shared.summary_of(length) if shared is not None else None
    summary = shared_summary or _summary_of_rows_read(reader.rows_read, length, encoded.special)
    # pages of their own: made between the layers' temporaries and kept while scrubbing, they left holes in
    # the heap (a step back at 1,000 SmolLM2 tokens grew the window by 22 MB, 4–10 MB so)
    thumbnails, sinks = summary or (own_pages((n_layers, n_heads, m, m)), own_pages((n_layers, n_heads, length, 2)))
    result = ForwardResult(reader.layer_inputs(length), thumbnails, sinks, None, at_once=reader.read_at_once(length),
                           to_the_bit=False)  # its tokens were read one at a time
    trace = CheckedTrace(
        model_name=model.name, text=generation.text + model.tokenizer.decode(ids), encoded=encoded,
        labels=make_labels(encoded), ablated=generation.reader.ablate,
        next_tokens=_next_tokens(model, generation, written, encoded), model=model.weights, forward_result=result)
    if shared is not None:
        trace.take_projections_from(shared)
    if summary is not None:
        first = length  # every row there already
    elif shared is not None:
        first = shared.summarised_rows(length, thumbnails, sinks)
    else:
        first = 0
    if shared is not None and summary is shared_summary and first:  # rows of the whole text's, exactly
        trace.memo[SHARED_THUMBNAIL_ROWS] = (shared.whole_thumbnails(), first // thumb_step(length))
    trace.summarise_layers(first)
    trace.memo[WRITTEN_KEY] = written
    return trace


def _summary_of_rows_read(rows_read: np.ndarray | None, length: int, special: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray] | None:
    """The thumbnails (a read-only view of its corner) and sink sums of the text so far of `length` tokens
    from every row its decoder read (Decoder.rows_read: a pixel a token, its rows' weights; None when it
    kept none). Each row's sink sums as the forward makes them: a row's later columns hold zeros, which
    change no sum."""
    if rows_read is None or length > rows_read.shape[-1]:
        return None
    thumbnails = rows_read[:, :, :length, :length]
    thumbnails.flags.writeable = False  # the decoder's, shared by every text so far
    sinks = np.empty((*thumbnails.shape[:2], length, 2), dtype=np.float32)
    sink_sums_into(sinks, thumbnails, np.flatnonzero(special[:length]))
    return thumbnails, sinks


def step_rows(model: PretrainedModel, generation: Generation, layers: Sequence[int], heads: Sequence[int]
              ) -> list[np.ndarray]:
    """Each step's attention rows in `layers` and `heads` (0-based), (layers, heads, length at that
    step) float32: the rows kept as they were made, or (a generation that kept its reader) the rows
    of the text so far that chose each token, made again one layer at a time: from the longest text
    so far, or from two when the text was read again whole on the way (Phi-3's longrope)."""
    layers, heads = list(layers), list(heads)
    steps = generation.steps
    if not steps or steps[0].attention is not None:
        return [step.attention[layers][:, heads] for step in steps]
    prompt = len(generation.prompt_ids)
    rows = [np.empty((len(layers), len(heads), prompt + i), dtype=np.float32) for i in range(len(steps))]
    again = generation.reader.reread_at - prompt  # the first step chosen after the text was read again
    bounds = [0, again, len(steps)] if 0 < again < len(steps) else [0, len(steps)]
    for start, stop in pairwise(bounds):
        trace = trace_so_far(model, generation, stop - 1)  # the last token written is never read
        for at, layer in enumerate(layers):
            weights = trace.layer_weights(layer)[heads]
            for i in range(start, stop):
                rows[i][at] = weights[:, prompt + i - 1, :prompt + i]
    return rows


def _next_tokens(model: PretrainedModel, generation: Generation, written: int, after: Encoded
                 ) -> tuple[NextToken, ...]:
    """After `written` tokens (the text so far `after`): the candidates of the next token written, or
    the model's guess after the last; labelled as written after that text."""
    if written < len(generation.steps):
        tokenizer = model.tokenizer
        return tuple(NextToken(c.token_id, tokenizer.token_text(c.token_id), next_label(tokenizer, c.token_id, after),
                               c.probability) for c in generation.steps[written].choice.candidates)
    return model.likeliest_next(generation.after_logits, after)
