"""BERT: the post-LN encoder, the shared forward's plainest case. RoBERTa (roberta.py) has its layout.

    h₀ = LN(E[t] + P[position] + T[0])                 learned positions 0, 1, …; segment A's row
    per layer:  h = LN(h + Attn(h))                    every token sees every token (no mask)
                h = LN(h + W_down·gelu(h·W_up + b_up) + b_down)
    LN(x) = (x − mean x) / √(var x + ε) · w + b;  gelu the exact one, x·Φ(x) with erf
    Attn: q, k, v = h·W + b, one key/value head per query head, softmax(q·kᵀ ÷ √d_head)·v, W_O + b_O.

Architecture: residual "post", norm "layer", activation from `hidden_act`, no rotary, encoder.
Tensors (after an optional `bert.` prefix; older files call the LayerNorms' weight and bias gamma
and beta): embeddings.{word,position,token_type}_embeddings, embeddings.LayerNorm,
encoder.layer.{i}.attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
intermediate.dense, output.{dense,LayerNorm}. The pooler, if any, is not read.
"""

from __future__ import annotations

from ...errors import ModelError
from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from .shared import Family, activation, even_heads, projection, read_layers


def architecture(fields: Fields, family: str = "bert", **switches) -> Architecture:
    d_model = fields.count("hidden_size")
    n_heads, n_kv_heads, d_head = even_heads(fields, d_model, family)
    if fields.flag("is_decoder", default=False):
        raise ModelError("config.json: 'is_decoder' is true; only a BERT encoder (false) is supported")
    return Architecture(
        family=family, n_layers=fields.count("num_hidden_layers"), n_heads=n_heads, n_kv_heads=n_kv_heads,
        d_model=d_model, d_head=d_head, d_ff=fields.count("intermediate_size", default=4 * d_model),
        vocab_size=fields.count("vocab_size"), norm_eps=fields.epsilon("layer_norm_eps"),
        max_positions=fields.count("max_position_embeddings"),
        activation=activation(fields, "hidden_act", default="gelu"), residual="post", **switches)


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    d, f = arch.d_model, arch.d_ff
    p = f"encoder.layer.{i}."
    return LayerWeights(
        w_q=projection(src, p + "attention.self.query.weight", d, d),
        b_q=src.get(p + "attention.self.query.bias", (d,)),
        w_k=projection(src, p + "attention.self.key.weight", d, d), b_k=src.get(p + "attention.self.key.bias", (d,)),
        w_v=projection(src, p + "attention.self.value.weight", d, d),
        b_v=src.get(p + "attention.self.value.bias", (d,)),
        w_o=projection(src, p + "attention.output.dense.weight", d, d),
        b_o=src.get(p + "attention.output.dense.bias", (d,)),
        attn_norm=src.get(p + "attention.output.LayerNorm.weight", (d,)),
        attn_norm_bias=src.get(p + "attention.output.LayerNorm.bias", (d,)),
        w_up=projection(src, p + "intermediate.dense.weight", f, d), b_up=src.get(p + "intermediate.dense.bias", (f,)),
        w_down=projection(src, p + "output.dense.weight", d, f), b_down=src.get(p + "output.dense.bias", (d,)),
        mlp_norm=src.get(p + "output.LayerNorm.weight", (d,)), mlp_norm_bias=src.get(p + "output.LayerNorm.bias", (d,)),
    )


def weights(arch: Architecture, src: TensorSource, progress: Progress | None, position_rows: int | None = None
            ) -> ModelWeights:
    """`position_rows`: the rows of the position table (RoBERTa's has more than the tokens it reads)."""
    d = arch.d_model
    layers = read_layers(arch, src, progress, layer)
    types_name = "embeddings.token_type_embeddings.weight"  # segment rows; a single sentence is segment A
    types = None
    if src.has(types_name):  # as many rows as the file has (2 in BERT), one at least: row 0 is used
        shape = src.shape(types_name)
        types = src.get(types_name, (shape[0] if len(shape) == 2 and shape[0] else 1, d))
    return ModelWeights(
        arch=arch, layers=layers,
        token_embedding=src.matrix("embeddings.word_embeddings.weight", (arch.vocab_size, d)),
        position_embedding=src.get("embeddings.position_embeddings.weight", (position_rows or arch.max_positions, d)),
        type_embedding=None if types is None else types[0],
        embedding_norm=src.get("embeddings.LayerNorm.weight", (d,)),
        embedding_norm_bias=src.get("embeddings.LayerNorm.bias", (d,)),
    )


FAMILY = Family(
    name="bert", title="BERT", decoder=False,
    architectures=("BertModel", "BertForMaskedLM", "BertForPreTraining", "BertForSequenceClassification",
                   "BertForTokenClassification", "BertForQuestionAnswering", "BertForNextSentencePrediction"),
    prefixes=("bert.",), layer_pattern=r"encoder\.layer\.(\d+)\.", architecture=architecture, weights=weights,
    plain={"position_embedding_type": "absolute"},
    renames=(("LayerNorm.gamma", "LayerNorm.weight"), ("LayerNorm.beta", "LayerNorm.bias")),
)
