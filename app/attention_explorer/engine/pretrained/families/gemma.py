"""Gemma: Llama (llama.py) with a GeGLU feed-forward, norms that scale by 1 + w, and embeddings
scaled up by √d_model.

    h₀ = E[t] · √d_model                              (the factor rounded to float32, as transformers)
    RMS(x) = x / √(mean x² + ε) · (1 + w)             the files store w − 1 of Llama's weight
    feed-forward = W_down·(gelu_tanh(x·W_gate) ⊙ x·W_up)
    next-token scores = RMS_f(h_last)·Eᵀ              tied, from the unscaled embedding

`hidden_act` "gelu" in Gemma's files means the tanh approximation (transformers reads it so).
A head's width is its own (`head_dim`, 256 in the released models). Biases as Llama
(`attention_bias`). Tensors: Llama's names.
"""

from __future__ import annotations

import math

from ..fields import Fields
from ..weights import Architecture
from . import llama
from .shared import ACTIVATIONS, Family, refuse_true


def gemma_activation(fields: Fields, *names: str) -> str:
    name = fields.text(*names, default="gelu_pytorch_tanh", choices=ACTIVATIONS)
    return "gelu_tanh" if name == "gelu" else ACTIVATIONS[name]


def architecture(fields: Fields) -> Architecture:
    refuse_true(fields, "use_bidirectional_attention")
    return llama.architecture(fields, "gemma", act=gemma_activation(fields, "hidden_act"), norm_offset=1.0,
                              embed_scale=math.sqrt(fields.count("hidden_size")))


FAMILY = Family(
    name="gemma", title="Gemma", decoder=True, architectures=("GemmaForCausalLM", "GemmaModel"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=llama.weights,
)
