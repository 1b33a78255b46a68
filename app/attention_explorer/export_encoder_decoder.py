"""An encoder–decoder's run (engine/pretrained/encoder_decoder.py) as JSON: both texts' tokens, the model's
two shapes, and for the chosen layers and heads the encoder's self-attention, the decoder's causal
self-attention and its cross-attention (target tokens as rows, source tokens as columns: which source
token each target token reads), with the five likeliest next tokens after the target. No Qt.

Written as every export is (export.text_output: safely, or to standard output for "-"), each matrix one
row per line (export.json_pieces). Layers and heads are counted from 1, as on the command line.
"""

from __future__ import annotations

import os

from .engine.pretrained.encoder_decoder import EncoderDecoderModel, EncoderDecoderResult
from .engine.pretrained.sampling import likeliest, softmax
from .engine.pretrained.weights import Architecture
from .export import json_pieces, text_output

NEXT_TOKENS = 5


def _shape(arch: Architecture) -> dict:
    return {"layers": arch.n_layers, "heads": arch.n_heads, "d_model": arch.d_model, "d_head": arch.d_head}


def _chosen(count: int, index: int | None) -> range | tuple[int]:
    return range(count) if index is None else (index,)


def encoder_decoder_fields(model: EncoderDecoderModel, source: str, target: str, result: EncoderDecoderResult,
                           layer: int | None = None, head: int | None = None) -> dict:
    """The JSON layout (arrays still NumPy); `layer` and `head` 0-based, None for all. A layer or head
    chosen applies to both halves, and must exist in both (the caller checks)."""
    encoder, decoder = model.weights.encoder.arch, model.weights.decoder.arch
    probabilities = softmax(result.logits[-1])
    return {
        "model": model.name,
        "source": source,
        "target": target,
        "shape": {"family": "bart", "kind": "encoder–decoder", "encoder": _shape(encoder), "decoder": _shape(decoder)},
        "source_tokens": [int(i) for i in result.source.ids],
        "source_labels": list(result.source.labels),
        "target_tokens": [int(i) for i in result.target_ids],  # what the decoder read: its start token first
        "target_labels": list(result.target_labels),
        "encoder": [{"layer": lay + 1, "heads": [{"head": h + 1, "weights": result.encoder_attention[lay, h]}
                                                 for h in _chosen(encoder.n_heads, head)]}
                    for lay in _chosen(encoder.n_layers, layer)],
        "decoder": [{"layer": lay + 1, "heads": [{"head": h + 1, "self_weights": result.decoder_attention[lay, h],
                                                  "cross_weights": result.cross_attention[lay, h]}
                                                 for h in _chosen(decoder.n_heads, head)]}
                    for lay in _chosen(decoder.n_layers, layer)],
        "next_tokens": [{"label": model.tokenizer.token_label(int(i)), "token_id": int(i),
                         "probability": float(probabilities[i])} for i in likeliest(probabilities, NEXT_TOKENS)],
    }


def write_encoder_decoder_json(path: str | os.PathLike, model: EncoderDecoderModel, source: str, target: str,
                               result: EncoderDecoderResult, layer: int | None = None, head: int | None = None) -> None:
    with text_output(path) as handle:
        for piece in json_pieces(encoder_decoder_fields(model, source, target, result, layer, head), 0):
            handle.write(piece)
        handle.write("\n")
