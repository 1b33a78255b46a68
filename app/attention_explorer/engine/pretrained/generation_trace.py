"""A generation's text so far as a real-model trace, made from what its decoder kept: no forward again.

A decoder's token t reads only tokens 0 … t, so the residual stream entering each layer at the
first m tokens is the same whatever is written after them. The decoder of a generation made with
`keep_reader` keeps those inputs (kv_cache.py); the trace of the prompt and the first k tokens
written is the trace of a forward over them (to rounding: a test checks 1e-5), whose layers are made
again from the kept inputs as for any forward, and whose thumbnails and sink sums are worked out
from them here.

Its next tokens are the five candidates the next token was chosen from, with the model's own
probabilities, or after the last token written, the model's guess for the token after it. The
tokens written carry WRITTEN_MARK before their label, so every view and every file that names
tokens tells them from the prompt's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .forward import ForwardResult
from .generate import Generation
from .model import CheckedTrace, PretrainedModel
from .real_trace import NextToken, PretrainedTrace, make_labels
from .thumbnails import thumb_size
from .tokenizing import CONTINUATION

WRITTEN_MARK = "›"  # before a written token's label (after the "·" of a piece that continues a word)
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


def trace_so_far(model: PretrainedModel, generation: Generation, written: int) -> PretrainedTrace:
    """The prompt and the first `written` tokens written (0 … written_so_far), as a forward's trace."""
    ready = written_so_far(generation)
    if ready is None or not 0 <= written <= ready:
        raise ValueError(f"the text with {written} tokens written is not read yet (with {ready} it is)")
    prompt = len(generation.prompt_ids)
    length = prompt + written
    ids = [step.token_id for step in generation.steps[:written]]
    encoded = _marked(model.tokenizer.extended(generation.encoded, ids), prompt)
    n_layers, n_heads, m = model.n_layers, model.n_heads, thumb_size(length)
    result = ForwardResult(generation.reader.cache.layer_inputs(length),
                           np.zeros((n_layers, n_heads, m, m), dtype=np.float32),
                           np.zeros((n_layers, n_heads, length, 2), dtype=np.float32), None)
    trace = CheckedTrace(
        model_name=model.name, text=generation.text + model.tokenizer.decode(ids), encoded=encoded,
        labels=make_labels(encoded), ablated=generation.reader.ablate,
        next_tokens=_next_tokens(model, generation, written), model=model.weights, forward_result=result)
    trace.summarise_layers()
    trace.memo[WRITTEN_KEY] = written
    return trace


def step_rows(model: PretrainedModel, generation: Generation, layers: Sequence[int], heads: Sequence[int]
              ) -> list[np.ndarray]:
    """Each step's attention rows in `layers` and `heads` (0-based), (layers, heads, length at that
    step) float32: the rows kept as they were made, or (a generation that kept its reader) the rows
    of the text so far that chose each token, made again one layer at a time."""
    layers, heads = list(layers), list(heads)
    steps = generation.steps
    if not steps or steps[0].attention is not None:
        return [step.attention[layers][:, heads] for step in steps]
    prompt = len(generation.prompt_ids)
    trace = trace_so_far(model, generation, len(steps) - 1)  # the last token written is never read
    rows = [np.empty((len(layers), len(heads), prompt + i), dtype=np.float32) for i in range(len(steps))]
    for at, layer in enumerate(layers):
        weights = trace.layer_weights(layer)[heads]
        for i, row in enumerate(rows):
            row[at] = weights[:, prompt + i - 1, :prompt + i]
    return rows


def _marked(encoded, prompt: int):
    """The written tokens' labels with WRITTEN_MARK in front (after a continuation's "·")."""
    labels = list(encoded.labels)
    for i in range(prompt, len(labels)):
        label = labels[i]
        labels[i] = (CONTINUATION + WRITTEN_MARK + label[len(CONTINUATION):] if label.startswith(CONTINUATION)
                     else WRITTEN_MARK + label)
    return replace(encoded, labels=labels)


def _next_tokens(model: PretrainedModel, generation: Generation, written: int) -> tuple[NextToken, ...]:
    """After `written` tokens: the candidates of the next token written, or the model's guess after the last."""
    if written < len(generation.steps):
        tokenizer = model.tokenizer
        return tuple(NextToken(c.token_id, tokenizer.token_text(c.token_id), tokenizer.token_label(c.token_id),
                               c.probability) for c in generation.steps[written].choice.candidates)
    return model.likeliest_next(generation.after_logits)
