"""A decoder's next-token loss at every position of a text: −ln p(token t + 1 | tokens ≤ t), in nats.

engine.pretrained's forward keeps the logits after the last token only (the window shows the five
likeliest next tokens). The loss at every position needs the last block's output for every token, so
this finishes the forward from what the trace keeps: the last layer's stored input, its attention
output (the layer made again, with any heads switched off) and the model's own building blocks. Only
decoders (pre-norm: GPT-2, Llama) have a next-token head.
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionsError
from ..pretrained.forward import _feed_forward, norm
from ..threads import single_blas_thread


def final_stream(model, ptrace) -> np.ndarray:
    """The normalised output of the last block for every token, n × d_model."""
    weights = model.weights
    arch = weights.arch
    if not arch.is_decoder:
        raise OptionsError(f"{model.name} is an encoder: it has no next-token head, so no next-token loss")
    last = arch.n_layers - 1
    layer = weights.layers[last]
    h = ptrace.forward_result.layer_inputs[last] + ptrace.layer_trace(last).output
    with single_blas_thread():
        h = h + _feed_forward(arch, layer, norm(arch, h, layer.mlp_norm, layer.mlp_norm_bias))
        return norm(arch, h, weights.final_norm, weights.final_norm_bias)


def next_token_losses(model, ptrace) -> np.ndarray:
    """(n − 1,) losses: entry t is the loss of predicting token t + 1 from tokens 0 … t."""
    weights = model.weights
    head = weights.lm_head if weights.lm_head is not None else weights.token_embedding
    stream = final_stream(model, ptrace)[:-1]
    with single_blas_thread():
        logits = (stream @ head.T).astype(np.float64)                      # (n − 1, vocab)
    logits -= logits.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(logits).sum(axis=1))
    targets = np.asarray(ptrace.encoded.ids)[1:]
    return log_norm - logits[np.arange(len(targets)), targets]
