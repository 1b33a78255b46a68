"""A decoder's next-token loss at every position of a text: −ln p(token t + 1 | tokens ≤ t), in nats.

engine.pretrained's forward keeps the logits after the last token only (the window shows the five
likeliest next tokens). The loss at every position needs the last block's output for every token, so
this finishes the forward from what the trace keeps: the last layer's stored input, its attention
output (the layer made again, with any heads switched off) and the model's own building blocks (the
forward's after_attention and output_logits, so every family's layout and soft-capping hold). Only
decoders have a next-token head.
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionsError
from ..pretrained.forward import after_attention, final_norm, output_logits


def final_stream(model, ptrace) -> np.ndarray:
    """The normalised output of the last block for every token, n × d_model."""
    weights = model.weights
    arch = weights.arch
    if not arch.is_decoder:
        raise OptionsError(f"{model.name} is an encoder: it has no next-token head, so no next-token loss")
    last = arch.n_layers - 1
    h = after_attention(arch, weights.layers[last], ptrace.forward_result.layer_inputs[last],
                        ptrace.layer_trace(last).output)
    return final_norm(weights, h)


def next_token_losses(model, ptrace) -> np.ndarray:
    """(n − 1,) losses: entry t is the loss of predicting token t + 1 from tokens 0 … t."""
    stream = final_stream(model, ptrace)[:-1]
    logits = output_logits(model.weights, stream).astype(np.float64)  # (n − 1, vocab)
    logits -= logits.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(logits).sum(axis=1))
    targets = np.asarray(ptrace.encoded.ids)[1:]
    return log_norm - logits[np.arange(len(targets)), targets]
