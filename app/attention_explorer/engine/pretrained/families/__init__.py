"""Every family of checkpoints the app opens, one module each.

A family's module says, in its docstring, what its maths adds to the shared forward (forward.py) and
how its tensors are named, and in code how config.json's fields set the shared Architecture and how
its tensors fill the shared LayerWeights and ModelWeights (weights.py). A family that changes little
from another reads its base's layout through the base's module and says only what differs.

A folder is recognised by config.json's `model_type`, or, when that is missing, by its
`architectures`; anything else is refused with a message naming what the file says and every
family known; a folder of a model only part of which opens (Gemma 3 with its vision model) is
refused with a message saying which part would, and an encoder–decoder (BART, bart.py) with one
saying why: it needs a source and a target text, which only encoder_decoder.py gives it so far.
"""

from __future__ import annotations

from ...errors import ModelError
from ..fields import Fields, shown
from . import (
    bart,
    bert,
    distilbert,
    gemma,
    gemma2,
    gemma3,
    gpt2,
    gpt_neox,
    llama,
    mistral,
    modernbert,
    olmo2,
    phi3,
    qwen2,
    qwen3,
    roberta,
)
from .shared import Family

FAMILIES: dict[str, Family] = {module.FAMILY.name: module.FAMILY for module in (
    bert, roberta, distilbert, modernbert, gpt2, gpt_neox, llama, mistral, qwen2, qwen3, phi3, olmo2, gemma, gemma2,
    gemma3)}
_BY_ARCHITECTURE = {name: family for family in FAMILIES.values() for name in family.architectures}
# folders of a model only part of which opens here (config.json's model_type → what it holds, what opens)
PARTS = {"gemma3": "Gemma 3 with its vision model (Gemma3ForConditionalGeneration); only the text model opens, a "
                   "folder of Gemma3ForCausalLM (model_type 'gemma3_text')"}
# encoder–decoders (bart.py): the engine runs them on a source and a target text (encoder_decoder.py), which
# the one-text path cannot give them; refused there with one message rather than opened as one half
ENCODER_DECODERS = {bart.NAME: bart.TITLE}


def known() -> str:
    """Every family, as a message lists them: "BERT (bert), RoBERTa (roberta), …"."""
    return ", ".join(f"{family.title} ({family.name})" for family in FAMILIES.values())


def family_of(config: dict) -> Family:
    """The family of a config.json: by `model_type`, else by the first of `architectures` known."""
    fields = Fields(config, "config.json")
    model_type = fields.raw("model_type", default=None)
    if model_type is not None:
        model_type = fields.text("model_type")
    architectures = config.get("architectures")
    names = [a for a in architectures if isinstance(a, str)] if isinstance(architectures, list) else []
    if model_type in FAMILIES:
        return FAMILIES[model_type]
    if model_type in PARTS:
        raise ModelError(f"config.json: model_type {shown(model_type)} is {PARTS[model_type]}")
    if model_type in ENCODER_DECODERS:
        raise ModelError(f"config.json: model_type {shown(model_type)} is {ENCODER_DECODERS[model_type]}, an "
                         f"encoder–decoder: it reads a source text and writes a target text, so it opens apart from "
                         f"the one-text models: in the window (with a Target box), or with the command line's "
                         f"`trace --sentence SOURCE --target TARGET`, which writes its attention as JSON")
    if model_type is None:
        for name in names:
            if name in _BY_ARCHITECTURE:
                return _BY_ARCHITECTURE[name]
    found = []
    if model_type is not None:
        found.append(f"model_type {shown(model_type)}")
    if names:
        found.append(f"architectures {', '.join(shown(name) for name in names[:4])}")
    said = " and ".join(found) if found else "neither model_type nor architectures"
    raise ModelError(f"config.json: {said}: not a family this app opens; it opens {known()}")
