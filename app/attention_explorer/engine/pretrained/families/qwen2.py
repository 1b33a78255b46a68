"""Qwen2 and Qwen2.5: Llama (llama.py) with biases on q, k and v.

    q = x·W_Q + b_Q,  k = x·W_K + b_K,  v = x·W_V + b_V      (W_O has no bias)

Its files may ask for a sliding window (`use_sliding_window`, off in the released models) in the
layers from `max_window_layers` on, or as `layer_types` names them; the window's rule is Mistral's
(mistral.py).
Tensors: Llama's names, plus self_attn.{q,k,v}_proj.bias, which must be there.
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, ModelWeights, TensorSource
from . import llama
from .shared import Family, sliding_windows


def windows(fields: Fields) -> tuple[int, ...]:
    """Qwen's switch: a window only with `use_sliding_window`, in the layers from `max_window_layers` on."""
    if not fields.flag("use_sliding_window", default=False):
        return ()
    n_layers = fields.count("num_hidden_layers")
    first = fields.count("max_window_layers", default=28, minimum=0)
    return sliding_windows(fields, n_layers, ["sliding_attention" if i >= first else "full_attention"
                                              for i in range(n_layers)], default_window=4096)


def architecture(fields: Fields) -> Architecture:
    return llama.architecture(fields, "qwen2", windows=windows(fields))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return llama.model_weights(arch, src, progress, lambda a, s, i: llama.layer(a, s, i, biases="qkv"))


FAMILY = Family(
    name="qwen2", title="Qwen2 / Qwen2.5", decoder=True, architectures=("Qwen2ForCausalLM", "Qwen2Model"),
    prefixes=("model.",), layer_pattern=llama.LAYERS, architecture=architecture, weights=weights,
    tied_by_default=False,
)
