"""DistilBERT: BERT (bert.py) without segment rows, under other names.

    h₀ = LN(E[t] + P[position]),  then BERT's post-LN layers:  h = LN(h + Attn(h)),  h = LN(h + FFN(h))
    every LayerNorm's ε is 1e-12 (fixed in transformers' code, not in the config)

Architecture: BERT's. Config names: dim, n_layers, n_heads, hidden_dim, activation.
Tensors (after an optional `distilbert.` prefix): embeddings.{word,position}_embeddings,
embeddings.LayerNorm, transformer.layer.{i}.attention.{q,k,v,out}_lin, sa_layer_norm, ffn.lin1,
ffn.lin2, output_layer_norm. The position table is read as stored, also when the config says it
was made sinusoidal (`sinusoidal_pos_embds`).
"""

from __future__ import annotations

from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource
from .shared import Family, activation, even_heads, projection, read_layers

EPS = 1e-12


def architecture(fields: Fields) -> Architecture:
    d_model = fields.count("dim", "hidden_size")
    n_heads, n_kv_heads, d_head = even_heads(fields, d_model, "distilbert")
    return Architecture(
        family="distilbert", n_layers=fields.count("n_layers", "num_hidden_layers"), n_heads=n_heads,
        n_kv_heads=n_kv_heads, d_model=d_model, d_head=d_head, d_ff=fields.count("hidden_dim", default=4 * d_model),
        vocab_size=fields.count("vocab_size"), norm_eps=EPS, max_positions=fields.count("max_position_embeddings"),
        activation=activation(fields, "activation", default="gelu"), residual="post")


def layer(arch: Architecture, src: TensorSource, i: int) -> LayerWeights:
    d, f, p = arch.d_model, arch.d_ff, f"transformer.layer.{i}."
    a = p + "attention."
    return LayerWeights(
        w_q=projection(src, a + "q_lin.weight", d, d), b_q=src.get(a + "q_lin.bias", (d,)),
        w_k=projection(src, a + "k_lin.weight", d, d), b_k=src.get(a + "k_lin.bias", (d,)),
        w_v=projection(src, a + "v_lin.weight", d, d), b_v=src.get(a + "v_lin.bias", (d,)),
        w_o=projection(src, a + "out_lin.weight", d, d), b_o=src.get(a + "out_lin.bias", (d,)),
        attn_norm=src.get(p + "sa_layer_norm.weight", (d,)), attn_norm_bias=src.get(p + "sa_layer_norm.bias", (d,)),
        w_up=projection(src, p + "ffn.lin1.weight", f, d), b_up=src.get(p + "ffn.lin1.bias", (f,)),
        w_down=projection(src, p + "ffn.lin2.weight", d, f), b_down=src.get(p + "ffn.lin2.bias", (d,)),
        mlp_norm=src.get(p + "output_layer_norm.weight", (d,)),
        mlp_norm_bias=src.get(p + "output_layer_norm.bias", (d,)))


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d = arch.d_model
    layers = read_layers(arch, src, progress, layer)
    return ModelWeights(
        arch=arch, layers=layers,
        token_embedding=src.matrix("embeddings.word_embeddings.weight", (arch.vocab_size, d)),
        position_embedding=src.get("embeddings.position_embeddings.weight", (arch.max_positions, d)),
        embedding_norm=src.get("embeddings.LayerNorm.weight", (d,)),
        embedding_norm_bias=src.get("embeddings.LayerNorm.bias", (d,)))


FAMILY = Family(
    name="distilbert", title="DistilBERT", decoder=False,
    architectures=("DistilBertModel", "DistilBertForMaskedLM", "DistilBertForSequenceClassification",
                   "DistilBertForTokenClassification", "DistilBertForQuestionAnswering"),
    prefixes=("distilbert.",), layer_pattern=r"transformer\.layer\.(\d+)\.", architecture=architecture,
    weights=weights,
)
