"""Mistral: Llama (llama.py) with a sliding window.

    a query i sees key j only when i − w < j ≤ i, w = `sliding_window` (null or absent: no window),
    in every layer. This is transformers' rule (key j > i − w): the w tokens ending at the query,
    itself included; the key exactly w before it is the first one left out.

The window is part of each layer's mask (Architecture.windows): the forward and a generation's
one-token steps give the keys outside it −∞ before the softmax, so their weight is exactly 0, and a
layer's trace carries the window in its mask, so a view draws those cells as masked, not as zeros.
Tensors: Llama's names.
"""

from __future__ import annotations

from ..fields import Fields
from ..weights import Architecture
from . import llama
from .shared import Family, sliding_windows


def architecture(fields: Fields) -> Architecture:
    n_layers = fields.count("num_hidden_layers")
    return llama.architecture(fields, "mistral",
                              windows=sliding_windows(fields, n_layers, by_layer=False, default_window=4096))


FAMILY = Family(
    name="mistral", title="Mistral", decoder=True, architectures=("MistralForCausalLM", "MistralModel"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=llama.weights,
    plain={"mlp_bias": False}, tied_by_default=False,
)
