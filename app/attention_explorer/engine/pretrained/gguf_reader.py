"""A small NumPy reader of GGUF files (llama.cpp's format): metadata, tensor table, dequantisation.

Why our own: the `gguf` package's reader took 6.8 s to open SmolLM2's file; parsing the header from
a memory map takes a fraction of a second, and tensors are read (and dequantised) only when asked.
Layout: magic "GGUF", version, tensor count, metadata count, metadata (key, type, value), tensor
infos (name, dims innermost first, type, offset), then the data, aligned to `general.alignment`.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelError

# Metadata value types: struct format of the scalar ones; 8 is a string, 9 an array.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_NUMPY = {0: np.uint8, 1: np.int8, 2: np.uint16, 3: np.int16, 4: np.uint32, 5: np.int32, 6: np.float32,
          7: np.bool_, 10: np.uint64, 11: np.int64, 12: np.float64}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")

# Tensor types we can turn into float32: name, elements per block, bytes per block.
TENSOR_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
                8: ("Q8_0", 32, 34), 30: ("BF16", 1, 2)}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # NumPy order (outermost first): GGUF's dims reversed
    type_id: int
    offset: int             # absolute byte offset in the file
    nbytes: int


class GGUFFile:
    """One open GGUF file: `metadata` (key → value), `tensors` (name → TensorInfo), `tensor(name)`."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.name = self.path.name
        try:
            with self.path.open("rb") as handle:
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as error:  # ValueError: an empty file cannot be mapped
            raise ModelError(f"{self.name}: cannot open it ({error or 'the file is empty'})") from error
        self._pos = 0
        try:
            self._read_header()
        except (struct.error, ValueError, IndexError) as error:
            raise ModelError(f"{self.name}: the GGUF header is truncated or damaged ({error}); "
                             f"download the file again") from error

    # --- header -------------------------------------------------------------------------------
    def _read_header(self) -> None:
        if self._map[:4] != b"GGUF":
            raise ModelError(f"{self.name}: not a GGUF file (it does not start with 'GGUF')")
        self._pos = 4
        version = self._scalar("<I")
        if version not in (2, 3):
            raise ModelError(f"{self.name}: GGUF version {version} is not supported (only 2 and 3)")
        n_tensors, n_meta = self._scalar("<Q"), self._scalar("<Q")
        self.metadata = {}
        for _ in range(n_meta):
            key = self._string()
            self.metadata[key] = self._value(self._scalar("<I"))
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            dims = [self._scalar("<Q") for _ in range(self._scalar("<I"))]
            infos.append((name, tuple(reversed(dims)), self._scalar("<I"), self._scalar("<Q")))
        alignment = int(self.metadata.get("general.alignment", 32))
        data_start = -(-self._pos // alignment) * alignment
        self.tensors = {}
        for name, shape, type_id, offset in infos:
            count = int(np.prod(shape))
            _, per_block, block_bytes = TENSOR_TYPES.get(type_id, ("?", 1, 0))
            self.tensors[name] = TensorInfo(name, shape, type_id, data_start + offset, count // per_block * block_bytes)

    def _scalar(self, fmt: str):
        (value,) = struct.unpack_from(fmt, self._map, self._pos)
        self._pos += struct.calcsize(fmt)
        return value

    def _string(self) -> str:
        length = self._scalar("<Q")
        if self._pos + length > len(self._map):
            raise ValueError("a string runs past the end of the file")
        text = self._map[self._pos:self._pos + length].decode("utf-8", errors="replace")
        self._pos += length
        return text

    def _strings(self, count: int) -> list[str]:
        unpack, data, pos, strings = _U64.unpack_from, self._map, self._pos, []
        for _ in range(count):
            (length,) = unpack(data, pos)
            pos += 8
            strings.append(data[pos:pos + length].decode("utf-8", errors="replace"))
            pos += length
        if pos > len(data):
            raise ValueError("a string runs past the end of the file")
        self._pos = pos
        return strings

    def _value(self, type_id: int):
        if type_id in _SCALARS:
            return self._scalar(_SCALARS[type_id])
        if type_id == _STRING:
            return self._string()
        if type_id == _ARRAY:
            item_type, count = self._scalar("<I"), self._scalar("<Q")
            if item_type in _NUMPY:  # numbers: one read for the whole array
                values = np.frombuffer(self._map, dtype=_NUMPY[item_type], count=count, offset=self._pos)
                self._pos += values.nbytes
                return values.tolist()
            if item_type == _STRING:  # the vocabulary: ~50,000 strings, read in one tight loop
                return self._strings(count)
            return [self._value(item_type) for _ in range(count)]
        raise ValueError(f"unknown metadata value type {type_id}")

    # --- tensors ------------------------------------------------------------------------------
    def tensor(self, name: str) -> np.ndarray:
        """Tensor `name` as a new float32 array (dequantised when stored in blocks)."""
        if name not in self.tensors:
            raise ModelError(f"{self.name}: tensor {name!r} is missing")
        info = self.tensors[name]
        if info.type_id not in TENSOR_TYPES:
            raise ModelError(f"{self.name}: tensor {name!r} uses GGUF type {info.type_id}, which is not supported; "
                             f"supported: {', '.join(t[0] for t in TENSOR_TYPES.values())}")
        kind, per_block, _ = TENSOR_TYPES[info.type_id]
        if info.shape and info.shape[-1] % per_block:
            raise ModelError(f"{self.name}: tensor {name!r} has rows of {info.shape[-1]} values, not whole "
                             f"blocks of {per_block}")
        if info.offset + info.nbytes > len(self._map):
            raise ModelError(f"{self.name}: tensor {name!r} ends at byte {info.offset + info.nbytes} but the file "
                             f"has {len(self._map)}; the file is truncated, download it again")
        raw = np.frombuffer(self._map, dtype=np.uint8, count=info.nbytes, offset=info.offset)
        return dequantize(kind, raw).reshape(info.shape)


def dequantize(kind: str, raw: np.ndarray) -> np.ndarray:
    """Flat float32 values of `raw` bytes stored as `kind` (llama.cpp's block layouts)."""
    if kind == "F32":
        return raw.view(np.float32).copy()
    if kind == "F16":
        return raw.view(np.float16).astype(np.float32)
    if kind == "BF16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if kind == "Q8_0":  # per block: scale d (f16), 32 × int8; x = d·q
        blocks = raw.reshape(-1, 34)
        scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
        return (blocks[:, 2:].view(np.int8).astype(np.float32) * scale).ravel()
    # Q4_0 (d, 16 bytes) and Q4_1 (d, m, 16 bytes): the low nibbles are values 0–15, the high 16–31;
    # written straight into the float32 result, which saves three passes over the data.
    header = 2 if kind == "Q4_0" else 4
    blocks = raw.reshape(-1, header + 16)
    nibbles = blocks[:, header:]
    values = np.empty((blocks.shape[0], 32), dtype=np.float32)
    np.bitwise_and(nibbles, 0x0F, out=values[:, :16], casting="unsafe")
    np.right_shift(nibbles, 4, out=values[:, 16:], casting="unsafe")
    if kind == "Q4_0":
        values -= 8.0
    values *= blocks[:, :2].copy().view(np.float16).astype(np.float32)
    if kind == "Q4_1":
        values += blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
    return values.ravel()
