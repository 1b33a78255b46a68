"""The result of one real-model forward: its tokens, every head's thumbnail, and any layer on demand.

The forward keeps each layer's input (n × d_model); a layer's weights, scores, q, k and v are made
again from it when asked (recompute.py: the forward's own numbers, to the bit), so memory grows with
layers × n × d_model and a 8,192-token text fits where its layers × heads × n² weights (68.6 GiB
for SmolLM2) would not. The views draw any layer through `layer_trace`, a Trace whose n × n
matrices are made only when a view reads them (engine/lazy_trace.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..census.norm_attention import moved_lengths, w_o_grams
from ..lazy_trace import LazyHeadTrace, LazyTrace, is_made
from ..options import Options
from ..tokenizer import token_labels
from .analysis import rollout_mix
from .blocks import block_weights, keys_for, row_blocks
from .forward import ForwardResult, merge_heads, summarise_block
from .ops import bias_part, soft_cap
from .recompute import LayerMaker
from .thumbnails import largest_of_each, thumb_step
from .tokenizing import Encoded
from .weights import ModelWeights

TOP_NEXT_TOKENS = 5  # the candidates listed for a next token
ROLLOUT_KEPT = 3  # rollout matrices kept (each n × n float64): the layer shown and the ones around it
SHARED_THUMBNAIL_ROWS = "thumbnail rows shared"  # in a trace's memo: see PretrainedTrace.thumbnail_rows_shared


@dataclass(frozen=True)
class NextToken:
    """One candidate for the token after the text (decoders)."""

    token_id: int
    text: str          # what it writes, e.g. " mat"
    label: str         # tidy, as the token labels
    probability: float


def likeliest_tokens(tokenizer, logits: np.ndarray, count: int = TOP_NEXT_TOKENS, after: Encoded | None = None
                     ) -> tuple[NextToken, ...]:
    """The `count` likeliest tokens of one row of scores (vocab), best first, with their softmax
    probabilities (in float64: a float32 sum over 50,000 scores loses the small ones); labelled as
    they would be written after the text `after` when given ("·the" continuing its last word)."""
    logits = logits.astype(np.float64)
    probabilities = np.exp(logits - logits.max())
    probabilities /= probabilities.sum()
    best = np.argsort(probabilities)[::-1][:count]
    return tuple(NextToken(int(i), tokenizer.token_text(i), next_label(tokenizer, i, after), float(probabilities[i]))
                 for i in best)


def next_label(tokenizer, token_id: int, after: Encoded | None) -> str:
    """A candidate's label: as it would be written after the text `after`, or alone."""
    return tokenizer.token_label(token_id) if after is None else tokenizer.label_after(after, token_id)


@dataclass(frozen=True)
class PretrainedTrace:
    """A text through a real model: tokens, labels, every head's thumbnail and any layer on demand."""

    model_name: str
    text: str
    encoded: Encoded
    labels: list[str]                  # tidy and told apart ("the₁", "the₂"), for axes
    ablated: frozenset[tuple[int, int]]  # (layer, head) pairs switched off, 0-based
    next_tokens: tuple[NextToken, ...]  # decoders: the five likeliest next tokens; encoders: empty
    model: ModelWeights = field(repr=False)
    forward_result: ForwardResult = field(repr=False)
    _maker: LayerMaker = field(init=False, repr=False, compare=False)
    _rolled: OrderedDict = field(init=False, repr=False, compare=False)
    _rollout_lock: threading.Lock = field(init=False, repr=False, compare=False)
    memo: dict = field(init=False, repr=False, compare=False)  # what readers make from this trace and keep

    def __post_init__(self):
        object.__setattr__(self, "_maker", LayerMaker(self.model, self.forward_result, self.ablated))
        object.__setattr__(self, "_rolled", OrderedDict())
        object.__setattr__(self, "_rollout_lock", threading.Lock())
        object.__setattr__(self, "memo", {})

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def read_from(self) -> int:
        """The first token its forward read; the layer inputs of those before were an earlier forward's
        (a decoder's edit after them: model.run's `previous`)."""
        return self.forward_result.read_from

    def let_go_of_caches(self) -> None:
        """Drop the layers made again, the rollouts and the layer trace kept (not what a view already
        holds): the forward that replaces this trace runs meanwhile, and the old caches beside its own
        arrays are what peaked (SmolLM2 at 2,048 tokens: a switched-off head). A generation's texts so
        far kept for scrubbing each held the layer trace last shown, with the n × n matrices the Steps
        dock had read of it (at 1,000 SmolLM2 tokens 10 MB a text)."""
        self._maker.let_go()
        with self._rollout_lock:
            self._rolled.clear()
        self.memo.pop("layer trace", None)

    @property
    def arch(self):
        """The model's architecture (its layers' masks, for the readings)."""
        return self.model.arch

    @property
    def n_layers(self) -> int:
        return self.model.arch.n_layers

    @property
    def n_heads(self) -> int:
        return self.model.arch.n_heads

    @property
    def tokens(self) -> list[str]:
        return list(self.encoded.labels)

    @property
    def special(self) -> np.ndarray:
        return self.encoded.special

    @property
    def words(self) -> tuple[tuple[int, ...], ...]:
        return self.encoded.words

    @property
    def thumbnails(self) -> np.ndarray:
        """(layers, heads, m, m) float32: each head's weights, pooled by the largest of each block (thumbnails.py)."""
        return self.forward_result.thumbnails

    def thumbnail_tops(self) -> np.ndarray:
        """(layers, heads): each thumbnail's largest weight, which its cell in the model view is coloured up
        to; made once (the scrubber's next step makes it on the worker with the text so far)."""
        tops = self.memo.get("thumbnail tops")
        if tops is None:
            tops = self.memo["thumbnail tops"] = largest_of_each(self.thumbnails)
        return tops

    def thumbnail_rows_shared(self) -> tuple[np.ndarray, int] | None:
        """(thumbnails, k): the first k rows of each of this trace's thumbnails are exactly those of
        `thumbnails`, another trace's (a generation's text so far takes them from its whole text's:
        generation_trace), so two such traces' thumbnails can differ only below row k; None when not
        known."""
        return self.memo.get(SHARED_THUMBNAIL_ROWS)

    def hidden_share(self, layer: int, hidden: list[int]) -> float:
        """The mean share of weight the rows left shown give to `hidden` (the first token, the special
        tokens or both), over the heads of `layer`: from the forward's own sums, no layer made again."""
        if not hidden:
            return 0.0
        sinks = self.forward_result.sinks[layer]                    # (heads, n, 2)
        special = set(np.flatnonzero(self.special).tolist())
        specials_hidden = bool(special) and special <= set(hidden)   # else only the first token is
        share = sinks[..., 1].astype(np.float64) if specials_hidden else np.zeros(sinks.shape[:2])
        if 0 in hidden and not (specials_hidden and 0 in special):
            share += sinks[..., 0]
        kept = np.setdiff1d(np.arange(self.n), hidden)
        return float(share[:, kept].mean())

    def take_projections_from(self, source) -> None:
        """Each layer's q, k, v read as `source(layer, n)` rather than made from this trace's own inputs
        (see LayerMaker.take_projections_from); before anything of a layer was made."""
        self._maker.take_projections_from(source)

    def summarise_layers(self, first: int = 0) -> None:
        """Work out every head's thumbnail and sink sums from the layers' inputs, block by block as the
        forward does on its way: for a trace whose inputs were kept elsewhere (the text so far of a
        generation, generation_trace.py), made with them zero. The rows before `first` are there
        already (a text so far's, taken from its whole text's)."""
        summarise_rows(self.model.arch, lambda layer: self._maker.projections(layer, keep=False), self.n,
                       np.flatnonzero(self.special), self.forward_result.thumbnails, self.forward_result.sinks, first)

    # --- layers made again ------------------------------------------------------------------------
    def causal_mask(self, n: int) -> np.ndarray:
        """n × n, True where a key comes after its query (read-only, one array per length): the mask
        of a decoder's layers and of any reading of them."""
        return self._maker.causal_mask(n)

    def causal_masks(self) -> Callable[[int], np.ndarray]:
        """causal_mask as a function that holds none of this trace's forward, for a reading to keep."""
        return self._maker.masks_alone()

    def layer_mask(self, layer: int) -> np.ndarray | None:
        """n × n, True where a query of `layer` may not look: a decoder's later keys and, in a layer with
        a sliding window, the keys outside it (read-only); None where an encoder's query sees every key."""
        return self._maker.layer_mask(layer)

    def attention_input(self, layer: int) -> np.ndarray:
        """What layer `layer`'s W_Q, W_K, W_V read (normalised first in pre-LN models), n × d_model."""
        return self._maker.attention_input(layer)

    def layer_weights(self, layer: int, keep: bool = True) -> np.ndarray:
        """Every head's weights of one layer, (heads, n, n) float32, rows summing to 1 (causal for
        decoders): heads × n² numbers, so a view of one head asks head_weights instead. `keep` False:
        a sweep over every layer, not cached (LayerMaker.layer_weights)."""
        return self._maker.layer_weights(layer, keep)

    def head_weights(self, layer: int, head: int) -> np.ndarray:
        """One head's weights, n × n float32."""
        return self._maker.head_weights(layer, head)

    def weight_row(self, layer: int, head: int, row: int) -> np.ndarray:
        """One row of one head's weights (n,) float32, the rest of the head left unmade."""
        return self._maker.weight_row(layer, head, row)

    def head_scores(self, layer: int, head: int) -> np.ndarray:
        """One head's q · kᵀ before scaling, n × n float32 (made each time: nothing keeps it)."""
        return self._maker.head_scores(layer, head)

    def all_weights(self) -> np.ndarray:
        """(layers, heads, n, n) float32: every weight of the forward at once, for short texts (tests,
        a file of every layer); a long text's would not fit in memory."""
        return np.stack([self.layer_weights(layer, keep=False) for layer in range(self.n_layers)])

    # --- rollout ------------------------------------------------------------------------------------
    def rollout(self, layer: int) -> np.ndarray:
        """Attention rollout after layer `layer` (see analysis.attention_rollout), n × n float64: each
        layer's mix multiplied in from the nearest layer already rolled out. Each layer costs an
        n × n by n × n product, so the window offers it up to limits.ROLLOUT_MAX_TOKENS."""
        with self._rollout_lock:
            if layer in self._rolled:
                self._rolled.move_to_end(layer)
                return self._rolled[layer]
            below = [lay for lay in self._rolled if lay < layer]
            start = max(below) if below else -1
            rolled = self._rolled[start] if below else np.eye(self.n)
            for index in range(start + 1, layer + 1):
                rolled = rollout_mix(self._maker.layer_weights(index, keep=False)) @ rolled
                self._rolled[index] = rolled
                while len(self._rolled) > ROLLOUT_KEPT:
                    self._rolled.popitem(last=False)
            return rolled

    def rollout_all(self) -> np.ndarray:
        """(layers, n, n): the rollout after every layer, for short texts."""
        return np.stack([self.rollout(layer) for layer in range(self.n_layers)])

    # --- one layer for the views ------------------------------------------------------------------
    def layer_trace(self, layer: int) -> LazyTrace:
        """Layer `layer` (0-based) as the Trace the single-layer views draw, every head with its q, k, v.
        The last one asked for is kept, with whatever of it was made (a reading of the layer shown
        reads the same heads).

        X is what the layer's W_Q, W_K, W_V read (normalised first in GPT-2 and Llama); it also stands
        in for the embedding, so the "embed" step shows the layer's input as it is. The weights are
        the forward pass's own, so every view of a layer agrees with the model view to the bit. The
        n × n matrices of a head, its output, the layer's concatenation and output are made when first
        read.
        """
        kept = self.memo.get("layer trace")
        if kept is not None and kept.layer == layer:
            return kept
        trace = self._make_layer_trace(layer)
        self.memo["layer trace"] = trace
        return trace

    def _rope_scaling(self, layer: int) -> str:
        """How the RoPE step's formula says the model scales its frequencies on this text (rope.py), or ""."""
        arch = self.model.arch
        if arch.rope_scaling is None or not arch.rotary:
            return ""
        return arch.rope_scaling.describe(arch.rope(layer)[0], arch.rotary_dims, self.n, self.forward_result.at_once)

    def _make_layer_trace(self, layer: int) -> LazyTrace:
        arch, weights = self.model.arch, self.model.layers[layer]
        x = self._maker.attention_input(layer)
        maker = self._maker.for_layer(layer)  # the views may hold this trace after this forward is replaced
        p = maker.projections(layer)
        rotary = maker.rope(layer)
        off = frozenset(head for lay, head in self.ablated if lay == layer)
        rope = arch.rotary
        q_raw, k_raw = self._maker.before_rope(layer) if rope else (None, None)
        grams = w_o_grams(weights.w_o, arch.n_heads)
        heads = []
        for h in range(arch.n_heads):
            kv = h // arch.group
            q_cols = slice(h * arch.d_head, (h + 1) * arch.d_head)
            kv_cols = slice(kv * arch.d_head, (kv + 1) * arch.d_head)
            makers = _head_makers(maker, layer, h, switched_off=h in off)
            # what each token's vector moves, made when a reading asks (norm-based attention): every head's
            # made with each layer shown cost a layer change at 2,048 tokens 3 ms
            makers["moved_norm"] = lambda _head, values=p.v[kv], gram=grams[h]: _moved(values, gram)
            heads.append(LazyHeadTrace(
                makers,
                index=h, columns=q_cols, w_q=weights.w_q[:, q_cols], w_k=weights.w_k[:, kv_cols],
                w_v=weights.w_v[:, kv_cols], q=p.q[h], k=p.k[kv], v=p.v[kv],
                b_q=bias_part(weights.b_q, q_cols), b_k=bias_part(weights.b_k, kv_cols),
                b_v=bias_part(weights.b_v, kv_cols),
                q_before_rope=q_raw[h] if rope else None, k_before_rope=k_raw[kv] if rope else None,
                kv_head=kv if arch.group > 1 else None,
            ))
        # the makers hold the LayerMaker, not this trace: the trace keeps its last layer trace (memo),
        # and a cycle back to it would keep a closed model's weights until Python's collector ran
        makers = {
            "mask": lambda _trace: maker.layer_mask(layer),
            "concat": lambda trace: _concat(maker, layer, trace),
            "output": lambda trace: _output(trace),
        }
        return LazyTrace(
            makers, model_name=self.model_name, sentence=self.text, tokens=self.tokens, labels=list(self.labels),
            unknown=[], features=[f"d{i + 1}" for i in range(arch.d_model)],
            options=Options(scale=True, causal=arch.is_decoder, positional=False, heads=arch.n_heads),
            embedding=x, positional=None, x=x, heads=tuple(heads), w_o=weights.w_o,
            layer=layer, b_o=weights.b_o, ablated_heads=off,
            rope_cos=None if rotary is None else rotary[0], rope_sin=None if rotary is None else rotary[1],
            rope_factor=arch.rope(layer)[1], rope_scaling=self._rope_scaling(layer),
            reading=None, score_root=None if arch.query_scalar in (None, 0, arch.d_head) else float(arch.query_scalar),
            score_cap=float(arch.attn_softcap or 0.0), qk_norm=arch.qk_norm,
        )

def _concat(maker: LayerMaker, layer: int, trace: LazyTrace) -> np.ndarray:
    """The heads' outputs side by side. Heads whose output a view made already give theirs; the
    others are made block by block, so a long text never holds a layer's weights at once."""
    arch, n = maker.arch, maker.n
    if all(is_made(head, "output") for head in trace.heads) or maker.layer_fits():
        return merge_heads(np.stack([head.output for head in trace.heads]))
    p = maker.projections(layer)
    q_scaled = p.q_scaled()
    outputs = np.zeros((arch.n_heads, n, arch.d_head), dtype=np.float32)
    for start, stop in row_blocks(n):
        block = block_weights(arch, q_scaled, p.k_t, start, stop, window=arch.window(layer))
        keys = keys_for(stop, n, arch.is_decoder)
        for h in range(arch.n_heads):
            if (layer, h) not in maker.ablated:
                np.matmul(block[h], p.v[h // arch.group, :keys], out=outputs[h, start:stop])
    return merge_heads(outputs)


def _head_makers(maker: LayerMaker, layer: int, h: int, switched_off: bool) -> dict:
    """How each large part of head `h` of `layer` is made when first read: from the other parts when
    they are made already, else from q and k (one n × n matrix at a time). The scores are made block
    by block in one way, so scaled = scores ÷ the score divisor (soft-capped, for a model that caps
    them) and masked = scaled (+ −∞) to the bit, as the step timeline writes them out. Norm-based
    attention α_ij · ‖f(x_j)‖ (census/norm_attention.py) is 0 for a head `switched_off`: it moves
    nothing."""
    arch = maker.arch
    root, cap = arch.score_divisor, arch.attn_softcap

    def made(divisor: float = 1.0, masked: bool = False) -> np.ndarray:
        return maker.head_scores(layer, h, divisor, masked, cap if divisor != 1.0 else 0.0)

    def scaled(head):
        scores = vars(head).get("scores")
        if not isinstance(scores, np.ndarray):
            return made(root)
        values = scores / np.float32(root)
        return soft_cap(values, cap) if cap else values

    def masked(head):
        scaled = vars(head).get("scaled")
        if not isinstance(scaled, np.ndarray):
            return made(root, masked=True)
        values = scaled.copy()
        mask = maker.layer_mask(layer)
        if mask is not None:
            values[mask] = -np.inf
        return values

    def output(head):
        made = vars(head).get("weights")  # weights a view made already give it; else none are made for it
        if isinstance(made, np.ndarray) or maker.layer_fits():
            return maker.head_output(layer, h, head.weights)
        return maker.head_output_by_blocks(layer, h)

    def weights():
        return maker.head_weights(layer, h)

    def norm(head):
        if switched_off:
            return np.zeros((maker.n, maker.n), dtype=np.float32)
        return head.weights * head.moved_norm.astype(np.float32)

    return {"scores": lambda _head: made(), "scaled": scaled, "masked": masked,
            "weights": lambda head: weights(), "norm": norm, "output": output}


def _output(trace: LazyTrace) -> np.ndarray:
    output = trace.concat @ trace.w_o
    if trace.b_o is not None:
        output += trace.b_o
    return output


def _moved(values: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """n × d_head by d_head × d_head: below the size OpenBLAS shares out, so the BLAS threads are left
    as they are (setting them is process-wide, and a worker may be inside a product meanwhile)."""
    return moved_lengths(values, None, gram)


def make_labels(encoded: Encoded) -> list[str]:
    """Axis labels: the tidy pieces with repeats told apart."""
    return token_labels(encoded.labels)


def summarise_rows(arch, projections, n: int, special_columns: np.ndarray, thumbnails: np.ndarray,
                   sinks: np.ndarray, first: int = 0) -> None:
    """Pool query rows first … n − 1 of every layer's weights into `thumbnails` (layers, heads, m, m) and
    their sink sums into `sinks` (layers, heads, n, 2), as the forward does; `projections(layer)` gives
    a layer's q, k, v over (at least) the first n tokens, `first` is where a thumbnail's block of rows
    starts."""
    blocks = row_blocks(n) if first == 0 else [(first, n)] if first < n else []
    if not blocks:
        return
    step, lowest = thumb_step(n), blocks[0][0]
    for layer in range(arch.n_layers):
        p = projections(layer)
        # only the rows summarised are scaled, the others never read: a scrubber step summarises the last
        # few rows of a long text, and scaling every row of every layer was 7 ms of it at 1,000 tokens
        q_scaled = np.empty_like(p.q)
        np.multiply(p.q[:, lowest:n], np.float32(p.scale), out=q_scaled[:, lowest:n])
        for start, stop in blocks:
            summarise_block(block_weights(arch, q_scaled, p.k_t, start, stop, window=arch.window(layer)),
                            start, step, thumbnails[layer], sinks[layer], special_columns)
