"""A real model's forward as JSON: tokens, the model's shape, and the attention of the chosen layers
and heads (no Qt, like export.py, whose row-by-row writer it uses).

Every layer's and head's weights of a long text are many numbers (30 layers × 9 heads × 256² is
17.7 million for SmolLM2), so a choice of layer and head keeps the file to what is asked for, and
the queries, keys, values and scores — recomputed per layer — come only with one chosen layer. Each
head's weights are made when the writer reaches them, so the file is written layer by layer and
never holds more than a layer in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from .engine.pretrained import PretrainedModel, PretrainedTrace
from .export import json_pieces, text_output

# With one layer chosen, each head also carries these (q and k after RoPE for Llama, with the
# values before it as q_before_rope and k_before_rope).
LAYER_MATRICES = ("q", "k", "v", "scores")


def weight_count(model: PretrainedModel, n: int, layers: int | None = None, heads: int | None = None) -> int:
    """How many attention weights the JSON holds: layers × heads × n²."""
    return (model.n_layers if layers is None else layers) * (model.n_heads if heads is None else heads) * n * n


def model_shape(model: PretrainedModel) -> dict:
    """The model's family and sizes, as every file about a real model names them."""
    arch = model.arch
    return {"family": model.family, "kind": model.kind, "layers": model.n_layers, "heads": model.n_heads,
            "key_value_heads": model.n_kv_heads, "d_model": model.d_model, "d_head": arch.d_head,
            "max_tokens": model.max_tokens}


def _head(ptrace: PretrainedTrace, layer: int, head: int, layer_trace) -> dict:
    fields: dict = {"head": head + 1, "weights": lambda: ptrace.head_weights(layer, head)}
    if layer_trace is not None:
        one = layer_trace.heads[head]
        if one.kv_head is not None:
            fields["key_value_head"] = one.kv_head + 1
        fields.update({name: getattr(one, name) for name in LAYER_MATRICES if name != "scores"})
        fields["scores"] = lambda: ptrace.head_scores(layer, head)  # made as it is written, not kept
        if one.q_before_rope is not None:
            fields["q_before_rope"], fields["k_before_rope"] = one.q_before_rope, one.k_before_rope
    return fields


def pretrained_fields(model: PretrainedModel, ptrace: PretrainedTrace, layer: int | None = None,
                      head: int | None = None) -> dict:
    """The JSON layout (arrays still NumPy) of `ptrace`; `layer` and `head` are 0-based, None for all.

    Layers and heads are numbered from 1 in the file, as on screen and on the command line.
    """
    layers = range(model.n_layers) if layer is None else (layer,)
    heads = range(model.n_heads) if head is None else (head,)
    fields = {
        "model": ptrace.model_name,
        "sentence": ptrace.text,
        "shape": model_shape(model),
        "tokens": ptrace.tokens,
        "labels": list(ptrace.labels),
        "special": [bool(s) for s in ptrace.special],
        "words": [list(word) for word in ptrace.words],
        "truncated": bool(ptrace.encoded.truncated),
        "cut": None if ptrace.encoded.cut is None else ptrace.encoded.cut.to_dict(),  # which tokens were kept
        "ablated": [[lay + 1, h + 1] for lay, h in sorted(ptrace.ablated)],
        "layers": [],
    }
    for index in layers:
        layer_trace = ptrace.layer_trace(index) if layer is not None else None
        fields["layers"].append({"layer": index + 1,
                                 "heads": [_head(ptrace, index, h, layer_trace) for h in heads]})
    if model.is_decoder:
        fields["next_tokens"] = [{"text": t.text, "label": t.label, "token_id": t.token_id,
                                  "probability": t.probability} for t in ptrace.next_tokens]
    return fields


def iter_pretrained_json(model: PretrainedModel, ptrace: PretrainedTrace, layer: int | None = None,
                         head: int | None = None) -> Iterator[str]:
    """The JSON in pieces of at most one matrix row, one row per line."""
    yield from json_pieces(pretrained_fields(model, ptrace, layer, head), 0)
    yield "\n"


def write_pretrained_json(path: str | os.PathLike, model: PretrainedModel, ptrace: PretrainedTrace,
                          layer: int | None = None, head: int | None = None) -> None:
    """Into `path` (or standard output for "-"), written safely as every export."""
    with text_output(path) as handle:
        for piece in iter_pretrained_json(model, ptrace, layer, head):
            handle.write(piece)
