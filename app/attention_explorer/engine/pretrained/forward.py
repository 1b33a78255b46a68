"""One float32 forward pass of any family's model, keeping what any layer can be remade from.

One function for every family, driven by the Architecture's fields (weights.py); each family's
module (families/) says which it sets. The shared computation, with what the fields switch:

    h₀ = E[t]·embed_scale + P[position] + T[0], then LN (BERT's embedding norm)   (each part if present)
    per layer, with N(x) the model's norm (LayerNorm, or RMSNorm scaled by w + norm_offset):
      residual "post":      h = N(h + Attn(h));       h = N(h + FFN(h))             BERT, RoBERTa, DistilBERT
      residual "pre":       h = h + P_a(Attn(N(h)));  h = h + P_f(FFN(N(h)))        GPT-2, Llama and most
                            (P_a, P_f: the post-norms of OLMo 2 and Gemma 2, else nothing; OLMo 2 has
                            no N before its sub-layers)
      residual "parallel":  h = h + Attn(N₁(h)) + FFN(N₂(h))                        GPT-NeoX
    Attn: q, k, v = x·W + b; q and k RMS-normalised per head or over the whole projection (qk_norm),
          then turned by RoPE over their first rotary_dims (none for learned positions; a layer's own
          base and linear factor when the layers differ, rope_layers; frequencies scaled for a longer
          context, rope_scaling: rope.py); scores
          q·kᵀ ÷ score_divisor, soft-capped (attn_softcap), masked (a decoder's later keys, and keys
          outside a layer's sliding window: before a decoder's query, on either side of an encoder's),
          softmax, ·v; query head h reads kv head h // group; the heads side by side · W_O + b_O
    FFN:  W_down·act(x·W_up + b_up) + b_down, or gated: W_down·(act(x·W_gate + b_gate) ⊙ (x·W_up + b_up)) + b_down
    next-token scores (decoders): N_f(h_last)·W_outᵀ (W_out tied to E unless the file has its own),
          soft-capped (final_softcap)
An ablated head's output is zeroed before W_O, so every later layer (and the next token) changes.

What is kept grows with layers × n × d_model, not with layers × heads × n²: the residual stream
entering each layer (from which its q, k, v and weights are made again when a view asks, see
real_trace) and each head's thumbnail, pooled block by block as the attention is computed
(thumbnails.py). The attention itself runs in blocks of query rows (blocks.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from ..memory import OWN_PAGES_FROM_TOKENS, own_pages
from .blocks import block_of, block_outputs, block_weights, row_blocks
from .ops import ACTIVATIONS, apply_rope, bias_part, layer_norm, rms_norm, soft_cap
from .progress import Progress, report
from .rope import rope_tables
from .stored_rows import StoredRows
from .thumbnails import pool_rows_into, thumb_size, thumb_step
from .weights import Architecture, LayerWeights, ModelWeights

FFN_ROWS = 512  # rows through a feed-forward at once: the products still run at BLAS's full rate


@dataclass(frozen=True)
class Projections:
    """One layer's queries, keys and values split into heads: (heads, n, d_head)."""

    q: np.ndarray         # after RoPE when the model has it
    k: np.ndarray         # (kv_heads, n, d_head), after RoPE
    v: np.ndarray
    q_raw: np.ndarray | None  # before RoPE, after the q/k norm when the model has one (the same arrays as
    k_raw: np.ndarray | None  # q and k without RoPE); None where they are not kept (a generation's shared
                              # projections): LayerMaker.before_rope makes them for a layer shown
    k_t: np.ndarray       # k transposed, (kv_heads, d_head, n) in row order: BLAS multiplies a few
                          # queries by it half as fast again as by k's transposed view
    scale: float = 1.0    # 1 ÷ the score divisor (√d_head, or √query_scalar)

    def nbytes(self) -> int:
        """What its arrays take, each once: q_raw and k_raw are q and k themselves without RoPE, and k may be
        a view of k_t (a generation's shared projections)."""
        arrays = {id(a): a for a in (self.q, self.v, self.k_t, self.q_raw, self.k_raw) if a is not None}
        k = 0 if np.may_share_memory(self.k, self.k_t) or id(self.k) in arrays else self.k.nbytes
        return sum(a.nbytes for a in arrays.values()) + k

    def q_scaled(self) -> np.ndarray:
        """q × scale, as every weight is made from (n × d values to scale instead of n × n); q itself
        when the scale is 1, the same numbers (read, never written)."""
        return self.q if self.scale == 1.0 else self.q * np.float32(self.scale)

    def one_head(self, head: int, group: int) -> tuple[np.ndarray, np.ndarray]:
        """Query head `head`'s q × scale (1, n, d_head) and its key head's k_t (1, d_head, n): the numbers
        q_scaled and k_t hold for it, without scaling every other head's q (`group`: query heads a key
        head serves)."""
        key_head = head // group
        return self.q[head:head + 1] * np.float32(self.scale), self.k_t[key_head:key_head + 1]


class ShownLayer(NamedTuple):
    """A layer's q, k, v and every head's weights (heads, n, n), as the forward made them."""
    layer: int
    projections: Projections
    weights: np.ndarray


@dataclass(frozen=True)
class ForwardResult:
    layer_inputs: list[np.ndarray]  # the residual stream entering each layer, n × d_model
    thumbnails: np.ndarray          # (layers, heads, m, m) float32: each head's weights pooled (thumbnails.py)
    sinks: np.ndarray               # (layers, heads, n, 2) float32: each row's weight on the first token and
                                    # on the special tokens, the ones a reading may hide
    next_logits: np.ndarray | None  # decoders: the logits after the last token, vocab
    overflow: str = ""              # where the numbers stopped being finite ("layer 3"), or ""
    at_once: int | None = None      # a generation's text so far, under a scaling that follows the reading's
                                    # length: read `at_once` tokens at once, then one at a time (rope_for)
    read_from: int = 0              # the first token this forward read through every layer; the layer inputs
                                    # of the ones before were an earlier forward's (forward's `prefix`)
    to_the_bit: bool = True         # every layer input is a forward's of this whole text at once, to the bit;
                                    # False when some were made by reading fewer tokens (a prefix kept, a
                                    # generation read token by token, or so in the result this one resumed
                                    # from): the whole forward's then to the rounding of products of another
                                    # length
    shown: list[ShownLayer] = field(default_factory=list, compare=False)  # forward's `show_layer`, made on
                                    # the way, until the first maker of this result's layers takes it


def norm(arch: Architecture, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """The model's norm of `x` over its last axis: LayerNorm or RMSNorm, scaled by weight + norm_offset."""
    if arch.norm_offset:
        weight = weight + np.float32(arch.norm_offset)
    return (rms_norm if arch.norm == "rms" else layer_norm)(x, weight, bias, arch.norm_eps)


def _normed(arch: Architecture, x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None = None
            ) -> np.ndarray:
    """`x` through a norm the layer may not have (None: `x` as it is)."""
    return x if weight is None else norm(arch, x, weight, bias)


def attention_input(arch: Architecture, layer: LayerWeights, h: np.ndarray) -> np.ndarray:
    """What a layer's W_Q, W_K, W_V read: its input, normalised first when the model is pre-LN (and has
    a norm there: OLMo 2 has none)."""
    return _normed(arch, h, layer.attn_norm, layer.attn_norm_bias) if arch.pre_norm else h


def affine(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x·W + b (no bias: x·W), the product every projection of every family is."""
    y = x @ w
    if b is not None:
        y += b
    return y


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(n, heads·d) → (heads, n, d), contiguous: NumPy hands stacked products of contiguous
    arrays to BLAS, and strided ones to a slower loop of its own."""
    n = x.shape[0]
    return np.ascontiguousarray(x.reshape(n, heads, -1).transpose(1, 0, 2))


def project(arch: Architecture, layer: LayerWeights, x: np.ndarray, rope: tuple | None, queries_from: int = 0
            ) -> Projections:
    """Q, K, V of every head of `layer` on its input `x` (n × d_model): projected, q and k normalised
    (qk_norm), split into heads, q and k turned (rope). `queries_from`: only the queries of rows
    queries_from … n − 1 are made (an edit's forward that keeps the weights of the rows before: see
    forward's `prefix`), the rows before are zeros; the keys and values of every row are."""
    q, k, v = _projected_rows(layer, x, queries_from)
    if arch.qk_norm == "whole":                                 # over every head's numbers at once
        q, k = norm(arch, q, layer.q_norm, None), norm(arch, k, layer.k_norm, None)
    q_raw, k_raw, v = split_heads(q, arch.n_heads), split_heads(k, arch.n_kv_heads), split_heads(v, arch.n_kv_heads)
    # the projected rows go with their last views, before RoPE's arrays are made (they had been held
    # through RoPE, a forward's largest moment: 7.5 MiB more at 2,048 SmolLM2 tokens)
    del q, k
    if arch.qk_norm == "head":                                  # over each head's d_head numbers
        q_raw, k_raw = norm(arch, q_raw, layer.q_norm, None), norm(arch, k_raw, layer.k_norm, None)
    if rope is None:
        q, k = q_raw, k_raw
    else:
        q, k = apply_rope(q_raw, *(table[queries_from:] for table in rope)), apply_rope(k_raw, *rope)
    if queries_from:
        turned = _below_zero_rows(q, queries_from)
        q_raw = turned if q_raw is q else _below_zero_rows(q_raw, queries_from)
        q = turned
    return Projections(q, k, v, q_raw, k_raw, np.ascontiguousarray(k.transpose(0, 2, 1)), 1 / arch.score_divisor)


def _below_zero_rows(made: np.ndarray, rows: int) -> np.ndarray:
    """(heads, rows + m, d): `rows` rows of zeros above the m rows `made`, in one new array."""
    heads, count, d = made.shape
    whole = np.zeros((heads, rows + count, d), dtype=made.dtype)
    whole[:, rows:] = made
    return whole


def _projected_rows(layer: LayerWeights, x: np.ndarray, queries_from: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x·W_Q, x·W_K, x·W_V (+ biases) as row views of one product over the fused matrix, or with
    `queries_from` (see project) of two over its column blocks, which BLAS reads in place."""
    q_end, k_end = layer.w_q.shape[1], layer.w_q.shape[1] + layer.w_k.shape[1]
    if queries_from:
        q = affine(x[queries_from:], layer.w_qkv[:, :q_end], bias_part(layer.b_qkv, slice(0, q_end)))
        kv = affine(x, layer.w_qkv[:, q_end:], bias_part(layer.b_qkv, slice(q_end, None)))
        return q, kv[:, :k_end - q_end], kv[:, k_end - q_end:]
    qkv = affine(x, layer.w_qkv, layer.b_qkv)  # (n, q | k | v)
    return qkv[:, :q_end], qkv[:, q_end:k_end], qkv[:, k_end:]


def project_head(arch: Architecture, layer: LayerWeights, x: np.ndarray, rope: tuple | None, head: int
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """Query head `head`'s q × scale (1, n, d_head) and its key head's k transposed (1, d_head, n), as
    project makes them, from two products of d_head columns instead of every head's q, k and v: one
    row of one head (a hover on the model view) then costs a thirtieth of the layer's projections.
    None where the model normalises q and k over every head at once (qk_norm "whole"). BLAS may give a
    few columns other bits than the whole product gives them: the caller checks (LayerMaker)."""
    if arch.qk_norm == "whole":
        return None
    d, q_end = arch.d_head, layer.w_q.shape[1]
    key_head = head // arch.group
    columns = (slice(head * d, (head + 1) * d), slice(q_end + key_head * d, q_end + (key_head + 1) * d))
    q, k = (affine(x, layer.w_qkv[:, part], bias_part(layer.b_qkv, part))[None] for part in columns)
    if arch.qk_norm == "head":
        q, k = norm(arch, q, layer.q_norm, None), norm(arch, k, layer.k_norm, None)
    if rope is not None:
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
    return q * np.float32(1 / arch.score_divisor), np.ascontiguousarray(k.transpose(0, 2, 1))


def merge_heads(outputs: np.ndarray) -> np.ndarray:
    heads, n, d = outputs.shape
    return outputs.transpose(1, 0, 2).reshape(n, heads * d)


def rope_for(arch: Architecture, n: int, at_once: int | None = None) -> list[tuple | None]:
    """Each layer's rotary tables of positions 0 … n − 1 (cos, sin: n × rotary_dims), None without RoPE;
    the layers of one base and factor share theirs (most models: one for every layer). `at_once`: the
    text was read `at_once` tokens at once and then one at a time (a generation), which a scaling
    that follows the reading's length turns by (rope.lengths); None: at once."""
    if not arch.rotary:
        return [None] * arch.n_layers
    made: dict[tuple[float, float], tuple] = {}
    for layer in range(arch.n_layers):
        if arch.rope(layer) not in made:
            made[arch.rope(layer)] = rope_tables(n, arch.rotary_dims, *arch.rope(layer), arch.rope_scaling, at_once)
    return [made[arch.rope(layer)] for layer in range(arch.n_layers)]


def positions(arch: Architecture, ids: np.ndarray, start: int = 0) -> np.ndarray | slice:
    """The rows of the position table that tokens `ids` at start, start + 1, … read: their places, or
    (position_pad, RoBERTa) the padding id + how many non-padding tokens up to each, the padding id
    for a padding token (transformers' create_position_ids_from_input_ids)."""
    if arch.position_pad < 0:
        return slice(start, start + len(ids))
    ordinary = ids != arch.position_pad
    return (np.cumsum(ordinary) + start) * ordinary + arch.position_pad


def embed(model: ModelWeights, ids: np.ndarray, start: int = 0) -> np.ndarray:
    """The first residual stream of `ids`, which stand at positions start, start + 1, … (a generated
    token is embedded alone, at its place after the text before it)."""
    arch = model.arch
    h = model.token_embedding[ids].astype(np.float32)
    if arch.embed_scale != 1.0:
        h *= np.float32(arch.embed_scale)
    if model.position_embedding is not None:
        h += model.position_embedding[positions(arch, ids, start)]
    if model.type_embedding is not None:
        h += model.type_embedding
    if model.embedding_norm is not None:
        h = layer_norm(h, model.embedding_norm, model.embedding_norm_bias, arch.norm_eps)
    return h


def feed_forward(arch: Architecture, layer: LayerWeights, x: np.ndarray,
                 norm_weights: tuple[np.ndarray | None, np.ndarray | None] = (None, None)) -> np.ndarray:
    """The layer's feed-forward on `x` (n × d_model) put through the model's norm with `norm_weights`
    (weight, bias; a None weight: `x` as it is), plain or gated (see the module's docstring). Every
    step works row by row, so a long text goes through FFN_ROWS rows at a time: its hidden layer
    (n × 2·d_ff, with the gate and the norm's copy beside it) had been the largest thing a forward
    made, 47 MB at 2,048 tokens of SmolLM2 and 190 MB at 8,192, on top of everything kept."""
    if len(x) <= FFN_ROWS:
        return _feed_forward_rows(arch, layer, x, norm_weights)
    out = np.empty((len(x), layer.w_down.shape[1]), dtype=np.float32)
    for start in range(0, len(x), FFN_ROWS):
        out[start:start + FFN_ROWS] = _feed_forward_rows(arch, layer, x[start:start + FFN_ROWS], norm_weights)
    return out


def _feed_forward_rows(arch: Architecture, layer: LayerWeights, x: np.ndarray,
                       norm_weights: tuple[np.ndarray | None, np.ndarray | None]) -> np.ndarray:
    """feed_forward of a few rows at once. The normalised copy goes once the first product is made, not
    held through the rest."""
    hidden = affine(_normed(arch, x, *norm_weights), layer.w_gate_up, layer.b_gate_up)
    if layer.w_gate is not None:                      # gated: act(x·W_gate) ⊙ (x·W_up), one product for both
        d_ff = layer.w_up.shape[1]
        gate = ACTIVATIONS[arch.activation](hidden[:, :d_ff])
        gate *= hidden[:, d_ff:]
        hidden = gate                                 # rows d_ff apart in a 2·d_ff buffer: BLAS reads them as they are
    else:
        hidden = ACTIVATIONS[arch.activation](hidden)
    return affine(hidden, layer.w_down, layer.b_down)


def finish_layer(arch: Architecture, layer: LayerWeights, h: np.ndarray, merged: np.ndarray) -> np.ndarray:
    """The residual stream leaving `layer`: the heads' outputs `merged` through W_O, then after_attention.
    The forward and a generation's one-token steps both end a layer here."""
    return after_attention(arch, layer, h, affine(merged, layer.w_o, layer.b_o), owned=True)


def after_attention(arch: Architecture, layer: LayerWeights, h: np.ndarray, attended: np.ndarray,
                    owned: bool = False) -> np.ndarray:
    """The residual stream leaving `layer` from the stream `h` that entered it and what its attention
    wrote, `attended` (after W_O): the residual sums, norms and feed-forward of the model's layout.
    `owned`: `attended` is the caller's to spend, and a pre-norm layer's first residual sum is written
    into it (the same sum: addition does not depend on the order), one n × d_model array fewer
    through the feed-forward, a layer's largest step."""
    if arch.residual == "post":
        h = norm(arch, h + attended, layer.attn_norm, layer.attn_norm_bias)
        return norm(arch, h + feed_forward(arch, layer, h), layer.mlp_norm, layer.mlp_norm_bias)
    if arch.residual == "parallel":                   # both sub-layers read the stream that entered
        out = feed_forward(arch, layer, h, (layer.mlp_norm, layer.mlp_norm_bias))
        out += attended
        out += h
        return out
    written = _normed(arch, attended, layer.post_attn_norm)
    if owned or written is not attended:
        written += h
        h = written
    else:
        h = h + written
    del attended, written
    out = feed_forward(arch, layer, h, (layer.mlp_norm, layer.mlp_norm_bias))
    return h + _normed(arch, out, layer.post_mlp_norm)


def next_logits(model: ModelWeights, h_last: np.ndarray) -> np.ndarray:
    """A decoder's scores for the token after the one whose last residual stream is `h_last` (d_model,)."""
    last = norm(model.arch, h_last[None], model.final_norm, model.final_norm_bias)[0]
    head = _head(model)
    return _capped(model.arch, head.times(last) if isinstance(head, StoredRows) else head @ last)


def final_norm(model: ModelWeights, h: np.ndarray) -> np.ndarray:
    """The last layer's output `h` (n × d_model) through the model's final norm."""
    return norm(model.arch, h, model.final_norm, model.final_norm_bias)


def output_logits(model: ModelWeights, stream: np.ndarray) -> np.ndarray:
    """A decoder's next-token scores after every token of its final-normed `stream` (n × d_model): (n, vocab)."""
    head = _head(model)
    return _capped(model.arch, head.scores(stream) if isinstance(head, StoredRows) else stream @ head.T)


def _head(model: ModelWeights) -> np.ndarray | StoredRows:
    """The output matrix: the model's own, or its token embedding (tied)."""
    return model.lm_head if model.lm_head is not None else model.token_embedding


def _capped(arch: Architecture, logits: np.ndarray) -> np.ndarray:
    return soft_cap(logits, arch.final_softcap) if arch.final_softcap else logits


def _attend(arch: Architecture, p: Projections, off: set[int], thumbs: np.ndarray, sinks: np.ndarray,
            special: np.ndarray, window: int = 0, outputs_from: int = 0, weights_from: int = 0,
            whole: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """The heads' outputs side by side for query rows outputs_from … n − 1 (n − outputs_from, heads·d_head),
    block by block of query rows, each block's weights pooled into `thumbs` (heads, m, m) and its weight
    on the first and the `special` tokens written into `sinks` (heads, n, 2) on the way; the blocks
    before row `weights_from` (where a block starts, ≤ outputs_from) are left out, their summaries kept
    from an earlier forward. Heads in `off` output zero; `window` is the layer's sliding window (0:
    none). Each block's weights are also copied into `whole` (heads, n, n) when given. Also whether
    every weight made was finite."""
    n = p.q.shape[1]
    q_scaled, step = p.q_scaled(), thumb_step(n)
    merged = np.empty((n - outputs_from, arch.n_heads * arch.d_head), dtype=np.float32)
    finite = True
    for start, stop in row_blocks(n):
        if stop <= weights_from:
            continue
        weights = block_weights(arch, q_scaled, p.k_t, start, stop, window=window)
        finite = finite and bool(np.isfinite(weights[..., 0]).all())  # a NaN or ∞ spoils its whole row
        summarise_block(weights, start, step, thumbs, sinks, special)
        if whole is not None:
            whole[:, start:stop, :weights.shape[-1]] = weights
        if stop <= outputs_from:
            continue
        skipped = max(outputs_from - start, 0)
        outputs = block_outputs(arch, weights[:, skipped:], p.v)
        if off:
            outputs[sorted(off)] = 0
        merged[start + skipped - outputs_from:stop - outputs_from] = merge_heads(outputs)
    return merged, finite


def summarise_block(weights: np.ndarray, start: int, step: int, thumbs: np.ndarray, sinks: np.ndarray,
                    special: np.ndarray) -> None:
    """What the model view and the readings keep of a block of rows of a layer's weights (heads, rows,
    keys), for queries start, start + 1, …: pooled into the thumbnails `thumbs` (heads, m, m), and
    each row's weight on the first token and on the `special` columns into `sinks` (heads, n, 2)."""
    pool_rows_into(thumbs, weights, start, step)
    sink_sums_into(sinks[:, start:start + weights.shape[1]], weights, special)


def sink_sums_into(sinks: np.ndarray, weights: np.ndarray, special: np.ndarray) -> None:
    """Each row of `weights` (…, rows, keys): its weight on the first token and on the `special` columns
    (those past its keys left out), into `sinks` (…, rows, 2)."""
    sinks[..., 0] = weights[..., 0]
    sinks[..., 1] = weights[..., special[special < weights.shape[-1]]].sum(axis=-1)


def forward(model: ModelWeights, ids: np.ndarray, ablate: frozenset[tuple[int, int]] = frozenset(),
            progress: Progress | None = None, resume: tuple[ForwardResult, int] | None = None,
            special: np.ndarray | None = None,
            keep: Callable[[int, Projections], None] | None = None, at_once: int | None = None,
            prefix: tuple[ForwardResult, int] | None = None, show_layer: int | None = None) -> ForwardResult:
    """Run `ids` through `model`; `ablate` holds (layer, head) pairs whose attention output is zeroed;
    `special` marks the special tokens (bool per token), whose weight each row gives is kept; `at_once`:
    the tokens turned as a generation reads them, `at_once` at once and then one at a time
    (rope_for; the same as at once but under a rotary scaling that follows the text's length).

    `resume` = (an earlier result on the same ids, a layer): the layers before it are taken from
    that result unchanged (switching a head off in layer L changes nothing before L). `progress`
    hears of every layer and may cancel between layers (see progress.py). `keep(layer, projections)`
    is handed each layer's q, k, v as they are made (a generation keeps the keys and values).
    `show_layer`: a layer the window is about to draw; its q, k, v and whole weights are kept in the
    result (`shown`) as they are made, since making them again cost the views a tenth of a 512-token
    forward. The caller asks only for a layer whose weights are small (recompute.whole_layer_fits).

    `prefix` = (an earlier result of a decoder, P): its ids began with these ids' first P tokens. A
    decoder's token reads only the tokens up to it, so the residual stream of those P tokens entering
    each layer is taken from it, and only the tokens after them go through each layer's attention
    output, W_O and feed-forward: a word typed at the end of a text reads that word, not the text. The
    queries, keys and every row's weights are made again from the layer inputs kept, as a view makes
    them, so the thumbnails and sinks are this result's own; but a long text's (OWN_PAGES_FROM_TOKENS or more) keeps
    those of the blocks of rows before the first new token, when its thumbnails pool as many tokens a
    pixel: there, making every row's weights again cost as much as the rest (2,048 tokens of SmolLM2:
    1.4 of 1.9 s), and what is kept differs from what a view makes again by the rounding of sums of
    another length (1e-7). (To that rounding, the forward's of the whole text: a test checks 1e-5.)
    """
    if resume is not None and prefix is not None:
        raise ValueError("a forward resumes at a layer or after a prefix, not both")
    arch = model.arch
    n = len(ids)
    ropes = rope_for(arch, n, at_once)
    size = thumb_size(n)
    first = 0 if resume is None else resume[1]
    read_from = 0 if prefix is None else prefix[1]
    columns = np.flatnonzero(special) if special is not None else np.zeros(0, dtype=np.intp)
    # what the result keeps is made, for a long text, in pages of its own (engine/memory.py: the heap it
    # would otherwise share with this forward's temporaries kept their holes)
    long_text = n >= OWN_PAGES_FROM_TOKENS
    thumbnails, sinks = ((own_pages(shape) if long_text else np.zeros(shape, dtype=np.float32))
                         for shape in ((arch.n_layers, arch.n_heads, size, size), (arch.n_layers, arch.n_heads, n, 2)))
    if resume is None:
        layer_inputs, h = [], embed(model, ids[read_from:], read_from)
    else:
        layer_inputs, h = list(resume[0].layer_inputs[:first]), resume[0].layer_inputs[first]
        thumbnails[:first], sinks[...] = resume[0].thumbnails[:first], resume[0].sinks
    weights_from = _kept_summaries(prefix, n, thumbnails, sinks) if prefix is not None and long_text else 0
    shown: list[ShownLayer] = []
    for index in range(first, arch.n_layers):
        layer = model.layers[index]
        report(progress, index / arch.n_layers, f"layer {index + 1} of {arch.n_layers}")
        # (the resumed layer's input is the earlier result's, kept where it is)
        if prefix is not None:
            h = _joined(prefix[0].layer_inputs[index][:read_from], h, long_text)
        elif long_text and not (resume is not None and index == first):
            kept = own_pages(h.shape)
            kept[...] = h
            h = kept
        layer_inputs.append(h)
        if not np.isfinite(h).all():
            return ForwardResult(layer_inputs, thumbnails, sinks, None, f"layer {index + 1}")
        p = project(arch, layer, attention_input(arch, layer, h), ropes[index], queries_from=weights_from)
        if keep is not None:
            keep(index, p)
        off = {head for lay, head in ablate if lay == index}
        whole = np.zeros((arch.n_heads, n, n), dtype=np.float32) if index == show_layer and not weights_from else None
        if keep is None and whole is None:
            # read by this forward alone: q scaled where it is (its scaled copy had been the largest thing
            # _attend made), and q and k before RoPE, which only a view of the layer reads, let go
            np.multiply(p.q, np.float32(p.scale), out=p.q)
            p = replace(p, q_raw=None, k_raw=None, scale=1.0)
        merged, finite = _attend(arch, p, off, thumbnails[index], sinks[index], columns, arch.window(index),
                                 outputs_from=read_from, weights_from=weights_from, whole=whole)
        if whole is not None and finite:
            shown.append(ShownLayer(index, p, whole))
        del p  # not held through the feed-forward, the layer's largest step (15 MiB at 2,048 tokens of SmolLM2)
        if not finite:
            return ForwardResult(layer_inputs, thumbnails, sinks, None, f"layer {index + 1}")
        attended = affine(merged, layer.w_o, layer.b_o)  # finish_layer's work, with the heads' outputs let go
        del merged
        h = after_attention(arch, layer, h[read_from:], attended, owned=True)
        del attended
    if not np.isfinite(h).all():
        return ForwardResult(layer_inputs, thumbnails, sinks, None, f"layer {arch.n_layers}'s output")
    logits = None
    if arch.is_decoder:
        logits = next_logits(model, h[-1])
        if not np.isfinite(logits).all():
            return ForwardResult(layer_inputs, thumbnails, sinks, None, "the next-token scores")
    to_the_bit = prefix is None and (resume is None or resume[0].to_the_bit)
    return ForwardResult(layer_inputs, thumbnails, sinks, logits, at_once=at_once, read_from=read_from,
                         to_the_bit=to_the_bit, shown=shown)


def _kept_summaries(prefix: tuple[ForwardResult, int], n: int, thumbnails: np.ndarray, sinks: np.ndarray) -> int:
    """Copy into `thumbnails` and `sinks` an earlier result's summaries of the rows before the row block
    that holds the first new token, prefix[1], when its thumbnails pool as many tokens a pixel as this
    text's; the first row whose weights are still to be made (0: none kept)."""
    earlier, read_from = prefix
    step = thumb_step(n)
    if thumb_step(earlier.sinks.shape[2]) != step:
        return 0
    start = block_of(n, read_from)[0]  # a multiple of step
    pixels, keys = start // step, min(earlier.thumbnails.shape[-1], thumbnails.shape[-1])
    thumbnails[:, :, :pixels, :keys] = earlier.thumbnails[:, :, :pixels, :keys]
    sinks[:, :, :start] = earlier.sinks[:, :, :start]
    return start


def _joined(kept: np.ndarray, new: np.ndarray, own: bool) -> np.ndarray:
    """An earlier forward's first rows of a layer's input and this forward's rows after them, as one
    array; `own`: in pages of its own (a long text's, see engine/memory.py)."""
    shape = (len(kept) + len(new), new.shape[1])
    joined = own_pages(shape) if own else np.empty(shape, dtype=np.float32)
    joined[:len(kept)] = kept
    joined[len(kept):] = new
    return joined
