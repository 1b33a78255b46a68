"""An encoder–decoder (BART, families/bart.py, where its maths is) on a source text and a target text:
every layer's and head's encoder self-attention, decoder causal self-attention and cross-attention
(which source token each target token reads), and the next-token scores after every target token.

The decoder reads the target as transformers feeds it in training and scoring: the target's tokens
(<s> … </s>) shifted one place right, decoder_start_token_id first (shift_tokens_right), so the
scores after target token i are the model's guess at the target's token i and the decoder never
reads the target's last token.

The layers are the shared forward's: the same projections, blocks of softmax(q·kᵀ), norms and
feed-forwards as every other family; the cross-attention is a block whose keys are the source's.
Unlike model.py's forward this one keeps every head's whole matrices (layers × heads × n² numbers),
which a view of cross-attention reads whole; it is meant for texts of a few hundred tokens.

Each layer's q, k, v and heads' outputs are kept too (layers × n × d_model numbers, small beside the
weights), so that encoder_decoder_view.py can hand the window one layer of one kind of attention as
a Trace made of the run's own numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..limits import MAX_REAL_TOKENS
from ..threads import use_one_blas_thread
from .blocks import block_outputs, head_weights
from .dependencies import require
from .families import bart
from .fields import Fields, shown
from .forward import affine, embed, feed_forward, finish_layer, merge_heads, norm, output_logits, project, split_heads
from .generation_info import GenerationInfo, folder_generation_info
from .hf_folder import folder_tensors, read_config
from .model import overflow_error
from .progress import Progress, report
from .tokenizing import Cut, Encoded, TextTokenizer, marked_written
from .weights import Architecture, choose_mode


@dataclass(frozen=True)
class PartLayer:
    """One layer of one kind of attention as the run made it: what its queries read (n × d_model), q
    before the 1/√d_head scale, k and v ((heads, rows or keys, d_head), float32) and each head's
    output (heads, n, d_head), before W_O."""

    x: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    outputs: np.ndarray


@dataclass(frozen=True)
class EncoderDecoderResult:
    """A source and a target through the model: their tokens, the three kinds of attention of every
    layer and head (float32, rows sum to 1) and the next-token scores."""

    source: Encoded               # the source's tokens as the tokenizer gives them
    target: Encoded               # what the decoder read: decoder_start_token_id, then the target's tokens but its last
    encoder_attention: np.ndarray  # (encoder layers, encoder heads, n_source, n_source)
    decoder_attention: np.ndarray  # (decoder layers, decoder heads, n_target, n_target), zero after each row's token
    cross_attention: np.ndarray   # (decoder layers, decoder heads, n_target, n_source)
    logits: np.ndarray            # (n_target, vocab): the scores of the token after each target token
    # each layer's PartLayer of "encoder", "decoder" and "cross" (whose x is the decoder's stream; its
    # k and v were made from `memory`, the encoder's last hidden states)
    layers: dict[str, tuple[PartLayer, ...]] = field(default_factory=dict, repr=False)
    memory: np.ndarray | None = field(default=None, repr=False)
    # the token the last row's scores were for: the target's last token (its end, mostly), not read
    scored: int | None = None

    @property
    def target_ids(self) -> np.ndarray:
        return self.target.ids

    @property
    def target_labels(self) -> list[str]:
        """Tidy, as the source's labels."""
        return self.target.labels

    @property
    def target_cut(self) -> Cut | None:
        """The target was longer than the model reads: what was kept."""
        return self.target.cut


def _attention(arch: Architecture, q_scaled: np.ndarray, k_t: np.ndarray, v: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Every head's weights (heads, queries, keys), causal when `arch` is a decoder's, and each head's
    output (heads, queries, d_head), before W_O."""
    weights = head_weights(arch, q_scaled, k_t)
    return weights, block_outputs(arch, weights, v)


def switch_off(outputs: np.ndarray, off: frozenset[tuple[str, int, int]], part: str, layer: int) -> None:
    """Zero the outputs of `part`'s heads in `layer` that `off` names: a head switched off adds nothing to
    W_O's input, so every later layer (and the next-token scores) change, as in the one-text models."""
    for named, at, head in off:
        if (named, at) == (part, layer):
            outputs[head] = 0


def encode(model: bart.BartWeights, ids: np.ndarray, off: frozenset[tuple[str, int, int]] = frozenset()
           ) -> tuple[np.ndarray, np.ndarray, tuple[PartLayer, ...]]:
    """The encoder's last hidden states (n × d_model), its attention (layers, heads, n, n) and each
    layer's projections; the ("encoder", layer, head) heads in `off` switched off."""
    side = model.encoder
    arch, h, kept, layers = side.arch, embed(side, ids), [], []
    for index, layer in enumerate(side.layers):
        p = project(arch, layer, h, None)
        weights, outputs = _attention(arch, p.q_scaled(), p.k_t, p.v)
        switch_off(outputs, off, "encoder", index)
        kept.append(weights)
        layers.append(PartLayer(h, p.q, p.k, p.v, outputs))
        h = finish_layer(arch, layer, h, merge_heads(outputs))
    return h, np.stack(kept), tuple(layers)


def decode(model: bart.BartWeights, ids: np.ndarray, memory: np.ndarray,
           off: frozenset[tuple[str, int, int]] = frozenset()
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, tuple[PartLayer, ...]]]:
    """The decoder on `ids` reading the encoder's last hidden states `memory`: the next-token scores
    after each token (n × vocab), its self-attention (layers, heads, n, n), its cross-attention
    (layers, heads, n, n_source) and each layer's projections of both ("decoder", "cross"); the
    ("decoder" or "cross", layer, head) heads in `off` switched off."""
    side = model.decoder
    arch = side.arch
    h, own, read, own_layers, read_layers = embed(side, ids), [], [], [], []
    for index, layer in enumerate(side.layers):
        p = project(arch, layer, h, None)
        weights, outputs = _attention(arch, p.q_scaled(), p.k_t, p.v)
        switch_off(outputs, off, "decoder", index)
        own.append(weights)
        own_layers.append(PartLayer(h, p.q, p.k, p.v, outputs))
        h, weights, read_layer = decoder_layer_after_self(model, index, h, outputs, source_keys(model, index, memory),
                                                          off)
        read.append(weights)
        read_layers.append(read_layer)
    return (output_logits(side, h) + model.final_logits_bias, np.stack(own), np.stack(read),
            {"decoder": tuple(own_layers), "cross": tuple(read_layers)})


def source_keys(model: bart.BartWeights, layer: int, memory: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decoder layer `layer`'s keys and values of the source, (heads, n_source, d_head) each, made from the
    encoder's last hidden states `memory`: the same for every target token (a generation makes them once)."""
    cross, heads = model.cross[layer], model.decoder.arch.n_heads
    return (split_heads(affine(memory, cross.w_k, cross.b_k), heads),
            split_heads(affine(memory, cross.w_v, cross.b_v), heads))


def decoder_layer_after_self(model: bart.BartWeights, index: int, h: np.ndarray, outputs: np.ndarray,
                             keys: tuple[np.ndarray, np.ndarray], off: frozenset[tuple[str, int, int]]
                             ) -> tuple[np.ndarray, np.ndarray, PartLayer]:
    """The rest of decoder layer `index` once its self-attention's heads gave `outputs` on the stream `h`
    (rows × d_model): W_O and the norm, the cross-attention to the source's `keys` (source_keys), its norm,
    the feed-forward and its norm. The stream after the layer, the cross-attention's weights (heads,
    rows, n_source) and its PartLayer."""
    arch, layer, cross = model.decoder.arch, model.decoder.layers[index], model.cross[index]
    reading = replace(arch, decoder=False)  # the cross-attention masks nothing: every source token is read
    h = norm(arch, h + affine(merge_heads(outputs), layer.w_o, layer.b_o), layer.attn_norm, layer.attn_norm_bias)
    q = split_heads(affine(h, cross.w_q, cross.b_q), arch.n_heads)
    k, v = keys
    weights, outputs = _attention(reading, q * np.float32(1 / arch.score_divisor),
                                  np.ascontiguousarray(k.transpose(0, 2, 1)), v)
    switch_off(outputs, off, "cross", index)
    read_layer = PartLayer(h, q, k, v, outputs)
    h = norm(arch, h + affine(merge_heads(outputs), cross.w_o, cross.b_o), cross.norm, cross.norm_bias)
    return norm(arch, h + feed_forward(arch, layer, h), layer.mlp_norm, layer.mlp_norm_bias), weights, read_layer


@dataclass
class EncoderDecoderModel:
    """A BART folder ready to run on a source and a target text, or to write a target
    (encoder_decoder_write.py)."""

    name: str
    path: Path
    weights: bart.BartWeights
    tokenizer: TextTokenizer
    generation: GenerationInfo = field(default_factory=GenerationInfo)  # its stop and forced tokens

    def __post_init__(self):
        use_one_blas_thread()  # as model.PretrainedModel: each product runs faster on a thread of its own

    def decoder_input(self, target: str) -> Encoded:
        """The decoder's input for `target`: decoder_start_token_id, then the target's tokens but its last,
        labelled as the source is (tidy, a word's later pieces marked), its specials flagged, its words
        the target's own one place on (the start token a word of its own, the last token's word without
        it), and what was kept of a target longer than the model reads."""
        return self._reading(self.tokenizer.encode(target))

    def _reading(self, encoded: Encoded) -> Encoded:
        """The decoder's input for a target tokenised as `encoded` (decoder_input)."""
        start, n = self.weights.decoder_start, len(encoded.ids)
        words = ((0,), *(tuple(i + 1 for i in word if i + 1 < n) for word in encoded.words))
        return Encoded(np.concatenate([np.array([start], dtype=np.int64), encoded.ids[:-1]]),
                       [self.tokenizer.tokenizer.id_to_token(start), *encoded.pieces[:-1]],
                       [self.tokenizer.token_label(start), *encoded.labels[:-1]],
                       np.concatenate([[start in self.tokenizer.special_ids], encoded.special[:-1]]).astype(bool),
                       tuple(word for word in words if word), encoded.cut)

    def written_input(self, written: Sequence[int]) -> Encoded:
        """The decoder's input when it wrote the target itself (encoder_decoder_write.py): its start token,
        then every token written but the last, as it read them (not the written text tokenised again,
        which may cut it otherwise), labelled as a decoder's written tokens are and marked as written."""
        start = self.weights.decoder_start
        first = Encoded(np.array([start], dtype=np.int64), [self.tokenizer.tokenizer.id_to_token(start)],
                        [self.tokenizer.token_label(start)], np.array([start in self.tokenizer.special_ids]), ((0,),))
        return marked_written(self.tokenizer.extended(first, list(written)[:-1]), 1)

    def run(self, source: str, target: str, off: frozenset[tuple[str, int, int]] = frozenset(),
            written: Sequence[int] | None = None) -> EncoderDecoderResult:
        """Tokenise both texts and run the model with the heads in `off` ((part, layer, head), 0-based;
        part "encoder", "decoder" or "cross") switched off; `written`: the tokens the model wrote as
        `target`, read as it wrote them (written_input). SentenceError for a text with nothing to read,
        ModelError when the numbers overflow (damaged weights)."""
        encoded = self.tokenizer.encode(source)
        if written is None:
            tokens = self.tokenizer.encode(target)
            decoded, scored = self._reading(tokens), int(tokens.ids[-1])
        else:
            decoded, scored = self.written_input(written), int(written[-1]) if len(written) else None
        with np.errstate(all="ignore"):  # checked just below
            memory, encoder_attention, encoder_layers = encode(self.weights, encoded.ids, off)
            logits, decoder_attention, cross_attention, decoder_layers = decode(self.weights, decoded.ids, memory, off)
            finite = all(np.isfinite(a.sum(dtype=np.float64)) for a in (logits, encoder_attention, decoder_attention,
                                                                         cross_attention))
        if not finite:
            raise overflow_error(self.name, "the encoder, the decoder or the next-token scores")
        return EncoderDecoderResult(encoded, decoded, encoder_attention, decoder_attention, cross_attention, logits,
                                    {"encoder": encoder_layers, **decoder_layers}, memory, scored)


def is_encoder_decoder_folder(path: str | Path) -> bool:
    """Whether `path` is a model folder whose config.json names an encoder–decoder this app opens, so
    that the window opens it here rather than through the one-text models (which refuse it)."""
    folder = Path(path)
    if not folder.is_dir():
        return False
    try:
        return read_config(folder).get("model_type") == bart.NAME
    except ModelError:  # no config.json, or not one: the one-text models' opening says why
        return False


def open_encoder_decoder(path: str | Path, progress: Progress | None = None) -> EncoderDecoderModel:
    """A BART HF folder (config.json with model_type "bart", *.safetensors, tokenizer.json). Raises
    ModelError (naming the file and the field) for anything unusable."""
    folder = Path(path)
    report(progress, 0.0, f"opening {folder.name}")
    require("tokenizers", "reading a real model's tokenizer")
    if not folder.is_dir():
        raise ModelError(f"{folder}: not a model folder; an encoder–decoder opens from a folder with config.json, "
                         f"*.safetensors and tokenizer.json")
    fields = Fields(read_config(folder), "config.json")
    model_type = fields.raw("model_type", default=None)
    if model_type != bart.NAME:
        raise ModelError(f"config.json: model_type {shown(model_type)} is not an encoder–decoder this app opens; "
                         f"it opens {bart.TITLE} ({bart.NAME})")
    encoder, decoder = bart.architectures(fields)
    for arch in (encoder, decoder):
        choose_mode(arch, "config.json", "float32")
    with folder_tensors(folder, bart.tensor_name, progress) as source:
        weights = bart.weights(fields, encoder, decoder, source, progress)
    tokenizer = TextTokenizer.from_file(folder / "tokenizer.json", min(encoder.max_positions, MAX_REAL_TOKENS),
                                        encoder.vocab_size, keep_end=False)
    generation = folder_generation_info(folder, decoder.vocab_size, tokenizer.token_id)
    report(progress, 1.0, "ready")
    return EncoderDecoderModel(folder.name, folder, weights, tokenizer, generation)
