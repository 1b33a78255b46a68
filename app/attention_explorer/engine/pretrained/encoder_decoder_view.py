"""An encoder–decoder's run as the window shows it: one of its three kinds of attention at a time.

The window draws a real model through two objects, the model (name, layers, heads, d_model) and the
trace of its last run (labels, thumbnails, any layer as a Trace). BART has three kinds of attention,
each with its own layers and heads: the encoder's self-attention over the source, the decoder's
causal self-attention over the target and the cross-attention, where each target token reads the
source. EncoderDecoderPart and EncoderDecoderTrace are those two objects for one kind (a "part"), so
the heatmap, arcs, steps and model view draw it as they draw any real model's layer.

Every number is the run's own (encoder_decoder.py): the weights and each head's output as the run
made them, the scores q·kᵀ from its q and k in float64 as every Trace holds them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..lazy_trace import LazyHeadTrace, LazyTrace
from ..options import Options
from ..tokenizer import token_labels
from ..trace import Trace
from .analysis import attention_rollout
from .encoder_decoder import EncoderDecoderModel, EncoderDecoderResult
from .forward import merge_heads
from .real_trace import NextToken, likeliest_tokens
from .thumbnails import pooled
from .tokenizing import Encoded
from .weights import Architecture, ShapeOfArchitecture

ENCODER, DECODER, CROSS = "encoder", "decoder", "cross"
PARTS = {
    ENCODER: "Encoder self-attention",
    DECODER: "Decoder self-attention (causal)",
    CROSS: "Cross-attention (target reads source)",
}


@dataclass(frozen=True)
class EncoderDecoderPart(ShapeOfArchitecture):
    """An encoder–decoder seen through one kind of its attention: its layers and heads are that part's
    (the decoder's for cross-attention)."""

    model: EncoderDecoderModel
    part: str = CROSS

    is_decoder = False          # it writes no continuation of one text: no next tokens, no generation
    is_encoder_decoder = True
    family = "bart"
    kind = "encoder–decoder"

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def arch(self) -> Architecture:
        side = self.model.weights.encoder if self.part == ENCODER else self.model.weights.decoder
        return side.arch

    @property
    def max_tokens(self) -> int:
        """The most tokens of either text it reads (a longer one is cut)."""
        return self.model.tokenizer.max_tokens

    @property
    def tokenizer(self):
        return self.model.tokenizer


@dataclass(frozen=True)
class EncoderDecoderTrace:
    """A source and a target through the model, seen through one part: the rows' tokens (the source's
    for the encoder, the target's otherwise), the columns' (the source's for cross-attention), every
    head's weights and any layer as a Trace."""

    model_name: str
    text: str                      # the source, as typed
    target: str
    result: EncoderDecoderResult = field(repr=False)
    part_of: EncoderDecoderPart = field(repr=False)
    off: frozenset[tuple[str, int, int]] = frozenset()  # the heads the run had off: (part, layer, head)
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    read_from = 0  # its source and target are read whole (PretrainedTrace.read_from)

    @property
    def next_tokens(self) -> tuple[NextToken, ...]:
        """The five likeliest tokens for the target's last token, by the last row's scores: what the decoder
        would write after the tokens it read (whichever part is shown: the run is one)."""
        if "next tokens" not in self.memo:
            self.memo["next tokens"] = likeliest_tokens(self.part_of.tokenizer, self.result.logits[-1])
        return self.memo["next tokens"]

    def scored_probability(self) -> float | None:
        """The probability the last row's scores gave the token that came next (result.scored)."""
        token = self.result.scored
        if token is None:
            return None
        logits = self.result.logits[-1].astype(np.float64)
        return float(1 / np.exp(logits - logits[token]).sum())

    @property
    def part(self) -> str:
        return self.part_of.part

    def with_part(self, part: EncoderDecoderPart) -> EncoderDecoderTrace:
        """The same run seen through another part."""
        return EncoderDecoderTrace(self.model_name, self.text, self.target, self.result, part, self.off)

    @property
    def ablated(self) -> frozenset[tuple[int, int]]:
        """The (layer, head) pairs of the part shown that the run had off."""
        return frozenset((layer, head) for part, layer, head in self.off if part == self.part)

    @property
    def tokens(self) -> list[str]:
        return list(self.result.source.labels) if self.part == ENCODER else list(self.result.target_labels)

    @property
    def labels(self) -> list[str]:
        return token_labels(self.tokens)

    @property
    def key_tokens(self) -> list[str] | None:
        return list(self.result.source.labels) if self.part == CROSS else None

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def n_layers(self) -> int:
        return self.part_of.n_layers

    @property
    def n_heads(self) -> int:
        return self.part_of.n_heads

    @property
    def encoded(self):
        """The source's tokens as the tokenizer gave them (with `cut` when it was too long)."""
        return self.result.source

    @property
    def arch(self) -> Architecture:
        return self.part_of.arch

    @property
    def rows_text(self) -> Encoded:
        """The tokens of the rows: the source's for the encoder, the decoder's input otherwise."""
        return self.result.source if self.part == ENCODER else self.result.target

    @property
    def special(self) -> np.ndarray:
        """The rows' special tokens (the readings hide them)."""
        return self.rows_text.special

    @property
    def words(self) -> tuple[tuple[int, ...], ...]:
        """The rows' words, as runs of their tokens (the readings merge them)."""
        return self.rows_text.words

    @property
    def key_special(self) -> np.ndarray | None:
        """The columns' special tokens when they are the source's (cross-attention), else None."""
        return self.result.source.special if self.part == CROSS else None

    @property
    def key_words(self) -> tuple[tuple[int, ...], ...] | None:
        """The columns' words when they are the source's (cross-attention), else None."""
        return self.result.source.words if self.part == CROSS else None

    def causal_mask(self, n: int) -> np.ndarray:
        """n × n, True where a key comes after its query: the decoder's mask, and that of a reading of it."""
        return _causal_mask(n)

    def causal_masks(self) -> Callable[[int], np.ndarray]:
        """causal_mask as a function that does not hold this trace, for a reading to keep."""
        return _causal_mask

    def hidden_share(self, layer: int, hidden: list[int], hidden_keys: list[int] | None = None) -> float:
        """The mean share of weight the rows left shown give to the columns hidden, over the heads of
        `layer`: the columns of `hidden`, or `hidden_keys` when they are the source's (cross-attention)."""
        weights = self.layer_weights(layer).astype(np.float64)
        rows = np.setdiff1d(np.arange(weights.shape[1]), hidden)
        columns = np.asarray(hidden if hidden_keys is None else hidden_keys, dtype=int)
        kept = weights[:, rows]
        return float((kept[..., columns].sum(axis=-1) / kept.sum(axis=-1)).mean()) if len(columns) else 0.0

    def rollout(self, layer: int) -> np.ndarray:
        """Attention rollout of this part's stack after layer `layer` (analysis.attention_rollout), n × n
        float64: the encoder's over the source or the decoder's over the target (its causal weights
        give a causal rollout). Not for cross-attention, whose rows and columns are two texts."""
        if self.part == CROSS:
            raise ValueError("rollout is of one stack's self-attention, not of cross-attention")
        if "rollout" not in self.memo:
            self.memo["rollout"] = attention_rollout(self.all_weights())
        return self.memo["rollout"][layer]

    def all_weights(self) -> np.ndarray:
        """(layers, heads, rows, keys) float32: every head's weights of this part, as the run made them."""
        return part_weights(self.part, self.result)

    @property
    def key_labels(self) -> list[str] | None:
        """The labels of the columns when they are another text's tokens (cross-attention), else None."""
        tokens = self.key_tokens
        return None if tokens is None else token_labels(tokens)

    @property
    def thumbnails(self) -> np.ndarray:
        """The model view's cells: every head's weights, pooled as a one-text model's are (thumbnails.py)."""
        if "thumbnails" not in self.memo:
            self.memo["thumbnails"] = pooled(self.all_weights())
        return self.memo["thumbnails"]

    def layer_weights(self, layer: int, keep: bool = True) -> np.ndarray:
        """(heads, rows, keys) float32. The run holds every layer's weights, so `keep` (a one-text
        model's choice not to cache a layer made again) changes nothing."""
        return self.all_weights()[layer]

    def weight_row(self, layer: int, head: int, row: int) -> np.ndarray:
        """One row of one head's weights (the model view's readout under the mouse)."""
        return self.all_weights()[layer, head, row]

    def layer_trace(self, layer: int) -> Trace:
        """Layer `layer` of this part as the Trace the single-layer views draw; the last one is kept."""
        kept = self.memo.get("layer trace")
        if kept is None or kept.layer != layer:
            kept = self.memo["layer trace"] = part_trace(self.part_of, self.result, self.text, layer,
                                                         frozenset(h for lay, h in self.ablated if lay == layer))
        return kept


def part_trace(part: EncoderDecoderPart, result: EncoderDecoderResult, source: str, layer: int,
               off: frozenset[int] = frozenset()) -> Trace:
    """One layer of one part as a Trace: x is what the queries read (the decoder's stream for
    cross-attention, whose keys and values read the encoder's last hidden states), the weights and
    outputs the run's own (zero for the heads `off`)."""
    arch, weights = part.arch, part.model.weights
    made = result.layers[part.part][layer]
    projection = weights.cross[layer] if part.part == CROSS else (
        weights.encoder if part.part == ENCODER else weights.decoder).layers[layer]
    attention = part_weights(part.part, result)[layer]
    n = attention.shape[1]
    mask = np.triu(np.ones((n, n), dtype=bool), 1) if part.part == DECODER else None
    heads = []
    for h in range(arch.n_heads):
        columns = slice(h * arch.d_head, (h + 1) * arch.d_head)
        heads.append(LazyHeadTrace(
            _head_makers(attention[h], made.outputs[h], arch.score_divisor, mask),
            index=h, columns=columns, w_q=projection.w_q[:, columns], w_k=projection.w_k[:, columns],
            w_v=projection.w_v[:, columns], q=made.q[h].astype(np.float64), k=made.k[h].astype(np.float64),
            v=made.v[h].astype(np.float64), b_q=projection.b_q[columns], b_k=projection.b_k[columns],
            b_v=projection.b_v[columns], q_before_rope=None, k_before_rope=None, kv_head=None, moved_norm=None))
    concat = merge_heads(made.outputs).astype(np.float64)
    source_tokens = list(result.source.labels)
    tokens = source_tokens if part.part == ENCODER else list(result.target_labels)
    cross = part.part == CROSS
    return LazyTrace(  # every part given, nothing to make: lazy only so that a reading's `replaced` copies it
        {}, model_name=part.name, sentence=source, tokens=tokens, labels=token_labels(tokens), unknown=[],
        features=[f"d{i + 1}" for i in range(arch.d_model)],
        options=Options(scale=True, causal=part.part == DECODER, positional=False, heads=arch.n_heads),
        embedding=made.x, positional=None, x=made.x, mask=mask, heads=tuple(heads), concat=concat,
        w_o=projection.w_o, output=concat @ projection.w_o + projection.b_o, layer=layer, b_o=projection.b_o,
        ablated_heads=off,
        key_tokens=source_tokens if cross else None, key_labels=token_labels(source_tokens) if cross else None,
        key_x=result.memory if cross else None,
    )


def _head_makers(weights: np.ndarray, output: np.ndarray, divisor: float, mask: np.ndarray | None) -> dict:
    """A head's n × n_keys matrices, made when a view first reads them (a 1,024-token text's are 8 MB
    each): the scores q·kᵀ from the run's q and k, scaled and masked as the run did, and the run's own
    weights and output."""
    def masked(head):
        values = head.scaled.copy()
        if mask is not None:
            values[mask] = -np.inf
        return values

    return {"scores": lambda head: head.q @ head.k.T, "scaled": lambda head: head.scores / divisor,
            "masked": masked, "weights": lambda _head: weights.astype(np.float64),
            "output": lambda _head: output.astype(np.float64), "norm": lambda _head: None}


def part_weights(part: str, result: EncoderDecoderResult) -> np.ndarray:
    """(layers, heads, rows, keys) float32: one part's weights of every layer and head."""
    return {ENCODER: result.encoder_attention, DECODER: result.decoder_attention,
            CROSS: result.cross_attention}[part]


def _causal_mask(n: int) -> np.ndarray:
    return np.triu(np.ones((n, n), dtype=bool), 1)
