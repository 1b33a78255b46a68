"""A generation as JSON or CSV (no Qt, like export.py, whose safe writers it uses).

JSON: the prompt, the settings, the model, and every step — its token, the five candidates it was
chosen from with their probabilities, and the attention rows of the chosen layers and heads (the
weights the token read last gave every token up to it), one head's row a line. CSV: one row per
step (the token, its probability, the candidates), for a spreadsheet. Layers and heads count from 1.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence

from .engine.pretrained import PretrainedModel
from .engine.pretrained.generate import Generation
from .engine.pretrained.generation_trace import step_rows
from .engine.pretrained.sampling import CANDIDATES
from .export import json_pieces, text_output
from .export_pretrained import model_shape


def token_fields(model, token_id: int) -> dict:
    """A token of `model` (any model with a tokenizer: a decoder, an encoder–decoder) as the JSON names it."""
    token_id = int(token_id)
    return {"token_id": token_id, "text": model.tokenizer.token_text(token_id),
            "label": model.tokenizer.token_label(token_id)}


def candidates_fields(model, choice) -> list[dict]:
    """The candidates a token was chosen from, likeliest first."""
    return [{**token_fields(model, c.token_id), "probability": c.probability, "drawn_from": c.drawn_from}
            for c in choice.candidates]


def settings_fields(settings, stop_ids: Sequence[int], **more) -> dict:
    """How a generation was asked for: the count, the sampling, then `more`, then the stop tokens."""
    sampling = settings.sampling
    return {"tokens": settings.tokens, "sampling": sampling.describe(), "temperature": sampling.temperature,
            "top_k": sampling.top_k, "top_p": sampling.top_p, "seed": sampling.seed, **more,
            "stop_token_ids": list(stop_ids)}


def generation_fields(model: PretrainedModel, generation: Generation, layers: Sequence[int],
                      heads: Sequence[int]) -> dict:
    """The JSON layout (rows still NumPy); `layers` and `heads` 0-based, the ones whose rows are kept."""
    settings = generation.settings
    steps = []
    for index, (step, rows) in enumerate(zip(generation.steps, step_rows(model, generation, layers, heads),
                                             strict=True)):
        steps.append({
            "step": index + 1, **token_fields(model, step.token_id), "probability": step.choice.probability,
            "candidates": candidates_fields(model, step.choice),
            "attention": list(rows),  # per layer: a row per head over the prompt's tokens and those written before
        })
    return {
        "model": generation.model_name,
        "shape": model_shape(model),
        "prompt": generation.prompt,
        "chat": settings.chat,
        "text": generation.text,
        "settings": settings_fields(settings, generation.stop_ids,
                                    ablated=[[layer + 1, head + 1] for layer, head in sorted(settings.ablate)]),
        "prompt_tokens": [token_fields(model, i) for i in generation.prompt_ids],
        "cut": None if generation.cut is None else generation.cut.to_dict(),
        "written": generation.written,
        "stopped": generation.stopped,
        "attention_layers": [layer + 1 for layer in layers],
        "attention_heads": [head + 1 for head in heads],
        "steps": steps,
    }


def write_generation_json(path: str | os.PathLike, model: PretrainedModel, generation: Generation,
                          layers: Sequence[int], heads: Sequence[int]) -> None:
    """Into `path` (or standard output for "-"), atomically, one matrix row a line."""
    with text_output(path) as handle:
        for piece in json_pieces(generation_fields(model, generation, layers, heads), 0):
            handle.write(piece)
        handle.write("\n")


def write_generation_csv(path: str | os.PathLike, model: PretrainedModel, generation: Generation) -> None:
    """One row per step: step, token_id, token, probability, then each candidate and its probability."""
    header = ["step", "token_id", "token", "probability"]
    for rank in range(1, CANDIDATES + 1):
        header += [f"candidate_{rank}", f"probability_{rank}"]
    with text_output(path) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for index, step in enumerate(generation.steps):
            row = [index + 1, step.token_id, step.text, step.choice.probability]
            for candidate in step.choice.candidates:
                row += [model.tokenizer.token_text(candidate.token_id), candidate.probability]
            writer.writerow(row)
