"""The result of one real-model forward: every layer's and head's weights, and one layer as a Trace.

The views that draw a toy model's Trace (heatmap, arcs, steps) draw any layer of a real model
through `layer_trace`, which recomputes that layer's Q, K, V and scores from the stored layer
input (a few milliseconds) instead of keeping them for all layers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..options import Options
from ..softmax import causal_mask
from ..threads import single_blas_thread
from ..tokenizer import token_labels
from ..trace import HeadTrace, Trace
from .analysis import attention_rollout
from .forward import ForwardResult, head_scores, merge_heads, project, rope_for
from .tokenizing import Encoded
from .weights import ModelWeights


@dataclass(frozen=True)
class NextToken:
    """One candidate for the token after the text (decoders)."""

    token_id: int
    text: str          # what it writes, e.g. " mat"
    label: str         # tidy, as the token labels
    probability: float


@dataclass(frozen=True)
class PretrainedTrace:
    """A text through a real model: tokens, labels, and the attention of every layer and head."""

    model_name: str
    text: str
    encoded: Encoded
    labels: list[str]                  # tidy and told apart ("the₁", "the₂"), for axes
    weights: np.ndarray                # (layers, heads, n, n) float32
    ablated: frozenset[tuple[int, int]]  # (layer, head) pairs switched off, 0-based
    next_tokens: tuple[NextToken, ...]  # decoders: the five likeliest next tokens; encoders: empty
    model: ModelWeights = field(repr=False)
    forward_result: ForwardResult = field(repr=False)

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def tokens(self) -> list[str]:
        return list(self.encoded.labels)

    @property
    def special(self) -> np.ndarray:
        return self.encoded.special

    @property
    def words(self) -> tuple[tuple[int, ...], ...]:
        return self.encoded.words

    def rollout(self) -> np.ndarray:
        """Attention rollout after each layer, (layers, n, n) — see analysis.attention_rollout."""
        with single_blas_thread():
            return attention_rollout(self.weights)

    def layer_trace(self, layer: int) -> Trace:
        """Layer `layer` (0-based) as the Trace the single-layer views draw, every head with its q, k, v.

        X is what the layer's W_Q, W_K, W_V read (normalised first in GPT-2 and Llama); it also stands
        in for the embedding, so the "embed" step shows the layer's input as it is. The weights are
        the forward pass's own, so every view of a layer agrees with the model view to the bit.
        """
        arch, weights = self.model.arch, self.model.layers[layer]
        x = self.forward_result.attn_inputs[layer]
        with single_blas_thread():
            rotary = rope_for(arch, self.n)
            p = project(arch, weights, x, rotary)
            scores = head_scores(arch, p.q, p.k)
        scaled = scores / np.float32(np.sqrt(arch.d_head))
        mask = causal_mask(self.n) if arch.is_decoder else None
        masked = scaled.copy()
        if mask is not None:
            masked[:, mask] = -np.inf
        stored = self.weights[layer]
        off = {head for lay, head in self.ablated if lay == layer}
        heads = []
        for h in range(arch.n_heads):
            kv = h // arch.group
            q_cols = slice(h * arch.d_head, (h + 1) * arch.d_head)
            kv_cols = slice(kv * arch.d_head, (kv + 1) * arch.d_head)
            output = np.zeros_like(p.q[h]) if h in off else stored[h] @ p.v[kv]
            rope = arch.family == "llama"
            heads.append(HeadTrace(
                index=h, columns=q_cols, w_q=weights.w_q[:, q_cols], w_k=weights.w_k[:, kv_cols],
                w_v=weights.w_v[:, kv_cols], q=p.q[h], k=p.k[kv], v=p.v[kv], scores=scores[h],
                scaled=scaled[h], masked=masked[h], weights=stored[h], output=output,
                b_q=_part(weights.b_q, q_cols), b_k=_part(weights.b_k, kv_cols), b_v=_part(weights.b_v, kv_cols),
                q_before_rope=p.q_raw[h] if rope else None, k_before_rope=p.k_raw[kv] if rope else None,
                kv_head=kv if arch.group > 1 else None,
            ))
        concat = merge_heads(np.stack([head.output for head in heads]))
        output = concat @ weights.w_o
        if weights.b_o is not None:
            output += weights.b_o
        return Trace(
            model_name=self.model_name, sentence=self.text, tokens=self.tokens, labels=list(self.labels),
            unknown=[], features=[f"d{i + 1}" for i in range(arch.d_model)],
            options=Options(scale=True, causal=arch.is_decoder, positional=False, heads=arch.n_heads),
            embedding=x, positional=None, x=x, mask=mask, heads=tuple(heads), concat=concat, w_o=weights.w_o,
            output=output, layer=layer, b_o=weights.b_o, ablated_heads=frozenset(off),
            rope_cos=None if rotary is None else rotary[0], rope_sin=None if rotary is None else rotary[1],
        )


def _part(bias: np.ndarray | None, cols: slice) -> np.ndarray | None:
    return None if bias is None else bias[cols]


def make_labels(encoded: Encoded) -> list[str]:
    """Axis labels: the tidy pieces with repeats told apart."""
    return token_labels(encoded.labels)
