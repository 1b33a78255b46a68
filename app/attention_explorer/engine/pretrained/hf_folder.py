"""Reading a Hugging Face folder: config.json + *.safetensors (+ tokenizer.json, read elsewhere).

Supported families: BERT (keys with or without the `bert.` prefix), GPT-2 (Conv1D weights already
(in, out), q, k and v fused in `c_attn`) and Llama (separate q/k/v/o, RMSNorm, SwiGLU, RoPE).
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path

from ..errors import ModelError
from ..limits import MAX_CONFIG_VALUES
from ..safe_read import parse_json, read_user_text
from .fields import Fields, shown
from .progress import Progress, report
from .safetensors_reader import SafetensorsFile, open_safetensors
from .weights import FAMILIES, Architecture, LayerWeights, ModelWeights, TensorSource, check_size

_OWN_FILE = "put the model's own {} there"  # what to do when a file of the folder is a pipe, a folder...
_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh",
                "silu": "silu", "swish": "silu"}


def read_config(folder: Path) -> dict:
    path = folder / "config.json"
    if not os.path.lexists(path):
        raise ModelError(f"{folder}: no config.json; a model folder needs config.json, *.safetensors and "
                         f"tokenizer.json")
    # the toy models' reader: a regular file of bounded size and nesting, never a FIFO or a device
    text = read_user_text(path, "config.json", error=ModelError, advice=_OWN_FILE.format("config.json"))
    config = parse_json(text, "config.json", "config.json", max_values=MAX_CONFIG_VALUES, error=ModelError)
    if not isinstance(config, dict):
        raise ModelError("config.json: not a JSON object")
    return config


def architecture_from_config(config: dict) -> Architecture:
    """The sizes and switches of the model, every field of config.json it uses type- and range-checked."""
    fields = Fields(config, "config.json")
    family = fields.text("model_type", choices=FAMILIES)
    d_model = fields.count("hidden_size", "n_embd")
    n_heads = fields.count("num_attention_heads", "n_head")
    n_kv_heads = fields.count("num_key_value_heads", default=n_heads)
    if d_model % n_heads or n_heads % n_kv_heads:
        raise ModelError(f"config.json: {n_heads} heads and {n_kv_heads} key/value heads do not split "
                         f"hidden size {d_model}")
    act_name = fields.text("hidden_act", "activation_function", default="gelu", choices=_ACTIVATIONS)
    _refuse_variants(config)
    rope_theta, d_head = 0.0, d_model // n_heads
    if family == "llama":
        rope_theta = fields.positive_number("rope_theta", default=10000.0)
        for rope_name in ("rope_scaling", "rope_parameters"):  # older files say rope_scaling, newer rope_parameters
            rope = Fields(fields.mapping(rope_name), f"config.json: {rope_name}")
            if rope.text("rope_type", "type", default="default") != "default":
                raise ModelError(f"config.json: rope type {rope.raw('rope_type', 'type')!r} is not "
                                 f"supported; only plain RoPE")
            rope_theta = rope.positive_number("rope_theta", default=rope_theta)
        d_head = fields.count("head_dim", default=d_head)
        if d_head % 2:  # RoPE turns the two halves of each head against each other
            raise fields.wrong(("head_dim",), "must be even (rotary positions pair its halves)", d_head)
    elif fields.count("head_dim", default=d_head) != d_head:  # BERT and GPT-2 split the width evenly
        raise fields.wrong(("head_dim",), f"must be hidden size ÷ heads = {d_head} in a {family} model",
                           config["head_dim"])
    fields.flag("tie_word_embeddings", default=True)
    return Architecture(
        family=family, n_layers=fields.count("num_hidden_layers", "n_layer"), n_heads=n_heads,
        n_kv_heads=n_kv_heads, d_model=d_model, d_head=d_head,
        d_ff=fields.count("intermediate_size", "n_inner", default=4 * d_model),
        vocab_size=fields.count("vocab_size"),
        norm_eps=fields.epsilon("layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps"),
        max_positions=fields.count("max_position_embeddings", "n_positions"),
        activation=_ACTIVATIONS[act_name], rope_theta=rope_theta,
    )


# Switches of each family that change the computation and that the forward pass does not implement:
# field → the value it must have (absent counts as that value).
_PLAIN = {"position_embedding_type": "absolute", "scale_attn_by_inverse_layer_idx": False,
          "reorder_and_upcast_attn": False, "mlp_bias": False}


def _refuse_variants(config: dict) -> None:
    for name, plain in _PLAIN.items():
        value = config.get(name)
        if value is not None and (type(value) is not type(plain) or value != plain):  # 0 is not False here
            raise ModelError(f"config.json: {name!r} is {shown(value)}; only {plain!r} is supported")


# A layer's tensors, by family, after _strip_prefix: how the layers present are counted.
_LAYER_NAMES = {"bert": r"encoder\.layer\.(\d+)\.", "gpt2": r"h\.(\d+)\.", "llama": r"layers\.(\d+)\."}


def read_hf_folder(folder: Path, progress: Progress | None = None) -> ModelWeights:
    """The weights of the model in `folder`, checked against its config.json."""
    folder = Path(folder)
    config = read_config(folder)
    arch = architecture_from_config(config)
    check_size(arch, "config.json")
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ModelError(f"{folder}: no *.safetensors file (only the safetensors format is read)")
    with ExitStack() as stack:
        report(progress, 0.1, f"checking {files[0].name}" if len(files) == 1 else f"checking {len(files)} files")
        shards = [stack.enter_context(open_safetensors(path)) for path in files]  # every header checked first
        source = _tensor_source(shards, arch.family, folder)
        source.check_layer_count(_LAYER_NAMES[arch.family], arch.n_layers,
                                 f"config.json ('{Fields(config, '').name_of('num_hidden_layers', 'n_layer')}')")
        build = {"bert": _bert, "gpt2": _gpt2, "llama": _llama}[arch.family]
        weights = build(arch, source, progress)
    if arch.is_decoder and weights.lm_head is None and config.get("tie_word_embeddings") is False:
        raise ModelError(f"{source.file_name}: tensor 'lm_head.weight' is missing and config.json says the "
                         f"embeddings are not tied to the output")
    return weights


def _tensor_source(shards: list[SafetensorsFile], family: str, folder: Path) -> TensorSource:
    """One index over every shard, under the names the builders use; a tensor in two shards is refused."""
    where: dict[str, tuple[SafetensorsFile, str]] = {}
    for shard in shards:
        for original in shard.entries:
            name = _strip_prefix(original, family)
            if name in where:
                raise ModelError(f"{shard.name}: tensor {original!r} is also in {where[name][0].name}; a tensor "
                                 f"belongs in one file of the folder")
            where[name] = (shard, original)
    file_name = shards[0].name if len(shards) == 1 else f"{folder.name}/*.safetensors"
    return TensorSource(file_name, {name: shard.entries[original].shape for name, (shard, original) in where.items()},
                        lambda name: where[name][0].read(where[name][1]))


def _strip_prefix(name: str, family: str) -> str:
    """Drop the wrapper prefix some checkpoints add ("bert.", "transformer.", "model."), and read the
    LayerNorm names of older BERT checkpoints (gamma, beta) as today's (weight, bias)."""
    name = name.removeprefix({"bert": "bert.", "gpt2": "transformer.", "llama": "model."}[family])
    for old, new in (("LayerNorm.gamma", "LayerNorm.weight"), ("LayerNorm.beta", "LayerNorm.bias")):
        if name.endswith(old):
            name = name[:-len(old)] + new
    return name


def _bert(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d, f = arch.d_model, arch.d_ff
    layers = []
    for i in range(arch.n_layers):
        report(progress, 0.15 + 0.85 * i / arch.n_layers, f"reading layer {i + 1} of {arch.n_layers}")
        p = f"encoder.layer.{i}."
        layers.append(LayerWeights(
            w_q=src.get(p + "attention.self.query.weight", (d, d)).T,
            b_q=src.get(p + "attention.self.query.bias", (d,)),
            w_k=src.get(p + "attention.self.key.weight", (d, d)).T,
            b_k=src.get(p + "attention.self.key.bias", (d,)),
            w_v=src.get(p + "attention.self.value.weight", (d, d)).T,
            b_v=src.get(p + "attention.self.value.bias", (d,)),
            w_o=src.get(p + "attention.output.dense.weight", (d, d)).T,
            b_o=src.get(p + "attention.output.dense.bias", (d,)),
            attn_norm=src.get(p + "attention.output.LayerNorm.weight", (d,)),
            attn_norm_bias=src.get(p + "attention.output.LayerNorm.bias", (d,)),
            w_up=src.get(p + "intermediate.dense.weight", (f, d)).T,
            b_up=src.get(p + "intermediate.dense.bias", (f,)),
            w_down=src.get(p + "output.dense.weight", (d, f)).T,
            b_down=src.get(p + "output.dense.bias", (d,)),
            mlp_norm=src.get(p + "output.LayerNorm.weight", (d,)),
            mlp_norm_bias=src.get(p + "output.LayerNorm.bias", (d,)),
        ))
    types_name = "embeddings.token_type_embeddings.weight"  # segment rows; a single sentence is segment A
    types = None
    if src.has(types_name):  # as many rows as the file has (2 in BERT), one at least: row 0 is used
        shape = src.shape(types_name)
        types = src.get(types_name, (shape[0] if len(shape) == 2 and shape[0] else 1, d))
    return ModelWeights(
        arch=arch, layers=layers,
        token_embedding=src.get("embeddings.word_embeddings.weight", (arch.vocab_size, d)),
        position_embedding=src.get("embeddings.position_embeddings.weight", (arch.max_positions, d)),
        type_embedding=None if types is None else types[0],
        embedding_norm=src.get("embeddings.LayerNorm.weight", (d,)),
        embedding_norm_bias=src.get("embeddings.LayerNorm.bias", (d,)),
    )


def _gpt2(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d, f = arch.d_model, arch.d_ff
    layers = []
    for i in range(arch.n_layers):
        report(progress, 0.15 + 0.85 * i / arch.n_layers, f"reading layer {i + 1} of {arch.n_layers}")
        p = f"h.{i}."
        qkv = src.get(p + "attn.c_attn.weight", (d, 3 * d))  # Conv1D: (in, out), q | k | v along out
        qkv_bias = src.get(p + "attn.c_attn.bias", (3 * d,))
        layers.append(LayerWeights(
            w_q=qkv[:, :d], w_k=qkv[:, d:2 * d], w_v=qkv[:, 2 * d:],
            b_q=qkv_bias[:d], b_k=qkv_bias[d:2 * d], b_v=qkv_bias[2 * d:],
            w_o=src.get(p + "attn.c_proj.weight", (d, d)), b_o=src.get(p + "attn.c_proj.bias", (d,)),
            attn_norm=src.get(p + "ln_1.weight", (d,)), attn_norm_bias=src.get(p + "ln_1.bias", (d,)),
            mlp_norm=src.get(p + "ln_2.weight", (d,)), mlp_norm_bias=src.get(p + "ln_2.bias", (d,)),
            w_up=src.get(p + "mlp.c_fc.weight", (d, f)), b_up=src.get(p + "mlp.c_fc.bias", (f,)),
            w_down=src.get(p + "mlp.c_proj.weight", (f, d)), b_down=src.get(p + "mlp.c_proj.bias", (d,)),
        ))
    return ModelWeights(
        arch=arch, layers=layers,
        token_embedding=src.get("wte.weight", (arch.vocab_size, d)),
        position_embedding=src.get("wpe.weight", (arch.max_positions, d)),
        final_norm=src.get("ln_f.weight", (d,)), final_norm_bias=src.get("ln_f.bias", (d,)),
        lm_head=src.optional("lm_head.weight", (arch.vocab_size, d)),
    )


def _llama(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d, f = arch.d_model, arch.d_ff
    dq, dkv = arch.n_heads * arch.d_head, arch.n_kv_heads * arch.d_head
    layers = []
    for i in range(arch.n_layers):
        report(progress, 0.15 + 0.85 * i / arch.n_layers, f"reading layer {i + 1} of {arch.n_layers}")
        p = f"layers.{i}."
        layers.append(LayerWeights(
            w_q=src.get(p + "self_attn.q_proj.weight", (dq, d)).T, b_q=src.optional(p + "self_attn.q_proj.bias", (dq,)),
            w_k=src.get(p + "self_attn.k_proj.weight", (dkv, d)).T,
            b_k=src.optional(p + "self_attn.k_proj.bias", (dkv,)),
            w_v=src.get(p + "self_attn.v_proj.weight", (dkv, d)).T,
            b_v=src.optional(p + "self_attn.v_proj.bias", (dkv,)),
            w_o=src.get(p + "self_attn.o_proj.weight", (d, dq)).T, b_o=src.optional(p + "self_attn.o_proj.bias", (d,)),
            attn_norm=src.get(p + "input_layernorm.weight", (d,)),
            mlp_norm=src.get(p + "post_attention_layernorm.weight", (d,)),
            w_gate=src.get(p + "mlp.gate_proj.weight", (f, d)).T,
            w_up=src.get(p + "mlp.up_proj.weight", (f, d)).T,
            w_down=src.get(p + "mlp.down_proj.weight", (d, f)).T,
        ))
    lm_head = src.optional("lm_head.weight", (arch.vocab_size, d))
    return ModelWeights(
        arch=arch, layers=layers, token_embedding=src.get("embed_tokens.weight", (arch.vocab_size, d)),
        final_norm=src.get("norm.weight", (d,)), lm_head=lm_head,
    )
