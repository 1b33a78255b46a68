"""Which family (families/) reads a GGUF file of each llama.cpp architecture, and how its names map.

llama.cpp's converter (convert_hf_to_gguf.py) writes a Hugging Face checkpoint's config.json fields as
metadata keys under the architecture's name (`hidden_size` → `qwen2.embedding_length`) and renames
its tensors (`model.layers.0.self_attn.q_proj.weight` → `blk.0.attn_q.weight`, GPT-2's
`h.0.attn.c_attn.weight` → `blk.0.attn_qkv.weight`). Here both are mapped back, so the family's own
`architecture(fields)` and `weights(arch, src)` read a GGUF file as they read a folder; nothing of a
family's maths is written twice.

On the way the converter changed some numbers, and only these, for the architectures below:
- llama: the rows of W_Q and W_K (and their biases) of each head are interleaved (its RoPE pairs
  dimension 2i with 2i + 1; HF's pairs i with i + d_head/2): `permuted_qk`, undone on reading.
  Mistral is converted as a "llama" file too, without its sliding window (llama.cpp's Llama has
  none), so it opens as the Llama it then is.
  Qwen2, Qwen3, Gemma, Gemma 2, Gemma 3, Phi-3 and OLMo 2 are written by converters of their own
  that leave the rows as they are (llama.cpp turns them with the rotate-half pairing; transformers'
  GGUF loader, too, un-permutes only "llama").
- gptneox: the fused query_key_value, whose rows HF holds head by head (each head's q, then its k,
  then its v), is regrouped into all heads' q, then all k, then all v (as GPT-2's c_attn), bias
  too (`qkv_by_part`): regrouped back on reading.
- gpt2: the weights of GPT-2's Conv1D layers (c_attn, attn's c_proj, c_fc, mlp's c_proj), which HF
  stores (in, out), are transposed to nn.Linear's (out, in) (`transposed`), and turned back on
  reading; their biases are as they were.
- gemma, gemma2, gemma3: every norm's weight (Gemma 3's q and k norms too) is stored as 1 + w (HF's
  Gemma scales by 1 + w, llama.cpp by the stored weight): `norms_plus_one`. The forward then scales
  by the stored weight, as llama.cpp does (Architecture.norm_offset 0), rather than taking 1 away and
  adding it back.
Some config.json fields are not written at all, and llama.cpp derives them (`derived`):
- gemma2, gemma3: `query_pre_attn_scalar`. llama.cpp divides the scores by √head_dim, but by
  √(hidden size ÷ heads) for the 27B models, which it knows by their layers, 46 and 62
  (llama-model.cpp); the released models' own query_pre_attn_scalar is that same number (Gemma 2:
  256, 256, 144; Gemma 3: 256, and 168 in the 27B).
- gemma3: which layers are global, and the local layers' rotary base. llama.cpp makes every sixth
  layer global and turns the others with base 10,000 and no scaling, whatever the model: the
  family's own defaults without `layer_types` and `rope_local_base_freq`, as the released models
  have them. The global layers' base is `rope.freq_base`, and their linear factor (8 in the 4B,
  12B and 27B) comes as `rope.scaling.type` "linear" and `rope.scaling.factor` (`rope_scalings`: the
  only scaling a Gemma 3 file may have), as transformers' `rope_scaling` of the global layers.
- phi3, gptneox: `partial_rotary_factor`, from the dims RoPE turns (`rope.dimension_count`; without
  it llama.cpp turns the whole head). GPT-NeoX's converter writes no rotary base either: llama.cpp
  takes 10,000, as transformers does without `rotary_emb_base`, and so does the family (a model of
  another base would open with the wrong one, in llama.cpp too; Pythia's is 10,000).
- llama, qwen2, qwen3, olmo2: the rotary scaling (`_llama_rope`), which the converters' shared part
  writes from config.json's rope parameters: "linear" as `rope.scaling.type` and `.factor`; "yarn" as
  those, `rope.scaling.original_context_length` and, when config.json sets them, `yarn_beta_fast`,
  `yarn_beta_slow` and `yarn_attn_factor` (its `attention_factor`); not its `mscale` and
  `mscale_all_dim` nor `truncate`, so a file made from a config.json that sets them opens with
  transformers' defaults, as llama.cpp reads it. "longrope" is written as the type alone, without its
  factors, and refused here. Llama 3.1's scaling ("llama3") is no key but the tensor `rope_freqs` that
  Llama's converter works out: a divisor per frequency, read as a longrope of one list (rope.py); its
  converter takes 8,192 for the original context whatever config.json's rope parameters say, which is
  Llama 3.1's and 3.2's own. A "dynamic" scaling is not written at all: such a file is a plain one, in
  llama.cpp too. transformers' GGUF loader reads none of this (its `rope.scaling.*` only for gpt-oss).
- phi3: a 128k model's longrope as Phi-3's converter writes it: no type, its short and long factors as
  the tensors `rope_factors_short` and `rope_factors_long`, the original context (written for every
  Phi-3) and `rope.scaling.attn_factor`, the attention factor it works out from the two contexts as
  transformers does when config.json gives none (`_phi3`). transformers' GGUF loader reads none of it.
A scaling a file names that none of these reads exactly is refused (`_check_rope` in gguf_model.py and
`_unread`): another `rope.scaling.type`, a rope tensor the architecture's files do not carry, YaRN's
`yarn_ext_factor` and `yarn_log_multiplier`, which transformers' YaRN has no place for.
A LayerNorm model's epsilon is written under `attention.layer_norm_epsilon` (RMSNorm's under
`attention.layer_norm_rms_epsilon`). BERT's converter changes no number: its tensors keep their
layout (its vocabulary is rewritten: gguf_tokenizer.py). A RoBERTa is written as a "bert" file too
(only its byte-level vocabulary, tokenizer "gpt2" split "roberta-bpe", tells it apart), and there
its converter cuts the position table: the first padding id + 1 rows (the padding token's own and
those before it) are dropped, and `context_length` is written that much smaller; llama.cpp counts a
text's positions from 0 in what is left, which are RoBERTa's own positions (padding id + 1, + 2, …)
for every text without the padding token. So it opens as the BERT the file describes (family
"bert"). A padding token in the text (<pad>) takes the next position, as in llama.cpp, where
RoBERTa gives it the padding row, which the file no longer holds.
ModernBERT's converter ("modern-bert") changes no number either: the fused Wqkv (q | k | v) and Wi
(the half that goes through the activation first, then the other) keep their layout, and llama.cpp
turns q and k with the rotate-half pairing as transformers does. Its kinds of layer come as
`attention.sliding_window` (`local_attention`, the whole window: keys at most half of it away on
either side, as transformers' mask and llama.cpp's symmetric one), `attention.sliding_window_pattern`
(`global_attn_every_n_layers`: the first layer and every n-th after it global) and the two bases,
`rope.freq_base` (the global layers') and `rope.freq_base_swa` (the local ones'). Its epsilon,
config.json's `norm_eps`, is written under RMSNorm's key by the converters' shared part (`_modernbert`);
the released models' config.json also holds a `layer_norm_eps` of the same number, written under
LayerNorm's, the one llama.cpp's ModernBERT reads: the first is read, else the second. Its converter
writes no activation; llama.cpp reads one a derivative's file may name under `hidden_activation`
(SiLU: SwiGLU), as is done here by transformers' names, GELU without it. GPT-2's converter writes
`feed_forward_length` as 4 × the width whatever `n_inner` says, and the feed-forward's tensors are
checked against it: a GPT-2 of another `n_inner` is refused by its shapes, as llama.cpp refuses it.
Where llama.cpp departs from the model's own definition, the family's is kept: a scaled file's
frequencies are chosen by the text's length, as transformers chooses them (Phi-3's long factors past the
original context), where llama.cpp chooses by the size of its context window; a YaRN file's
`yarn_attn_factor` is transformers' attention factor, which llama.cpp's Llama-like models do not read;
a Phi-3 file's
`phi3.attention.sliding_window` (2047 in Phi-3-mini-4k) applies to every layer, as in transformers'
Phi-3 and in the same model's folder, while llama.cpp currently disables Phi-3's window (the two
differ only on texts longer than the window). A Gemma 3 file's `gemma3.final_logit_softcapping`,
which its converter writes when config.json sets one (the released models set none), caps the
next-token scores as the family caps them, while llama.cpp's Gemma 3 does not read it. A BERT
file's feed-forward uses BERT's own GELU, the exact one (erf), where llama.cpp's BERT uses the tanh
approximation (the file does not name an activation); so does a ModernBERT file's GeGLU. A ModernBERT
file without `rope.freq_base_swa` turns its local layers with the family's 10,000 (the released
models' `local_rope_theta`), where llama.cpp would take the global base for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .families import Family, bert, gemma, gemma2, gemma3, gpt2, gpt_neox, llama, modernbert, olmo2, phi3, qwen2, qwen3
from .fields import Fields, shown

# What the converters write (llama.cpp's gguf_writer: add_embedding_length, add_head_count, …), each a key
# a file may lack (GPT-2's has no key/value heads nor rotary base).
FIELDS = {"hidden_size": "embedding_length", "num_hidden_layers": "block_count",
          "intermediate_size": "feed_forward_length", "num_attention_heads": "attention.head_count",
          "num_key_value_heads": "attention.head_count_kv", "head_dim": "attention.key_length",
          "rms_norm_eps": "attention.layer_norm_rms_epsilon", "max_position_embeddings": "context_length",
          "rope_theta": "rope.freq_base", "vocab_size": "vocab_size"}
# A LayerNorm model's, its epsilon under both of config.json's names (GPT-2's and GPT-NeoX's).
LAYER_NORM_FIELDS = {**{name: key for name, key in FIELDS.items() if name != "rms_norm_eps"},
                     "layer_norm_epsilon": "attention.layer_norm_epsilon",
                     "layer_norm_eps": "attention.layer_norm_epsilon"}

# The rotary scaling of a Llama-like file, as the converters' shared part (TextModel.set_gguf_parameters)
# writes config.json's rope parameters: `rope.scaling.type` and `.factor` for linear and yarn, and yarn's
# original context and its optional ramp bounds and attention factor; none of it for "dynamic".
ROPE_SCALING_FIELDS = {"rope_scaling_type": "rope.scaling.type", "rope_scaling_factor": "rope.scaling.factor",
                       "original_max_position_embeddings": "rope.scaling.original_context_length",
                       "yarn_beta_fast": "rope.scaling.yarn_beta_fast", "yarn_beta_slow": "rope.scaling.yarn_beta_slow",
                       "yarn_attn_factor": "rope.scaling.yarn_attn_factor",
                       "yarn_ext_factor": "rope.scaling.yarn_ext_factor",
                       "yarn_log_multiplier": "rope.scaling.yarn_log_multiplier",
                       "rope_attn_factor": "rope.scaling.attn_factor"}
LLAMA_FIELDS = {**FIELDS, **ROPE_SCALING_FIELDS}
# Tensors that scale the rotary frequencies: a divisor per frequency (llama.cpp's "freq_factors"), Llama
# 3.1's as `rope_freqs`, Phi-3's longrope as a pair for texts within and past the original context.
ROPE_TENSORS = ("rope_freqs", "rope_factors_long", "rope_factors_short")

# Tensor stems (".weight" and ".bias" follow): the whole model's, and a Llama-layout layer's.
MODEL_TENSORS = {"token_embd": "embed_tokens", "output_norm": "norm", "output": "lm_head"}


@dataclass(frozen=True)
class GGUFArchitecture:
    family: Family
    fields: Mapping[str, str]          # config.json's name → the metadata key after "{architecture}."
    layer_tensors: Mapping[str, str]   # a layer's tensor after "blk.N." → the family's after "{layers}.N."
    model_tensors: Mapping[str, str] = field(default_factory=lambda: MODEL_TENSORS)  # the whole model's
    layers: str = "layers"             # what the family's layer tensors start with ("h" in GPT-2)
    transposed: frozenset[str] = frozenset()  # stems whose weights the converter stored transposed
    permuted_qk: bool = False          # W_Q's and W_K's rows interleaved per head by the converter
    qkv_by_part: bool = False          # a fused W_QKV's rows regrouped by the converter: q | k | v of all heads
    norms_plus_one: bool = False       # the norms' weights stored as 1 + w by the converter
    rope_scalings: tuple[str, ...] = ()  # `rope.scaling.type`s the family reads (through `derived`)
    rope_tensors: tuple[str, ...] = ()   # ROPE_TENSORS the family reads (through `derived`), each a
                                         # config field of its numbers
    derived: Callable[[Fields], dict] | None = None  # config.json fields the file leaves to llama.cpp

    @property
    def embedding(self) -> str:
        """The family's name of the token embedding (its rows are checked before the tokenizer is built)."""
        return f"{self.model_tensors['token_embd']}.weight"


LLAMA_LAYER = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
               "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
               "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}
QK_NORM = {"attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm"}
# Gemma 2 normalises before and after each sub-layer; its "ffn_norm" is the one before the feed-forward.
GEMMA2_LAYER = {**LLAMA_LAYER, "post_attention_norm": "post_attention_layernorm",
                "ffn_norm": "pre_feedforward_layernorm", "post_ffw_norm": "post_feedforward_layernorm"}
GEMMA2_FIELDS = {**FIELDS, "attn_logit_softcapping": "attn_logit_softcapping",
                 "final_logit_softcapping": "final_logit_softcapping", "sliding_window": "attention.sliding_window"}
# Gemma 3: Gemma 2's names with Qwen3's q/k norms; OLMo 2 names its layers alike (it has only the norms
# after each sub-layer, and its q/k norms span the whole projection).
GEMMA3_LAYER = {**GEMMA2_LAYER, **QK_NORM}
GEMMA3_FIELDS = {**GEMMA2_FIELDS, "rope_scaling_type": "rope.scaling.type",
                 "rope_scaling_factor": "rope.scaling.factor"}
# Phi-3 keeps q, k, v in one matrix and gate and up in another ("ffn_up" holds both, the gate first).
PHI3_LAYER = {**LLAMA_LAYER, "attn_qkv": "self_attn.qkv_proj", "ffn_up": "mlp.gate_up_proj"}
PHI3_FIELDS = {**FIELDS, "sliding_window": "attention.sliding_window", "rope_dimension_count": "rope.dimension_count",
               "original_max_position_embeddings": "rope.scaling.original_context_length",
               "rope_attn_factor": "rope.scaling.attn_factor"}
# GPT-NeoX: LayerNorms, a parallel residual, partial RoPE, q, k, v fused, and its own tensor names.
NEOX_MODEL = {"token_embd": "embed_in", "output_norm": "final_layer_norm", "output": "embed_out"}
NEOX_LAYER = {"attn_norm": "input_layernorm", "attn_qkv": "attention.query_key_value", "attn_output": "attention.dense",
              "ffn_norm": "post_attention_layernorm", "ffn_up": "mlp.dense_h_to_4h", "ffn_down": "mlp.dense_4h_to_h"}
NEOX_FIELDS = {**LAYER_NORM_FIELDS, "use_parallel_residual": "use_parallel_residual",
               "rope_dimension_count": "rope.dimension_count"}
# BERT: learned positions and segments, a norm of the embeddings, post-LN layers, and its own names.
BERT_MODEL = {"token_embd": "embeddings.word_embeddings", "position_embd": "embeddings.position_embeddings",
              "token_types": "embeddings.token_type_embeddings", "token_embd_norm": "embeddings.LayerNorm"}
BERT_LAYER = {"attn_q": "attention.self.query", "attn_k": "attention.self.key", "attn_v": "attention.self.value",
              "attn_output": "attention.output.dense", "attn_output_norm": "attention.output.LayerNorm",
              "ffn_up": "intermediate.dense", "ffn_down": "output.dense", "layer_output_norm": "output.LayerNorm"}
# ModernBERT: rotary positions of two bases, windowed local layers, fused Wqkv and Wi, its own names.
MODERNBERT_MODEL = {"token_embd": "embeddings.tok_embeddings", "token_embd_norm": "embeddings.norm",
                    "output_norm": "final_norm"}
MODERNBERT_LAYER = {"attn_norm": "attn_norm", "attn_qkv": "attn.Wqkv", "attn_output": "attn.Wo", "ffn_norm": "mlp_norm",
                    "ffn_up": "mlp.Wi", "ffn_down": "mlp.Wo"}
MODERNBERT_FIELDS = {**{name: key for name, key in FIELDS.items() if name not in ("rms_norm_eps", "rope_theta")},
                     "norm_eps": "attention.layer_norm_rms_epsilon", "layer_norm_eps": "attention.layer_norm_epsilon",
                     "hidden_activation": "hidden_activation", "local_attention": "attention.sliding_window",
                     "global_attn_every_n_layers": "attention.sliding_window_pattern",
                     "global_rope_theta": "rope.freq_base", "local_rope_theta": "rope.freq_base_swa"}
# GPT-2: a learned position table, Conv1D layers (q | k | v in one), and its own tensor names.
GPT2_MODEL = {"token_embd": "wte", "position_embd": "wpe", "output_norm": "ln_f", "output": "lm_head"}
GPT2_LAYER = {"attn_norm": "ln_1", "attn_qkv": "attn.c_attn", "attn_output": "attn.c_proj", "ffn_norm": "ln_2",
              "ffn_up": "mlp.c_fc", "ffn_down": "mlp.c_proj"}


def _query_scalar(fields: Fields, layers_of_27b: int) -> dict:
    d_model, heads = fields.count("hidden_size"), fields.count("num_attention_heads")
    width = d_model // heads if fields.count("num_hidden_layers") == layers_of_27b else \
        fields.count("head_dim", default=d_model // heads)
    return {"query_pre_attn_scalar": width}


def _gemma2(fields: Fields) -> dict:
    return _query_scalar(fields, 46)


def _gemma3(fields: Fields) -> dict:
    derived = _query_scalar(fields, 62)
    if fields.text("rope_scaling_type", default="none") == "linear":  # the global layers' positions ÷ factor
        derived["rope_scaling"] = {"rope_type": "linear", "factor": fields.positive_number("rope_scaling_factor")}
    return derived


def _rotary_dims(fields: Fields) -> tuple[int, int]:
    """The head's width and the dims RoPE turns (`rope.dimension_count`; the whole head without it)."""
    d_model, heads = fields.count("hidden_size"), fields.count("num_attention_heads")
    d_head = fields.count("head_dim", default=d_model // heads)
    return d_head, fields.count("rope_dimension_count", default=d_head)


def _partial_rotary(fields: Fields) -> dict:
    d_head, dims = _rotary_dims(fields)
    return {"partial_rotary_factor": dims / d_head}


def _divisors(fields: Fields, name: str) -> list[float]:
    """Rope tensor `name`'s numbers: one divisor, finite and above 0, per frequency RoPE turns."""
    values, count = fields.raw(name), _rotary_dims(fields)[1] // 2
    if values.shape != (count,) or not (np.isfinite(values).all() and (values > 0).all()):
        raise ModelError(f"{fields.file_name}: tensor '{name}.weight' must hold {count} numbers above 0, one per "
                         f"frequency of the {2 * count} dims RoPE turns, not {shown(values.tolist())}")
    return values.tolist()


def _unread(fields: Fields, name: str, plain: float) -> None:
    """Refuse a key the file sets to other than `plain` that the family's scaling has no place for."""
    value = fields.positive_number(name, default=plain) if plain else fields.raw(name, default=plain)
    if value != plain:
        raise fields.wrong((name,), f"is not read by this app (only {plain:g}, which changes nothing, is)", value)


def _llama_rope(fields: Fields) -> dict:
    """A Llama-like file's rotary scaling as transformers' `rope_scaling` (shared.rotary reads it):
    - "linear": its factor;
    - "yarn": its factor, the original context (without it, llama.cpp's and transformers' own default,
      the context), the ramp bounds and attention factor when written (else transformers' defaults:
      32, 1 and 0.1·ln(factor) + 1); a file setting `yarn_ext_factor` (other than 1) or
      `yarn_log_multiplier`, which transformers' YaRN has no place for, is refused;
    - a `rope_freqs` tensor (Llama 3.1's scaling, written by Llama's converter in place of its
      parameters): each frequency ÷ its divisor, the same at every length, read as a longrope whose short
      and long factors are both the divisors, without attention factor. The divisors are what
      transformers' llama3 scaling makes of the parameters, so the frequencies are its own (up to float32
      rounding), not the parameters themselves, which the file no longer holds.
    `rope.scaling.attn_factor`, which the shared converter never writes, is refused unless 1."""
    _unread(fields, "rope_attn_factor", 1.0)
    kind = fields.text("rope_scaling_type", default="none")
    if "rope_freqs" in fields.values:
        if kind != "none":
            raise fields.wrong(("rope_scaling_type",), "must be 'none' beside the tensor 'rope_freqs.weight' "
                               "(two scalings at once are not read)", kind)
        divisors = _divisors(fields, "rope_freqs")
        return {"rope_scaling": {"rope_type": "longrope", "short_factor": divisors, "long_factor": divisors,
                                 "attention_factor": 1.0}}
    if kind == "linear":
        return {"rope_scaling": {"rope_type": "linear", "factor": fields.positive_number("rope_scaling_factor")}}
    if kind != "yarn":
        return {}
    _unread(fields, "yarn_ext_factor", 1.0)
    _unread(fields, "yarn_log_multiplier", 0.0)
    yarn = {"rope_type": "yarn", "factor": fields.positive_number("rope_scaling_factor"),
            "original_max_position_embeddings": fields.count("original_max_position_embeddings", minimum=2)
            if fields.present("original_max_position_embeddings") else None,
            "beta_fast": fields.positive_number("yarn_beta_fast", default=None),
            "beta_slow": fields.positive_number("yarn_beta_slow", default=None),
            "attention_factor": fields.positive_number("yarn_attn_factor", default=None)}
    return {"rope_scaling": {key: value for key, value in yarn.items() if value is not None}}


def _phi3(fields: Fields) -> dict:
    """Phi-3's partial rotary and, in a 128k model's file, its longrope: the two factor tensors, the
    attention factor the converter works out from the context (`rope.scaling.attn_factor`) and the
    original context, which such a file must name (Phi-3's converter always writes it)."""
    derived = _partial_rotary(fields)
    factors = [name for name in ("rope_factors_short", "rope_factors_long") if name in fields.values]
    if not factors:
        return derived
    if len(factors) == 1:
        missing = ({"rope_factors_short", "rope_factors_long"} - set(factors)).pop()
        raise ModelError(f"{fields.file_name}: tensor '{missing}.weight' is missing beside '{factors[0]}.weight'")
    fields.count("original_max_position_embeddings", minimum=2)
    longrope = {"rope_type": "longrope", "short_factor": _divisors(fields, "rope_factors_short"),
                "long_factor": _divisors(fields, "rope_factors_long"),
                "attention_factor": fields.positive_number("rope_attn_factor", default=None)}
    derived["rope_scaling"] = {key: value for key, value in longrope.items() if value is not None}
    return derived


LLAMA_ROPE = ("linear", "yarn")  # the `rope.scaling.type`s of Llama-like files (_llama_rope)


def _modernbert(fields: Fields) -> dict:
    """ModernBERT's one epsilon, `norm_eps`: under RMSNorm's key, where the converter writes config.json's
    `norm_eps`, else under LayerNorm's, where it writes the `layer_norm_eps` the released models' config.json
    also holds (the same number; transformers' ModernBERT does not read it, llama.cpp's reads only it)."""
    if fields.present("norm_eps"):
        return {}
    if not fields.present("layer_norm_eps"):
        raise ModelError(f"{fields.file_name}: metadata fields {fields.keys['norm_eps']!r} and "
                         f"{fields.keys['layer_norm_eps']!r} are both missing; the epsilon is under one of them")
    return {"norm_eps": fields.epsilon("layer_norm_eps")}


ARCHITECTURES: dict[str, GGUFArchitecture] = {
    "llama": GGUFArchitecture(llama.FAMILY, LLAMA_FIELDS, LLAMA_LAYER, permuted_qk=True, rope_scalings=LLAMA_ROPE,
                              rope_tensors=("rope_freqs",), derived=_llama_rope),
    "qwen2": GGUFArchitecture(qwen2.FAMILY, LLAMA_FIELDS, LLAMA_LAYER, rope_scalings=LLAMA_ROPE, derived=_llama_rope),
    "qwen3": GGUFArchitecture(qwen3.FAMILY, LLAMA_FIELDS, {**LLAMA_LAYER, **QK_NORM}, rope_scalings=LLAMA_ROPE,
                              derived=_llama_rope),
    "gemma": GGUFArchitecture(gemma.FAMILY, FIELDS, LLAMA_LAYER, norms_plus_one=True),
    "gemma2": GGUFArchitecture(gemma2.FAMILY, GEMMA2_FIELDS, GEMMA2_LAYER, norms_plus_one=True,
                               derived=_gemma2),
    "phi3": GGUFArchitecture(phi3.FAMILY, PHI3_FIELDS, PHI3_LAYER, rope_tensors=("rope_factors_long",
                             "rope_factors_short"), derived=_phi3),
    "gpt2": GGUFArchitecture(gpt2.FAMILY, LAYER_NORM_FIELDS, GPT2_LAYER, GPT2_MODEL, layers="h",
                             transposed=frozenset({"attn_qkv", "attn_output", "ffn_up", "ffn_down"})),
    "gptneox": GGUFArchitecture(gpt_neox.FAMILY, NEOX_FIELDS, NEOX_LAYER, NEOX_MODEL, qkv_by_part=True,
                                derived=_partial_rotary),
    "olmo2": GGUFArchitecture(olmo2.FAMILY, LLAMA_FIELDS, GEMMA3_LAYER, rope_scalings=LLAMA_ROPE, derived=_llama_rope),
    "gemma3": GGUFArchitecture(gemma3.FAMILY, GEMMA3_FIELDS, GEMMA3_LAYER, norms_plus_one=True,
                               rope_scalings=("linear",), derived=_gemma3),
    "bert": GGUFArchitecture(bert.FAMILY, LAYER_NORM_FIELDS, BERT_LAYER, BERT_MODEL, layers="encoder.layer"),
    "modern-bert": GGUFArchitecture(modernbert.FAMILY, MODERNBERT_FIELDS, MODERNBERT_LAYER, MODERNBERT_MODEL,
                                    derived=_modernbert),
}

_WHOLE = re.compile(r"(.+)\.(weight|bias)$")


def known() -> str:
    """The architectures that open, as a message lists them."""
    return ", ".join(repr(name) for name in ARCHITECTURES)


def family_name(spec: GGUFArchitecture, name: str) -> str:
    """A GGUF tensor's name as the family asks for it ("blk.0.attn_q.bias" → "layers.0.self_attn.q_proj.bias").
    A layer's tensor the table does not know keeps its stem ("layers.0.attn_foo.weight"), so the layers
    are still counted; any other keeps its name."""
    return _renamed(name, "blk", spec.layers, spec.model_tensors, spec.layer_tensors)


def file_name(spec: GGUFArchitecture, name: str) -> str:
    """The family's name of a tensor as the GGUF file spells it (for messages)."""
    return _renamed(name, spec.layers, "blk", _inverse(spec.model_tensors), _inverse(spec.layer_tensors))


def _renamed(name: str, layer_from: str, layer_to: str, whole: Mapping[str, str], layer: Mapping[str, str]) -> str:
    if found := re.match(rf"{re.escape(layer_from)}\.(\d+)\.(.+)\.(weight|bias)$", name):
        number, stem, kind = found.groups()
        return f"{layer_to}.{number}.{layer.get(stem, stem)}.{kind}"
    if (found := _WHOLE.match(name)) and found.group(1) in whole:
        return f"{whole[found.group(1)]}.{found.group(2)}"
    return name


def _inverse(mapping: Mapping[str, str]) -> dict[str, str]:
    return {value: key for key, value in mapping.items()}
