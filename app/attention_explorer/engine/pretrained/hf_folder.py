"""Reading a Hugging Face folder: config.json + *.safetensors (+ tokenizer.json, read elsewhere).

Supported families: BERT (keys with or without the `bert.` prefix), GPT-2 (Conv1D weights already
(in, out), q, k and v fused in `c_attn`) and Llama (separate q/k/v/o, RMSNorm, SwiGLU, RoPE).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelError
from ..safe_read import parse_json, read_user_text
from .progress import Progress, report
from .safetensors_reader import read_safetensors
from .weights import FAMILIES, Architecture, LayerWeights, ModelWeights, TensorSource, check_size

_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh",
                "silu": "silu", "swish": "silu"}


def read_config(folder: Path) -> dict:
    path = folder / "config.json"
    if not path.exists():
        raise ModelError(f"{folder}: no config.json; a model folder needs config.json, *.safetensors and "
                         f"tokenizer.json")
    # the toy models' reader: a regular file of bounded size and nesting, never a FIFO or a device
    config = parse_json(read_user_text(path, "config.json", error=ModelError), "config.json", "config.json",
                        error=ModelError)
    if not isinstance(config, dict):
        raise ModelError("config.json: not a JSON object")
    return config


def _field(config: dict, *names: str, default=None):
    """The first of `names` present in config.json (families name the same size differently)."""
    for name in names:
        if config.get(name) is not None:
            return config[name]
    if default is not None:
        return default
    raise ModelError(f"config.json: field {names[0]!r} is missing")


def _int(config: dict, *names: str, default=None) -> int:
    value = _field(config, *names, default=default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelError(f"config.json: field {names[0]!r} must be a positive whole number, not {value!r}")
    return value


def architecture_from_config(config: dict) -> Architecture:
    family = config.get("model_type")
    if family not in FAMILIES:
        raise ModelError(f"config.json: 'model_type' is {family!r}; supported: {', '.join(FAMILIES)}")
    d_model = _int(config, "hidden_size", "n_embd")
    n_heads = _int(config, "num_attention_heads", "n_head")
    n_kv_heads = _int(config, "num_key_value_heads", default=n_heads)
    if d_model % n_heads or n_heads % n_kv_heads:
        raise ModelError(f"config.json: {n_heads} heads and {n_kv_heads} key/value heads do not split "
                         f"hidden size {d_model}")
    act_name = _field(config, "hidden_act", "activation_function", default="gelu")
    if act_name not in _ACTIVATIONS:
        raise ModelError(f"config.json: activation {act_name!r} is not supported; supported: "
                         f"{', '.join(_ACTIVATIONS)}")
    _refuse_variants(config)
    rope_theta = 0.0
    if family == "llama":
        rope = config.get("rope_parameters") or config.get("rope_scaling") or {}
        if rope.get("rope_type", rope.get("type", "default")) != "default":
            raise ModelError(f"config.json: rope type {rope.get('rope_type', rope.get('type'))!r} is not "
                             f"supported; only plain RoPE")
        rope_theta = float(rope.get("rope_theta") or config.get("rope_theta") or 10000.0)
    return Architecture(
        family=family, n_layers=_int(config, "num_hidden_layers", "n_layer"), n_heads=n_heads,
        n_kv_heads=n_kv_heads, d_model=d_model, d_head=_int(config, "head_dim", default=d_model // n_heads),
        d_ff=_int(config, "intermediate_size", "n_inner", default=4 * d_model),
        vocab_size=_int(config, "vocab_size"),
        norm_eps=float(_field(config, "layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps")),
        max_positions=_int(config, "max_position_embeddings", "n_positions"),
        activation=_ACTIVATIONS[act_name], rope_theta=rope_theta,
    )


# Switches of each family that change the computation and that the forward pass does not implement:
# field → the value it must have (absent counts as that value).
_PLAIN = {"position_embedding_type": "absolute", "scale_attn_by_inverse_layer_idx": False,
          "reorder_and_upcast_attn": False, "mlp_bias": False}


def _refuse_variants(config: dict) -> None:
    for name, plain in _PLAIN.items():
        if config.get(name, plain) != plain:
            raise ModelError(f"config.json: {name!r} is {config[name]!r}; only {plain!r} is supported")


def read_hf_folder(folder: Path, progress: Progress | None = None) -> ModelWeights:
    """The weights of the model in `folder`, checked against its config.json."""
    folder = Path(folder)
    config = read_config(folder)
    arch = architecture_from_config(config)
    check_size(arch, "config.json")
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ModelError(f"{folder}: no *.safetensors file (only the safetensors format is read)")
    tensors: dict = {}
    for i, path in enumerate(files):
        report(progress, 0.1 + 0.4 * i / len(files), f"reading {path.name}")
        tensors.update(read_safetensors(path))
    source = TensorSource(files[0].name if len(files) == 1 else f"{folder.name}/*.safetensors",
                          _strip_prefix(tensors, arch.family))
    build = {"bert": _bert, "gpt2": _gpt2, "llama": _llama}[arch.family]
    weights = build(arch, source, progress)
    if arch.is_decoder and weights.lm_head is None and config.get("tie_word_embeddings") is False:
        raise ModelError(f"{source.file_name}: tensor 'lm_head.weight' is missing and config.json says the "
                         f"embeddings are not tied to the output")
    return weights


def _strip_prefix(tensors: dict, family: str) -> dict:
    """Drop the wrapper prefix some checkpoints add ("bert.", "transformer.", "model."), and read the
    LayerNorm names of older BERT checkpoints (gamma, beta) as today's (weight, bias)."""
    prefix = {"bert": "bert.", "gpt2": "transformer.", "llama": "model."}[family]
    renamed = {}
    for name, array in tensors.items():
        name = name.removeprefix(prefix)
        for old, new in (("LayerNorm.gamma", "LayerNorm.weight"), ("LayerNorm.beta", "LayerNorm.bias")):
            if name.endswith(old):
                name = name[:-len(old)] + new
        renamed[name] = array
    return renamed


def _bert(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    d, f = arch.d_model, arch.d_ff
    layers = []
    for i in range(arch.n_layers):
        report(progress, 0.5 + 0.5 * i / arch.n_layers, f"checking layer {i + 1} of {arch.n_layers}")
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
    types = src.get(types_name, (src.tensors[types_name].shape[0], d)) if src.has(types_name) else None
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
        report(progress, 0.5 + 0.5 * i / arch.n_layers, f"checking layer {i + 1} of {arch.n_layers}")
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
        report(progress, 0.5 + 0.5 * i / arch.n_layers, f"checking layer {i + 1} of {arch.n_layers}")
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
