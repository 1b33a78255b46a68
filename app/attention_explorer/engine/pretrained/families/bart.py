"""BART: an encoder–decoder. The encoder reads a source text, the decoder writes a target text and,
in every layer, reads the encoder's last hidden states through its cross-attention. Its forward is
encoder_decoder.py's; the blocks, norms, activations and projections are the shared forward's.

    encoder:   e₀ = LN_e(E[s]·embed_scale + P_e[2 + i])          token s at place i = 0, 1, … reads row 2 + i
               per layer (post-LN, as BERT):
                   e = LN₁(e + SelfAttn(e))                       every source token sees every source token
                   e = LN₂(e + W₂·act(e·W₁ + b₁) + b₂)
    decoder:   d₀ = LN_d(E[t]·embed_scale + P_d[2 + i])           t: the target's tokens shifted right, the
                                                                  decoder_start_token_id first
               per layer:
                   d = LN₁(d + CausalSelfAttn(d))                 a target token sees itself and those before it
                   d = LN₂(d + CrossAttn(d, e_L))
                   d = LN₃(d + W₂·act(d·W₁ + b₁) + b₂)
    CrossAttn(d, e_L): q = d·W_Q + b_Q from the decoder's stream; k = e_L·W_K + b_K and v = e_L·W_V + b_V
               from the encoder's last hidden states e_L (the same e_L in every decoder layer, each layer
               with its own W_K, W_V); per head softmax(q·kᵀ ÷ √d_head)·v with no mask: target token i
               reads every source token, a (target × source) matrix per head; then W_O + b_O.
    next-token scores after target token i = d_L[i]·Eᵀ + final_logits_bias   (no final norm)
    embed_scale = √d_model when `scale_embedding`, else 1; LN: LayerNorm, ε = 1e-5 (BART's is fixed);
    act from `activation_function` (gelu: the exact one). Every projection has a bias.

What BART adds to the shared layers: the offset of 2 in both position tables (fairseq kept two rows
for padding; here the table is read from row 2 on), a norm of the embeddings on each side, a decoder
layer with a second attention between its self-attention and its feed-forward, and a bias added to
the output scores. E is shared by the encoder's and decoder's embeddings and the output (a file
saying `tie_word_embeddings` false has its own `lm_head.weight`). The encoder and decoder may differ in
heads and feed-forward width; the cross-attention has the decoder's heads.

Architecture: two, the encoder's (residual "post", encoder) and the decoder's (residual "post",
decoder), both with embed_scale. Tensors (after an optional `model.` prefix): shared,
{encoder,decoder}.embed_positions, {encoder,decoder}.layernorm_embedding,
{encoder,decoder}.layers.{i}.self_attn.{q,k,v,out}_proj, self_attn_layer_norm, fc1, fc2,
final_layer_norm; decoder.layers.{i}.encoder_attn.{q,k,v,out}_proj, encoder_attn_layer_norm;
final_logits_bias (zeros when absent, as transformers reads it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import ModelError
from ..fields import Fields
from ..progress import Progress, report
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from .shared import activation, linear

NAME = "bart"
TITLE = "BART"
PREFIX = "model."
POSITION_OFFSET = 2  # the rows of each position table before position 0's
NORM_EPS = 1e-5      # torch's LayerNorm default, which BART's norms keep


@dataclass
class CrossAttention:
    """One decoder layer's attention to the source: W_Q reads the decoder's stream, W_K and W_V the
    encoder's last hidden states; `norm` follows its residual sum."""

    w_q: np.ndarray  # d_model × heads·d_head, as LayerWeights'
    b_q: np.ndarray
    w_k: np.ndarray
    b_k: np.ndarray
    w_v: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    norm: np.ndarray
    norm_bias: np.ndarray


@dataclass
class BartWeights:
    """The encoder and decoder as two of the shared models (their own layers, position tables and
    embedding norms, one token embedding), each decoder layer's cross-attention, the output bias and
    the token the decoder starts from."""

    encoder: ModelWeights
    decoder: ModelWeights            # its layers: self-attention (attn_norm) and feed-forward (mlp_norm)
    cross: list[CrossAttention]      # decoder layer i's attention to the source, between the two
    final_logits_bias: np.ndarray    # vocab
    decoder_start: int               # decoder_start_token_id


def tensor_name(name: str) -> str:
    return name.removeprefix(PREFIX)


def _heads(fields: Fields, name: str, d_model: int) -> tuple[int, int]:
    heads = fields.count(name)
    if d_model % heads:
        raise fields.wrong((name,), f"must divide d_model ({d_model})", heads)
    return heads, d_model // heads


def architectures(fields: Fields) -> tuple[Architecture, Architecture]:
    """The encoder's and the decoder's Architecture."""
    d_model = fields.count("d_model")
    scale = math.sqrt(d_model) if fields.flag("scale_embedding", default=False) else 1.0
    shared = dict(family=NAME, d_model=d_model, vocab_size=fields.count("vocab_size"), norm_eps=NORM_EPS,
                  max_positions=fields.count("max_position_embeddings"),
                  activation=activation(fields, "activation_function", default="gelu"), residual="post",
                  embed_scale=scale)
    made = []
    for side in ("encoder", "decoder"):
        heads, d_head = _heads(fields, f"{side}_attention_heads", d_model)
        made.append(Architecture(n_layers=fields.count(f"{side}_layers"), n_heads=heads, n_kv_heads=heads,
                                 d_head=d_head, d_ff=fields.count(f"{side}_ffn_dim"), decoder=side == "decoder",
                                 **shared))
    return made[0], made[1]


def _projection(src: TensorSource, p: str, d: int) -> tuple[np.ndarray, np.ndarray]:
    return linear(src, p + ".weight", d, d), src.get(p + ".bias", (d,))


def _layer(arch: Architecture, src: TensorSource, p: str) -> LayerWeights:
    """A layer's self-attention, its norm, and its feed-forward with the norm after it."""
    d, f = arch.d_model, arch.d_ff
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (_projection(src, f"{p}self_attn.{x}_proj", d)
                                                      for x in ("q", "k", "v", "out"))
    return LayerWeights(
        w_q=w_q, b_q=b_q, w_k=w_k, b_k=b_k, w_v=w_v, b_v=b_v, w_o=w_o, b_o=b_o,
        attn_norm=src.get(p + "self_attn_layer_norm.weight", (d,)),
        attn_norm_bias=src.get(p + "self_attn_layer_norm.bias", (d,)),
        w_up=linear(src, p + "fc1.weight", f, d), b_up=src.get(p + "fc1.bias", (f,)),
        w_down=linear(src, p + "fc2.weight", d, f), b_down=src.get(p + "fc2.bias", (d,)),
        mlp_norm=src.get(p + "final_layer_norm.weight", (d,)), mlp_norm_bias=src.get(p + "final_layer_norm.bias", (d,)),
    )


def _cross(arch: Architecture, src: TensorSource, p: str) -> CrossAttention:
    d = arch.d_model
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (_projection(src, f"{p}encoder_attn.{x}_proj", d)
                                                      for x in ("q", "k", "v", "out"))
    return CrossAttention(w_q, b_q, w_k, b_k, w_v, b_v, np.ascontiguousarray(w_o), b_o,
                          src.get(p + "encoder_attn_layer_norm.weight", (d,)),
                          src.get(p + "encoder_attn_layer_norm.bias", (d,)))


def _side(arch: Architecture, src: TensorSource, side: str, embedding: np.ndarray, layers: list[LayerWeights]
          ) -> ModelWeights:
    d = arch.d_model
    table = src.get(f"{side}.embed_positions.weight", (arch.max_positions + POSITION_OFFSET, d))
    return ModelWeights(arch=arch, token_embedding=embedding, layers=layers,
                        position_embedding=table[POSITION_OFFSET:],
                        embedding_norm=src.get(f"{side}.layernorm_embedding.weight", (d,)),
                        embedding_norm_bias=src.get(f"{side}.layernorm_embedding.bias", (d,)))


def weights(fields: Fields, encoder: Architecture, decoder: Architecture, src: TensorSource,
            progress: Progress | None) -> BartWeights:
    d, vocab = encoder.d_model, encoder.vocab_size
    for side, arch in (("encoder", encoder), ("decoder", decoder)):
        src.check_layer_count(rf"{side}\.layers\.(\d+)\.", arch.n_layers, f"config.json ('{side}_layers')")
    embedding = src.get("shared.weight", (vocab, d))
    total = encoder.n_layers + decoder.n_layers
    encoder_layers, decoder_layers, cross = [], [], []
    for i in range(encoder.n_layers):
        report(progress, 0.15 + 0.85 * i / total, f"reading encoder layer {i + 1} of {encoder.n_layers}")
        encoder_layers.append(_layer(encoder, src, f"encoder.layers.{i}."))
    for i in range(decoder.n_layers):
        report(progress, 0.15 + 0.85 * (encoder.n_layers + i) / total,
               f"reading decoder layer {i + 1} of {decoder.n_layers}")
        decoder_layers.append(_layer(decoder, src, f"decoder.layers.{i}."))
        cross.append(_cross(decoder, src, f"decoder.layers.{i}."))
    decoder_side = _side(decoder, src, "decoder", embedding, decoder_layers)
    if not fields.flag("tie_word_embeddings", default=True):
        if not src.has("lm_head.weight"):
            raise ModelError(f"{src.file_name}: tensor 'lm_head.weight' is missing and config.json says the "
                             f"embeddings are not tied to the output")
        decoder_side.lm_head = src.get("lm_head.weight", (vocab, d))
    bias = src.optional("final_logits_bias", (1, vocab))
    start = fields.count("decoder_start_token_id", default=2, minimum=0)
    if start >= vocab:
        raise fields.wrong(("decoder_start_token_id",), f"must be a token of the {vocab:,} the model has", start)
    return BartWeights(
        encoder=_side(encoder, src, "encoder", embedding, encoder_layers), decoder=decoder_side, cross=cross,
        final_logits_bias=np.zeros(vocab, np.float32) if bias is None else bias[0], decoder_start=start)
