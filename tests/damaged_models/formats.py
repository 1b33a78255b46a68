"""The two binary formats taken apart and put back together, so a case can damage one field of them.

Written from the formats' specifications, independently of the readers under test: safetensors (an
8-byte header length, a JSON header, the data) and GGUF (magic, version, counts, typed metadata,
tensor infos, aligned data). Only what the tiny checkpoints use is needed, and every field can be
overridden with a value no writer would produce.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field, replace

# --- safetensors -------------------------------------------------------------------------------


def split_safetensors(data: bytes) -> tuple[dict, bytes]:
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length]), data[8 + length:]


def join_safetensors(header: dict | None, blob: bytes, *, raw_header: bytes | None = None,
                     header_len: int | None = None) -> bytes:
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if header_len is None else header_len) + text + blob


def tensor_names(header: dict) -> list[str]:
    return [name for name in header if name != "__metadata__"]


# --- GGUF --------------------------------------------------------------------------------------

# metadata value types (GGUF spec): struct format of the scalars; 8 string, 9 array
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
U32, I32, F32, BOOL, U64, I64 = 4, 5, 6, 7, 10, 11
# tensor types of the tiny checkpoint: elements per block, bytes per block
BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 8: (32, 34)}


@dataclass
class Meta:
    key: str
    type_id: int
    value: object          # a scalar, a str, or for arrays (item_type, [values])


@dataclass
class Tensor:
    name: str
    dims: list[int]        # GGUF order: innermost first
    type_id: int
    data: bytes


@dataclass
class Gguf:
    version: int
    metadata: list[Meta]
    tensors: list[Tensor]
    alignment: int = 32
    extra: dict = field(default_factory=dict)  # raw overrides for write_gguf (see there)

    def meta(self, key: str) -> Meta | None:
        return next((m for m in self.metadata if m.key == key), None)

    def with_meta(self, key: str, type_id: int | None, value=None) -> Gguf:
        """A copy with `key` set (added when absent), or removed when type_id is None."""
        kept = [replace(m) for m in self.metadata if m.key != key]
        if type_id is not None:
            old = [i for i, m in enumerate(self.metadata) if m.key == key]
            kept.insert(old[0] if old else len(kept), Meta(key, type_id, value))
        return replace(self, metadata=kept, tensors=[replace(t) for t in self.tensors], extra=dict(self.extra))

    def copy(self) -> Gguf:
        return replace(self, metadata=[replace(m) for m in self.metadata], tensors=[replace(t) for t in self.tensors],
                       extra=dict(self.extra))


def parse_gguf(data: bytes) -> Gguf:
    """The whole file (a trusted, well-formed one: the committed checkpoint)."""
    pos = 4
    version, n_tensors, n_meta = struct.unpack_from("<IQQ", data, pos)
    pos += 20

    def scalar(fmt):
        nonlocal pos
        (value,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return value

    def string():
        nonlocal pos
        length = scalar("<Q")
        pos += length
        return data[pos - length:pos].decode()

    def value(type_id):
        if type_id in SCALARS:
            return scalar(SCALARS[type_id])
        if type_id == STRING:
            return string()
        item_type, count = scalar("<I"), scalar("<Q")
        return item_type, [value(item_type) for _ in range(count)]

    metadata = []
    for _ in range(n_meta):
        key = string()
        type_id = scalar("<I")
        metadata.append(Meta(key, type_id, value(type_id)))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [scalar("<Q") for _ in range(scalar("<I"))]
        infos.append((name, dims, scalar("<I"), scalar("<Q")))
    alignment = next((m.value for m in metadata if m.key == "general.alignment"), 32)
    start = -(-pos // alignment) * alignment
    tensors = [Tensor(name, dims, type_id, data[start + offset:start + offset + nbytes(dims, type_id)])
               for name, dims, type_id, offset in infos]
    return Gguf(version, metadata, tensors, alignment)


def nbytes(dims: list[int], type_id: int) -> int:
    per_block, block_bytes = BLOCKS[type_id]
    count = 1
    for d in dims:
        count *= d
    return count // per_block * block_bytes


def _pack_value(type_id: int, value) -> bytes:
    if type_id in SCALARS:
        return struct.pack(SCALARS[type_id], value)
    if type_id == STRING:
        raw = value.encode() if isinstance(value, str) else value
        return struct.pack("<Q", len(raw)) + raw
    item_type, items = value
    return struct.pack("<IQ", item_type, len(items)) + b"".join(_pack_value(item_type, v) for v in items)


def write_gguf(g: Gguf) -> bytes:
    """The file; `g.extra` may override what a writer computes: "magic", "n_tensors", "n_meta",
    "offsets" ({tensor name: offset}), "n_dims" ({tensor name: count written}), "tail" (bytes after
    the data), "raw_meta" (bytes appended to the metadata without being counted)."""
    x = g.extra
    head = x.get("magic", b"GGUF") + struct.pack("<IQQ", g.version, x.get("n_tensors", len(g.tensors)),
                                                 x.get("n_meta", len(g.metadata)))
    meta = b"".join(_pack_value(STRING, m.key) + struct.pack("<I", m.type_id) + _pack_value(m.type_id, m.value)
                    for m in g.metadata) + x.get("raw_meta", b"")
    offsets, pieces, end = {}, [], 0  # joined once: SmolLM2's 98 MB added piece by piece took minutes
    for t in g.tensors:
        pieces.append(bytes(-end % g.alignment))
        end += len(pieces[-1])
        offsets[t.name] = end
        pieces.append(t.data)
        end += len(t.data)
    blob = b"".join(pieces)
    offsets.update(x.get("offsets", {}))
    infos = b"".join(_pack_value(STRING, t.name) + struct.pack("<I", x.get("n_dims", {}).get(t.name, len(t.dims)))
                     + b"".join(struct.pack("<Q", d) for d in t.dims) + struct.pack("<IQ", t.type_id, offsets[t.name])
                     for t in g.tensors)
    body = head + meta + infos
    return body + bytes(-len(body) % g.alignment) + blob + x.get("tail", b"")
