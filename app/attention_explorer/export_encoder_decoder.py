"""An encoder–decoder's run (engine/pretrained/encoder_decoder.py) as JSON: both texts' tokens, the model's
two shapes, and for the chosen layers and heads the encoder's self-attention, the decoder's causal
self-attention and its cross-attention (target tokens as rows, source tokens as columns: which source
token each target token reads), with the five likeliest next tokens after the target. And a target it
wrote (encoder_decoder_write.py): every step's token, its candidates, whether the files forced it, and
the rows of self- and cross-attention of the token read last in the chosen layers and heads. No Qt.

Written as every export is (export.text_output: safely, or to standard output for "-"), each matrix one
row per line (export.json_pieces). Layers and heads are counted from 1, as on the command line.
"""

from __future__ import annotations

import os

from .engine.pretrained.encoder_decoder import EncoderDecoderModel, EncoderDecoderResult
from .engine.pretrained.encoder_decoder_write import TargetGeneration
from .engine.pretrained.sampling import likeliest, softmax
from .engine.pretrained.weights import Architecture
from .export import json_pieces, text_output
from .export_generation import candidates_fields, settings_fields, token_fields

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


def target_generation_fields(model: EncoderDecoderModel, generation: TargetGeneration, layer: int | None = None,
                             head: int | None = None) -> dict:
    """The JSON layout of a target written (rows still NumPy); `layer` and `head` 0-based, None for all."""
    decoder = model.weights.decoder.arch
    layers, heads = list(_chosen(decoder.n_layers, layer)), list(_chosen(decoder.n_heads, head))
    steps = [{"step": index + 1, **token_fields(model, step.token_id), "probability": step.choice.probability,
              "forced": step.forced, "candidates": candidates_fields(model, step.choice),
              # per chosen layer, a row per chosen head: the token read last, on the target read so far and on
              # the source
              "self_attention": list(step.self_attention[layers][:, heads]),
              "cross_attention": list(step.cross_attention[layers][:, heads])}
             for index, step in enumerate(generation.steps)]
    return {
        "model": model.name,
        "shape": {"family": "bart", "kind": "encoder–decoder", "encoder": _shape(model.weights.encoder.arch),
                  "decoder": _shape(decoder)},
        "source": generation.source_text,
        "source_tokens": [token_fields(model, i) for i in generation.source.ids],
        "decoder_start": token_fields(model, generation.decoder_start),
        "settings": settings_fields(generation.settings, generation.stop_ids),
        "written": generation.written,
        "stopped": generation.stopped,
        "attention_layers": [lay + 1 for lay in layers],
        "attention_heads": [h + 1 for h in heads],
        "steps": steps,
    }


def write_target_generation_json(path: str | os.PathLike, model: EncoderDecoderModel, generation: TargetGeneration,
                                 layer: int | None = None, head: int | None = None) -> None:
    with text_output(path) as handle:
        for piece in json_pieces(target_generation_fields(model, generation, layer, head), 0):
            handle.write(piece)
        handle.write("\n")
