"""What the family modules share: the Family record each one fills in, and the reading of the
config.json fields that many families name alike (heads, rotary positions, sliding windows).

Every field is read through fields.Fields, so a value of the wrong type or out of range is one
ModelError naming config.json and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...errors import ModelError
from ..fields import Fields, shown
from ..progress import Progress, report
from ..rope import Dynamic, Llama3, LongRope, RopeScaling, Yarn, longrope_attention, yarn_attention
from ..stored_layers import StoredLayers
from ..weights import Architecture, LayerWeights, ModelWeights, TensorSource


@dataclass(frozen=True)
class Family:
    """One family of checkpoints: how config.json names it, how its tensors are named, and what it
    sets in the shared Architecture (the maths is in its module's docstring)."""

    name: str                        # config.json's model_type; also Architecture.family
    title: str                       # how the app and its messages name it ("Qwen2 / Qwen2.5")
    decoder: bool
    architectures: tuple[str, ...]   # config.json's `architectures` entries it answers to
    prefixes: tuple[str, ...]        # wrapper prefixes dropped from tensor names ("model.", "bert.")
    layer_pattern: str               # a layer's tensor names after the prefix; group 1 is its number
    architecture: Callable[[Fields], Architecture]
    weights: Callable[[Architecture, TensorSource, Progress | None], ModelWeights]
    # switches of the family the forward does not implement: field → the only value accepted
    # (absent counts as that value)
    plain: Mapping[str, object] = field(default_factory=dict)
    renames: tuple[tuple[str, str], ...] = ()  # old tensor-name endings read as today's
    output_name: str = "lm_head.weight"        # a decoder's output matrix, when not tied to the embedding
    tied_by_default: bool = True               # tie_word_embeddings when config.json does not say

    @property
    def kind(self) -> str:
        return "decoder" if self.decoder else "encoder"

    def tensor_name(self, name: str) -> str:
        """A checkpoint's tensor name as the family's builder asks for it: the wrapper prefix dropped
        (the first that matches) and old endings renamed."""
        for prefix in self.prefixes:
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        for old, new in self.renames:
            if name.endswith(old):
                name = name[:-len(old)] + new
        return name


def attention_heads(fields: Fields, d_model: int) -> tuple[int, int, int]:
    """Query heads, key/value heads and the head width. Without `head_dim` the heads split the width."""
    n_heads = fields.count("num_attention_heads", "n_head", "n_heads")
    n_kv_heads = fields.count("num_key_value_heads", default=n_heads)
    explicit = fields.raw("head_dim", default=None) is not None
    if (d_model % n_heads and not explicit) or n_heads % n_kv_heads:
        raise ModelError(f"{fields.file_name}: {n_heads} heads and {n_kv_heads} key/value heads do not split "
                         f"hidden size {d_model}")
    return n_heads, n_kv_heads, fields.count("head_dim", default=d_model // n_heads)


def even_heads(fields: Fields, d_model: int, family: str) -> tuple[int, int, int]:
    """The heads of a family whose heads split the width evenly, one key/value head per query head
    (BERT, GPT-2, GPT-NeoX, RoBERTa, DistilBERT): a `head_dim` of another width is refused."""
    n_heads, n_kv_heads, d_head = attention_heads(fields, d_model)
    if d_head * n_heads != d_model:
        raise fields.wrong(("head_dim",), f"must be hidden size ÷ heads = {d_model // n_heads} in a {family} model",
                           d_head)
    if n_kv_heads != n_heads:
        raise fields.wrong(("num_key_value_heads",), f"must be the number of heads, {n_heads}, in a {family} model",
                           n_kv_heads)
    return n_heads, n_kv_heads, d_head


ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh",
               "silu": "silu", "swish": "silu"}


def activation(fields: Fields, *names: str, default: str) -> str:
    """The feed-forward's activation, as ops.ACTIVATIONS names it."""
    return ACTIVATIONS[fields.text(*names, default=default, choices=ACTIVATIONS)]


@dataclass(frozen=True)
class RopeRules:
    """The rope types a family reads, as transformers' config and model classes of the family read them."""

    kinds: tuple[str, ...] = ("linear", "dynamic", "yarn", "longrope", "llama3")
    aliases: Mapping[str, str] = field(default_factory=dict)  # older names read as another ("su" → "longrope")
    original: int = 0      # above 0: the original context is the top-level `original_max_position_embeddings`,
                           # this when absent, over the rope parameters' own (Phi3Config)
    rereads: bool = False  # a generation reads its whole text again when it grows past the original context


EVERY_ROPE = RopeRules()  # what transformers' Llama-based models and GPT-NeoX read (its ROPE_INIT_FUNCTIONS)


@dataclass(frozen=True)
class Rotary:
    """How a model turns q and k by position: its base, the dims turned, a linear scaling's factor
    (positions ÷ factor), any other scaling (rope.py), and the longest text it reads."""

    theta: float
    dims: int
    context: int            # max_position_embeddings, or a dynamic scaling's factor × it
    factor: float = 1.0
    scaling: RopeScaling | None = None

    def switches(self) -> dict:
        """The Architecture's fields it sets."""
        return {"rotary_dims": self.dims, "rope_theta": self.theta, "rope_factor": self.factor,
                "rope_scaling": self.scaling, "max_positions": self.context}


def rope_parameters(fields: Fields) -> Fields:
    """The rotary parameters as transformers reads them (convert_rope_params_to_dict): the older
    `rope_scaling` when it holds any, else `rope_parameters` (a file with both is read by the first)."""
    name = "rope_scaling" if fields.mapping("rope_scaling") else "rope_parameters"
    return Fields(fields.mapping(name), f"{fields.file_name}: {name}")


def rotary(fields: Fields, d_head: int, fraction_default: float = 1.0, rules: RopeRules = EVERY_ROPE
           ) -> Rotary:
    """The rotary base and how many leading dims of each head it turns (`partial_rotary_factor`, or
    GPT-NeoX's `rotary_pct`, times d_head, rounded down as transformers does), and its scaling. Older
    files put the base and fraction at the top (`rope_theta`, GPT-NeoX's `rotary_emb_base`), newer ones
    in `rope_parameters` (or `rope_scaling`), whose `rope_type` (or `type`) names the scaling: plain
    ("default") or one of the family's `rules`."""
    rope = rope_parameters(fields)
    kind = rope.text("rope_type", "type", default="default")
    kind = rules.aliases.get(kind, kind)
    if kind not in ("default", *rules.kinds):
        raise ModelError(f"{fields.file_name}: rope type {shown(kind)} is not supported; plain RoPE and rope "
                         f"type{'s' if len(rules.kinds) > 1 else ''} {', '.join(rules.kinds)} are")
    theta = rope.positive_number(
        "rope_theta", default=fields.positive_number("rope_theta", "rotary_emb_base", default=10000.0))
    fraction = rope.positive_number(
        "partial_rotary_factor",
        default=fields.positive_number("partial_rotary_factor", "rotary_pct", default=fraction_default))
    dims = rotary_dims(fields, d_head, fraction)
    context = fields.count("max_position_embeddings")
    if kind == "default":
        return Rotary(theta, dims, context)
    if kind == "linear":
        return Rotary(theta, dims, context, factor=rope.positive_number("factor"))
    if kind == "dynamic":  # its base grows past the context: it reads up to factor × the context
        factor = rope.positive_number("factor")
        return Rotary(theta, dims, max(context, int(factor * context)), scaling=Dynamic(factor, context))
    original = (fields.count("original_max_position_embeddings", default=rules.original, minimum=2) if rules.original
                else rope.count("original_max_position_embeddings", default=context, minimum=2))
    if kind == "llama3":
        return Rotary(theta, dims, context, scaling=llama3_rope(rope, original))
    if kind == "yarn":
        return Rotary(theta, dims, context, scaling=yarn_rope(rope, original, context))
    return Rotary(theta, dims, context, scaling=longrope_rope(rope, dims, original, context, rules.rereads))


def rotary_dims(fields: Fields, d_head: int, fraction: float) -> int:
    """The dims of each head RoPE turns: d_head × fraction, rounded down, even and at least 2."""
    dims = int(d_head * fraction)
    if fraction == 1 and d_head % 2:  # RoPE turns the two halves of what it turns against each other
        raise fields.wrong(("head_dim",), "must be even (rotary positions pair its halves)", d_head)
    if fraction > 1 or dims < 2 or dims % 2:
        raise ModelError(f"{fields.file_name}: rotary positions over {shown(fraction)} of each head of {d_head} "
                         f"dims turn {dims}; they pair the halves of what they turn, so they must turn an even "
                         f"number of dims, at least 2 and at most the head's")
    return dims


def llama3_rope(rope: Fields, original: int) -> Llama3:
    """Llama 3.1's scaling (rope type "llama3"): its factor and low and high frequency factors."""
    low, high = rope.positive_number("low_freq_factor"), rope.positive_number("high_freq_factor")
    if high <= low:
        raise rope.wrong(("high_freq_factor",), f"must be above 'low_freq_factor' ({low:g})", high)
    return Llama3(rope.positive_number("factor"), low, high, original)


def yarn_rope(rope: Fields, original: int, context: int) -> Yarn:
    """YaRN (rope type "yarn"): its factor (null: the context ÷ the original one, as DeepSeek's), ramp
    bounds (`beta_fast`, `beta_slow`: 32 and 1 when absent), `truncate` and attention factor (given, or
    from the factor and `mscale`, `mscale_all_dim`)."""
    if not rope.present("factor"):
        raise ModelError(f"{rope.file_name}: field 'factor' is missing")
    factor = rope.positive_number("factor", default=context / original)
    fast, slow = rope.positive_number("beta_fast", default=32.0), rope.positive_number("beta_slow", default=1.0)
    if fast < slow:
        raise rope.wrong(("beta_fast",), f"must be at least 'beta_slow' ({slow:g})", rope.raw("beta_fast"))
    attention = rope.positive_number("attention_factor", default=None) or yarn_attention(
        factor, rope.positive_number("mscale", default=None), rope.positive_number("mscale_all_dim", default=None))
    return Yarn(factor, original, fast, slow, rope.flag("truncate", default=True), attention)


def longrope_rope(rope: Fields, dims: int, original: int, context: int, rereads: bool) -> LongRope:
    """Phi-3's longrope (rope type "longrope"): a short and a long factor per frequency, and the attention
    factor (given, or from the factor: the file's, else the context ÷ the original one)."""
    factor = rope.positive_number("factor", default=context / original)
    frequency = f"frequency of the {dims} dims RoPE turns"
    return LongRope(rope.positive_numbers("short_factor", dims // 2, frequency),
                    rope.positive_numbers("long_factor", dims // 2, frequency), original,
                    rope.positive_number("attention_factor", default=None) or longrope_attention(factor, original),
                    rereads)


def rotary_by_kind(fields: Fields, bases: Mapping[str, tuple[str, float]], scaled: tuple[str, ...]
                   ) -> dict[str, tuple[float, float]]:
    """Each kind of layer's rotary base and linear factor in a family whose "full_attention" and
    "sliding_attention" layers turn differently (Gemma 3, ModernBERT), as transformers reads them:
    the kind's own `rope_parameters`, the older `rope_scaling` laid over those of the `scaled` kinds,
    and `bases`' older top-level field (kind → field, default) where the kind gives no base. Only
    plain and linear RoPE are supported."""
    parameters = fields.mapping("rope_parameters")
    if set(parameters) - set(bases):
        raise fields.wrong(("rope_parameters",), f"must give the rotary parameters of each kind of layer "
                           f"({', '.join(bases)})", parameters)
    found = {}
    for kind, (top_name, default) in bases.items():
        given = parameters.get(kind)
        if given is None:  # transformers fills in a kind not given so, before `rope_scaling` is laid over it
            given = {"rope_type": "default"}
        if not isinstance(given, Mapping):
            raise fields.wrong(("rope_parameters",), f"must give an object of fields for {kind}", parameters)
        values = {**given, **fields.mapping("rope_scaling")} if kind in scaled else given
        rope = Fields(values, f"config.json: rope parameters of {kind}")
        linear = rope.text("rope_type", "type", default="default", choices=("default", "linear")) == "linear"
        theta = rope.positive_number("rope_theta", default=fields.positive_number(top_name, default=default))
        found[kind] = theta, rope.positive_number("factor") if linear else 1.0
    return found


def every_nth_global(n_layers: int, every: int, from_first: bool = False) -> list[str]:
    """Layer kinds where every `every`-th layer is global, the others sliding (Gemma 2: 2, Gemma 3: 6),
    counted so the `every`-th is the first global one, or with `from_first` the first (ModernBERT)."""
    first = 0 if from_first else every - 1
    return ["sliding_attention" if (i - first) % every else "full_attention" for i in range(n_layers)]


def layer_types(fields: Fields, n_layers: int, default_types: list[str] | None = None) -> list[str]:
    """Each layer's kind, "sliding_attention" or "full_attention": the file's `layer_types` when it
    names them, else `default_types`, else every layer sliding."""
    types = fields.raw("layer_types", default=None)
    if types is None:
        types = default_types if default_types is not None else ["sliding_attention"] * n_layers
    if not isinstance(types, list) or len(types) != n_layers or \
            not all(t in ("sliding_attention", "full_attention") for t in types):
        raise fields.wrong(("layer_types",), f"must list 'sliding_attention' or 'full_attention' for each of the "
                           f"{n_layers} layers", types)
    return types


def sliding_windows(fields: Fields, n_layers: int, default_types: list[str] | None = None,
                    by_layer: bool = True, default_window: int | None = None) -> tuple[int, ...]:
    """Each layer's sliding window (0: the whole text before the query), from `sliding_window` (null:
    none; absent: `default_window`) and the layers it applies to: with `by_layer`, the file's
    `layer_types` when it names them, else `default_types`; otherwise (Mistral, Phi-3) every layer,
    as their code ignores `layer_types`."""
    if fields.present("sliding_window"):
        window = None if fields.raw("sliding_window", default=None) is None else fields.count("sliding_window")
    else:
        window = default_window
    if window is None:
        return ()
    types = layer_types(fields, n_layers, default_types) if by_layer else ["sliding_attention"] * n_layers
    windows = tuple(window if t == "sliding_attention" else 0 for t in types)
    return windows if any(windows) else ()


def refuse_true(fields: Fields, *names: str) -> None:
    """Switches that would change the computation in a way not implemented here (a decoder's
    bidirectional attention, say): each must be false or absent."""
    for name in names:
        if fields.flag(name, default=False):
            raise ModelError(f"{fields.file_name}: {fields.shown_name(name)!r} is true; only false is supported")


def read_layers(arch: Architecture, src: TensorSource, progress: Progress | None,
                make: Callable[[Architecture, TensorSource, int], LayerWeights]) -> Sequence[LayerWeights]:
    """Layers 0 … n_layers − 1, each `make(arch, src, i)`: read now, telling `progress` of each, or
    (a source of stored weights) read from the file whenever they are computed (stored_layers.py).
    A source that stays readable (`remade`) keeps them where a long text may let most of them go."""
    if src.stored:
        return StoredLayers(arch.n_layers, lambda i: make(arch, src, i))
    layers = []
    for i in range(arch.n_layers):
        report(progress, 0.15 + 0.85 * i / arch.n_layers, f"reading layer {i + 1} of {arch.n_layers}")
        layers.append(make(arch, src, i))
    if src.remade:
        return StoredLayers(arch.n_layers, lambda i: make(arch, src, i), made=layers)
    return layers


def linear(src: TensorSource, name: str, out: int, into: int):
    """A Linear weight stored (out, in), as the forward multiplies by it: (in, out), a transposed view."""
    return src.get(name, (out, into)).T


def projection(src: TensorSource, name: str, out: int, into: int):
    """A layer's Linear weight stored (out, in), for LayerWeights, which lays it out (in, out) once: read
    straight into that array where the source can (TensorSource.transposed), else `linear`'s view. Only
    for LayerWeights: what multiplies by a weight as it comes (BART's cross-attention) takes `linear`."""
    return src.transposed(name, (out, into))
