"""Damage to the GGUF file's header: every metadata field the loader reads with the wrong type or an
impossible value, counts and lengths no file can hold, tensor infos with wrong dimensions, types and
offsets, and tensors that are not numbers."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from .copies import GGUF_NAME, Case, gguf_case, original
from .formats import ARRAY, BOOL, F32, I32, I64, STRING, U32, U64, Gguf, Meta, Tensor, parse_gguf, write_gguf

SWOLLEN_CASE_BYTES = 1 << 20  # enough to be refused, or to show a reader that keeps memory to the file's size
COUNTS = ["llama.block_count", "llama.context_length", "llama.embedding_length", "llama.feed_forward_length",
          "llama.attention.head_count", "llama.attention.head_count_kv", "llama.vocab_size"]
F64 = 12


def _base() -> Gguf:
    return parse_gguf(original(GGUF_NAME))


def _wrong_values(value) -> dict[str, tuple[int | None, object]]:
    """Types and values a damaged header may hold for a field: name → (GGUF type, value)."""
    return {"missing": (None, None), "0": (U32, 0), "-1": (I32, -1), "2^31": (U32, 2 ** 31), "2^63": (U64, 2 ** 63),
            "as text": (STRING, str(value)), "true": (BOOL, True), "3.5": (F32, 3.5), "NaN": (F32, math.nan),
            "an array": (ARRAY, (U32, [value, value])), "one more": (U32, value + 1), "doubled": (U32, value * 2)}


def metadata_cases() -> list[Case]:
    base = _base()
    cases = []

    def case(kind: str, g: Gguf) -> None:
        cases.append(gguf_case(kind, write_gguf(g)))

    for key in COUNTS:
        value = base.meta(key).value
        for kind, (type_id, wrong) in _wrong_values(value).items():
            case(f"{key} {kind}", base.with_meta(key, type_id, wrong))
    eps = "llama.attention.layer_norm_rms_epsilon"
    for kind, (type_id, value) in {"0": (F32, 0.0), "-1": (F32, -1.0), "NaN": (F32, math.nan), "inf": (F32, math.inf),
                                   "1e30": (F32, 1e30), "0.5": (F32, 0.5), "the text '384'": (STRING, "384"),
                                   "true": (BOOL, True), "1 (whole)": (U32, 1), "missing": (None, None),
                                   "as float64": (F64, 1e-5)}.items():
        case(f"{eps} {kind}", base.with_meta(eps, type_id, value))
    for kind, (type_id, value) in {"0": (F32, 0.0), "-1": (F32, -1.0), "NaN": (F32, math.nan),
                                   "inf": (F32, math.inf), "as text": (STRING, "1e4"), "missing": (None, None)}.items():
        case(f"llama.rope.freq_base {kind}", base.with_meta("llama.rope.freq_base", type_id, value))
    for value in (0, 1, 3, 7, 48, 2 ** 31, 64):
        g = base.with_meta("general.alignment", U32, value)
        if value == 64:
            g.alignment = 64  # a valid file written with another alignment
        case(f"general.alignment {value}", g)
    case("general.alignment as text", base.with_meta("general.alignment", STRING, "32"))
    case("general.alignment true", base.with_meta("general.alignment", BOOL, True))
    for kind, (type_id, value) in {"gpt2": (STRING, "gpt2"), "5": (U32, 5), "missing": (None, None),
                                   "an array": (ARRAY, (STRING, ["llama"]))}.items():
        case(f"general.architecture {kind}", base.with_meta("general.architecture", type_id, value))
    tokens = base.meta("tokenizer.ggml.tokens").value[1]
    merges = base.meta("tokenizer.ggml.merges").value[1]
    tokenizer_fields = {
        "tokenizer.ggml.model llama": ("tokenizer.ggml.model", STRING, "llama"),
        "tokenizer.ggml.model 7": ("tokenizer.ggml.model", U32, 7),
        "tokenizer.ggml.model missing": ("tokenizer.ggml.model", None, None),
        "tokens missing": ("tokenizer.ggml.tokens", None, None),
        "tokens empty": ("tokenizer.ggml.tokens", ARRAY, (STRING, [])),
        "tokens as numbers": ("tokenizer.ggml.tokens", ARRAY, (U32, list(range(len(tokens))))),
        "tokens one text": ("tokenizer.ggml.tokens", STRING, "abc"),
        "more tokens than the vocabulary": ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens + ["x1", "x2"])),
        "tokens cut to 100": ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens[:100])),
        "merges missing": ("tokenizer.ggml.merges", None, None),
        "a merge without a space": ("tokenizer.ggml.merges", ARRAY, (STRING, ["ab"] + merges)),
        "a merge of unknown tokens": ("tokenizer.ggml.merges", ARRAY, (STRING, ["zz qq"] + merges)),
        "merges as numbers": ("tokenizer.ggml.merges", ARRAY, (U32, [1, 2])),
        "token types as text": ("tokenizer.ggml.token_type", STRING, "control"),
        "token types of floats": ("tokenizer.ggml.token_type", ARRAY, (F32, [3.0] * len(tokens))),
        "token types too few": ("tokenizer.ggml.token_type", ARRAY, (I32, [3, 1])),
        "bos id past the tokens": ("tokenizer.ggml.bos_token_id", U32, 10 ** 6),
        "bos id negative": ("tokenizer.ggml.bos_token_id", I32, -1),
        "pre-tokenizer a number": ("tokenizer.ggml.pre", U32, 5),
        "rope scaling linear": ("llama.rope.scaling.type", STRING, "linear"),
        "key length odd": ("llama.attention.key_length", U32, 7),
        "key length 16": ("llama.attention.key_length", U32, 16),
        "value length 4": ("llama.attention.value_length", U32, 4),
        "rope dimension count 4": ("llama.rope.dimension_count", U32, 4),
    }
    for kind, (key, type_id, value) in tokenizer_fields.items():
        case(kind, base.with_meta(key, type_id, value))
    with_bos = base.with_meta("tokenizer.ggml.add_bos_token", BOOL, True)
    case("add_bos_token with bos past the tokens", with_bos.with_meta("tokenizer.ggml.bos_token_id", U32, 10 ** 6))
    case("add_bos_token with a good bos", with_bos)
    case("add_bos_token as text", base.with_meta("tokenizer.ggml.add_bos_token", STRING, "yes"))
    return cases


def structure_cases() -> list[Case]:
    base = _base()
    cases = []

    def case(kind: str, g: Gguf) -> None:
        cases.append(gguf_case(kind, write_gguf(g)))

    def extra(**overrides) -> Gguf:
        g = base.copy()
        g.extra.update(overrides)
        return g

    case("magic GGML", extra(magic=b"GGML"))
    for version in (1, 4, 2 ** 31):
        g = base.copy()
        g.version = version
        case(f"version {version}", g)
    for count in (2 ** 63, 2 ** 64 - 1, 10 ** 6, len(base.metadata) + 1):
        case(f"metadata count {count}", extra(n_meta=count))
    for count in (2 ** 63, 10 ** 6, len(base.tensors) + 1, len(base.tensors) - 1, 0):
        case(f"tensor count {count}", extra(n_tensors=count))
    duplicated = base.copy()
    duplicated.metadata.append(Meta("llama.block_count", U32, 2))
    case("a metadata key twice", duplicated)
    case("a value of unknown type 13", extra(n_meta=len(base.metadata) + 1,
                                             raw_meta=struct.pack("<Q", 3) + b"odd" + struct.pack("<II", 13, 0)))
    for depth in (4, 5, 64):
        nested = (U32, [1])
        for _ in range(depth - 1):
            nested = (ARRAY, [nested])
        case(f"arrays nested {depth} deep", base.with_meta("general.notes", ARRAY, nested))
    case("an array of 2^60 numbers", extra(n_meta=len(base.metadata) + 1, raw_meta=struct.pack(
        "<Q", 5) + b"notes" + struct.pack("<IIQ", ARRAY, U32, 2 ** 60)))
    case("an array of 2^60 texts", extra(n_meta=len(base.metadata) + 1, raw_meta=struct.pack(
        "<Q", 5) + b"notes" + struct.pack("<IIQ", ARRAY, STRING, 2 ** 60)))
    case("a key of 2^62 bytes", extra(n_meta=len(base.metadata) + 1, raw_meta=struct.pack("<Q", 2 ** 62)))
    case("a text value of 2^40 bytes", extra(n_meta=len(base.metadata) + 1, raw_meta=struct.pack(
        "<Q", 5) + b"notes" + struct.pack("<IQ", STRING, 2 ** 40)))
    names = [t.name for t in base.tensors]
    for name in (names[0], names[len(names) // 2], names[-1]):
        cases += _tensor_cases(base, name)
    cases += _layer_cases(base)
    whole = original(GGUF_NAME)
    for kind, make in swollen_headers(whole, SWOLLEN_CASE_BYTES).items():
        cases.append(gguf_case(kind, lambda path, make=make: path.write_bytes(make())))
    return cases


def swollen_headers(whole: bytes, size: int) -> dict[str, Callable[[], bytes]]:
    """Copies of the GGUF file `whole` (made when called) whose header grows by about `size` bytes of
    things that take a few bytes each in the file and ten to forty times that as objects: arrays of
    empty arrays (12 bytes each), texts of 3 letters (11), entries of one byte (14) or of an empty
    array (21), tensors of an unknown type (25), tokens the vocabulary claims but the embedding lacks,
    and one text as long as the rest. kind → a function that makes the copy."""
    base = parse_gguf(whole)
    tokens = base.meta("tokenizer.ggml.tokens").value[1]

    def with_entries(body: bytes, each: int) -> bytes:
        count = size // each
        raw = b"".join(struct.pack("<Q", len(key)) + key + body for key in (b"k%x" % i for i in range(count)))
        g = base.copy()
        g.extra.update(n_meta=len(base.metadata) + count, raw_meta=raw)
        return write_gguf(g)

    def with_tensors() -> bytes:
        g = base.copy()
        g.tensors += [Tensor(f"t{i:x}", [], 99, b"") for i in range(size // 25)]
        return write_gguf(g)

    def more_tokens() -> bytes:
        many = tokens + [f"{i:x}" for i in range(size // 14)]
        return write_gguf(base.with_meta("tokenizer.ggml.tokens", ARRAY, (STRING, many))
                          .with_meta("llama.vocab_size", U32, len(many)))

    notes = {"an array of empty arrays": (ARRAY, (ARRAY, [(U32, [])] * (size // 12))),
             "an array of 3-letter texts": (ARRAY, (STRING, ["abc"] * (size // 11))),
             "a text as long as the file": (STRING, "x" * size)}
    swollen = {kind: (lambda t=t: write_gguf(base.with_meta("general.notes", *t))) for kind, t in notes.items()}
    swollen.update({
        "entries of one byte": lambda: with_entries(struct.pack("<IB", 0, 1), 14),
        "entries of an empty array": lambda: with_entries(struct.pack("<IIQ", ARRAY, U32, 0), 21),
        "tensors of an unknown type": with_tensors,
        "tokens the embedding lacks": more_tokens,
    })
    return {f"header swollen by {size:,} bytes: {kind}": make for kind, make in swollen.items()}


def _tensor_cases(base: Gguf, name: str) -> list[Case]:
    cases = []
    index = next(i for i, t in enumerate(base.tensors) if t.name == name)

    def changed(kind: str, **fields) -> None:
        g = base.copy()
        tensor = g.tensors[index]
        extra = fields.pop("extra", {})
        for key, value in fields.items():
            setattr(tensor, key, value)
        g.extra.update(extra)
        cases.append(gguf_case(f"tensor {name}: {kind}", write_gguf(g)))

    tensor = base.tensors[index]
    changed("5 dimensions", extra={"n_dims": {name: 5}})
    changed("2^31 dimensions", extra={"n_dims": {name: 2 ** 31}})
    changed("a dimension of 0", dims=[0, *tensor.dims[1:]])
    changed("a dimension of 2^40", dims=[*tensor.dims[:-1], 2 ** 40])
    changed("dimensions swapped", dims=tensor.dims[::-1])
    changed("one dimension dropped", dims=tensor.dims[:1])
    changed("type 99", type_id=99)
    changed("type Q4_K (blocks of 256)", type_id=12)
    changed("type F32 over F16 bytes" if tensor.type_id == 1 else "type F16", type_id=0 if tensor.type_id == 1 else 1)
    changed("offset off the alignment", extra={"offsets": {name: 4}})
    changed("offset past the end", extra={"offsets": {name: 2 ** 40}})
    changed("offset overlapping another", extra={"offsets": {name: 0}} if index else {"offsets": {name: 32}})
    changed("renamed", name=name + ".renamed")
    changed("named like the tensor before it", name=base.tensors[index - 1].name)
    if tensor.type_id == 0:  # F32: the values themselves
        for kind, value in (("NaN", math.nan), ("infinity", math.inf), ("1e38", 1e38)):
            changed(f"all {kind}", data=struct.pack("<f", value) * (len(tensor.data) // 4))
    return cases


def _layer_cases(base: Gguf) -> list[Case]:
    cases = []
    dropped = base.copy()
    dropped.tensors = [t for t in dropped.tensors if not t.name.startswith("blk.1.")]
    cases.append(gguf_case("layer 2's tensors missing", write_gguf(dropped)))
    third = base.copy()
    third.tensors += [type(t)(t.name.replace("blk.1.", "blk.2."), t.dims, t.type_id, t.data)
                      for t in base.tensors if t.name.startswith("blk.1.")]
    cases.append(gguf_case("a third layer's tensors", write_gguf(third)))
    cases.append(gguf_case("a third layer's tensors, block_count 3",
                           write_gguf(third.with_meta("llama.block_count", U32, 3))))
    no_tokens_meta = base.with_meta("tokenizer.ggml.tokens", None)
    cases.append(gguf_case("no tokens, llama.vocab_size kept", write_gguf(no_tokens_meta)))
    cases.append(gguf_case("64-bit block count", write_gguf(base.with_meta("llama.block_count", I64, 2))))
    return cases
