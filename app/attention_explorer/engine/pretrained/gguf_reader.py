"""A small NumPy reader of GGUF files (llama.cpp's format): metadata, tensor table, dequantisation.

Why our own: the `gguf` package's reader took 6.8 s to open SmolLM2's file; parsing the header from
a memory map takes a fraction of a second, and tensors are read (and dequantised) only when asked.
Layout: magic "GGUF", version, tensor count, metadata count, metadata (key, type, value), tensor
infos (name, dims innermost first, type, offset), then the data, aligned to `general.alignment`.

Nothing in the header is trusted: every count, length and array is checked against the bytes that
are left before it is read (a count of 2⁶³ entries is refused at once, not looped over), the
alignment must be a power of two, and every tensor's range must lie inside the file, on the
alignment and apart from the others. What the header becomes in memory is paid for from a budget of
the file's own size, charged before each thing is made (see GGUFFile._charge): numeric metadata
arrays stay views of the map and arrays of texts are decoded only when read (Texts), so a header of
millions of tiny entries, arrays or texts is refused, or kept, without taking more memory than the
file. Any damage is one ModelError naming the file (and the key or tensor).
"""

from __future__ import annotations

import math
import mmap
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..limits import MAX_GGUF_ALIGNMENT, MAX_GGUF_ARRAY_DEPTH, MAX_GGUF_DIMS
from ..safe_read import open_regular_file
from .fields import shown
from .mapped import map_file, release

# Metadata value types: struct format of the scalar ones; 8 is a string, 9 an array.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_NUMPY = {0: np.uint8, 1: np.int8, 2: np.uint16, 3: np.int16, 4: np.uint32, 5: np.int32, 6: np.float32,
          7: np.bool_, 10: np.uint64, 11: np.int64, 12: np.float64}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")
# The fewest bytes a metadata entry (key length, type, a one-byte value), a tensor info (name length,
# dimension count, type, offset) and an array (item type, count) can take: how many the bytes left hold.
_MIN_ENTRY_BYTES, _MIN_TENSOR_INFO_BYTES, _MIN_ARRAY_BYTES = 13, 24, 12
# What the header's Python objects cost, charged against the file's size before each is made (in
# bytes, rounded up from tracemalloc): a metadata entry (its slot in the dict and a scalar value), an
# array (a NumPy view of the map: ~430), a tensor's info, a text (~50) and each of its characters (up
# to 4: a byte that is not UTF-8 becomes U+FFFD, and one character beyond U+FFFF widens them all).
_ENTRY_COST, _ARRAY_COST, _TENSOR_INFO_COST, _TEXT_COST, _CHAR_COST = 128, 512, 512, 64, 4
DEFAULT_ALIGNMENT = 32

# Tensor types we can turn into float32: name, elements per block, bytes per block.
TENSOR_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
                8: ("Q8_0", 32, 34), 30: ("BF16", 1, 2)}
# The sizes of llama.cpp's other types, so their ranges can be checked too (they are refused only if used).
_OTHER_SIZES = {6: (32, 22), 7: (32, 24), 9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144),
                13: (256, 176), 14: (256, 210), 15: (256, 292), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8),
                28: (1, 8)}


class _Damaged(Exception):
    """The header does not hold what it says; the message says where."""


class Texts(Sequence):
    """A metadata array of texts, each decoded when it is read.

    A vocabulary holds tens of thousands of texts of a few bytes each; as Python strings each would
    cost some 60 bytes, five to ten times its bytes in the file, and a damaged header of millions of
    them took 200 MB for a 22 MB file. Only where each text starts is kept (8 bytes, no more than the
    file holds for it); a model decodes the texts it uses once its sizes are checked.
    """

    def __init__(self, data: mmap.mmap, starts: np.ndarray):
        self._data = data
        self._starts = starts  # the offset of each text's 8-byte length

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        start = int(self._starts[index])
        (length,) = _U64.unpack_from(self._data, start)
        return self._data[start + 8:start + 8 + length].decode("utf-8", errors="replace")

    def __repr__(self) -> str:  # as a list's, cut short: a message quotes it (fields.shown)
        return "[" + ", ".join(repr(text) for text in self[:4]) + (", ...]" if len(self) > 4 else "]")


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # NumPy order (outermost first): GGUF's dims reversed
    type_id: int
    offset: int             # absolute byte offset in the file
    nbytes: int             # 0 for a type whose size we do not know


class GGUFFile:
    """One open GGUF file: `metadata` (key → value), `tensors` (name → TensorInfo), `tensor(name)`."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.name = self.path.name
        with open_regular_file(self.path, ".gguf file", error=ModelError) as (handle, size):
            if size == 0:
                raise ModelError(f"{self.name}: the file is empty; download it again")
            self._map = map_file(handle, self.name)
        self._pos = 0
        self._memory_left = len(self._map)
        try:
            self._read_header()
        except _Damaged as error:
            raise ModelError(f"{self.name}: the GGUF header is truncated or damaged ({error}); "
                             f"download the file again") from None

    # --- header -------------------------------------------------------------------------------
    def _read_header(self) -> None:
        if self._map[:4] != b"GGUF":
            raise ModelError(f"{self.name}: not a GGUF file (it does not start with 'GGUF')")
        self._pos = 4
        version = self._scalar("<I")
        if version not in (2, 3):
            raise ModelError(f"{self.name}: GGUF version {version} is not supported (only 2 and 3)")
        n_tensors, n_meta = self._scalar("<Q"), self._scalar("<Q")
        self._check_count(n_meta, _MIN_ENTRY_BYTES, "metadata entries")
        self._charge(n_meta * _ENTRY_COST, f"its {n_meta:,} metadata entries")
        self.metadata = {}
        for _ in range(n_meta):
            key = self._string()
            if key in self.metadata:
                raise ModelError(f"{self.name}: the metadata key {shown(key)} appears twice; the header is damaged")
            self.metadata[key] = self._value(self._scalar("<I"), key, 0)
        self._check_count(n_tensors, _MIN_TENSOR_INFO_BYTES, "tensors")
        self._charge(n_tensors * _TENSOR_INFO_COST, f"its {n_tensors:,} tensors")
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            n_dims = self._scalar("<I")
            if n_dims > MAX_GGUF_DIMS:
                raise ModelError(f"{self.name}: tensor {shown(name)} has {n_dims:,} dimensions; GGUF tensors have "
                                 f"at most {MAX_GGUF_DIMS}")
            dims = [self._scalar("<Q") for _ in range(n_dims)]
            infos.append((name, tuple(reversed(dims)), self._scalar("<I"), self._scalar("<Q")))
        alignment = self._alignment()
        data_start = -(-self._pos // alignment) * alignment
        self.tensors = {}
        for name, shape, type_id, offset in infos:
            if name in self.tensors:
                raise ModelError(f"{self.name}: tensor {shown(name)} appears twice; the header is damaged")
            self.tensors[name] = self._tensor_info(name, shape, type_id, offset, data_start, alignment)
        self._check_disjoint()

    def _check_count(self, count: int, min_bytes: int, what: str) -> None:
        if count > (len(self._map) - self._pos) // min_bytes:
            raise _Damaged(f"it lists {count:,} {what}, more than the {len(self._map):,} bytes of the file can hold")

    def _charge(self, nbytes: int, what: str) -> None:
        """Take `nbytes` from what the header may still cost in memory, before it is spent. The budget
        is the file's size: with the mapped pages read, memory stays within twice the file. A real
        header is a sliver of its file (SmolLM2's is charged 1 MB of its 98); millions of entries of
        13 bytes each, or of empty arrays of 12, would take ten to forty times the file as objects."""
        self._memory_left -= nbytes
        if self._memory_left < 0:
            raise _Damaged(f"{what} would take more memory than the file's {len(self._map):,} bytes")

    def _alignment(self) -> int:
        alignment = self.metadata.get("general.alignment", DEFAULT_ALIGNMENT)
        if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1 \
                or alignment & (alignment - 1) or alignment > MAX_GGUF_ALIGNMENT:
            raise ModelError(f"{self.name}: metadata field 'general.alignment' must be a power of two up to "
                             f"{MAX_GGUF_ALIGNMENT:,}, not {shown(alignment)}")
        return alignment

    def _tensor_info(self, name: str, shape: tuple[int, ...], type_id: int, offset: int, data_start: int,
                     alignment: int) -> TensorInfo:
        known = TENSOR_TYPES.get(type_id)
        per_block, block_bytes = (known[1], known[2]) if known else _OTHER_SIZES.get(type_id, (1, 0))
        if shape and shape[-1] % per_block:
            raise ModelError(f"{self.name}: tensor {shown(name)} has rows of {shape[-1]:,} values, not whole "
                             f"blocks of {per_block}")
        if offset % alignment:
            raise ModelError(f"{self.name}: tensor {shown(name)} starts at offset {offset:,}, not on the file's "
                             f"alignment of {alignment}; the header is damaged")
        nbytes = math.prod(shape) // per_block * block_bytes  # Python integers: no overflow
        end = data_start + offset + nbytes
        if end > len(self._map):
            raise ModelError(f"{self.name}: tensor {shown(name)} ends at byte {end:,} but the file has "
                             f"{len(self._map):,}; the file is truncated, download it again")
        return TensorInfo(name, shape, type_id, data_start + offset, nbytes)

    def _check_disjoint(self) -> None:
        previous = None
        for info in sorted((t for t in self.tensors.values() if t.nbytes), key=lambda t: t.offset):
            if previous is not None and info.offset < previous.offset + previous.nbytes:
                raise ModelError(f"{self.name}: tensors {shown(previous.name)} and {shown(info.name)} claim the "
                                 f"same bytes (from {info.offset:,}); the header is damaged")
            previous = info

    def _need(self, count: int, what: str) -> None:
        if count > len(self._map) - self._pos:
            raise _Damaged(f"{what} of {count:,} bytes runs past the end of the file")

    def _scalar(self, fmt: str):
        size = struct.calcsize(fmt)
        if self._pos + size > len(self._map):
            raise _Damaged(f"it ends at byte {len(self._map):,}, inside the header")
        (value,) = struct.unpack_from(fmt, self._map, self._pos)
        self._pos += size
        return value

    def _string(self) -> str:
        length = self._scalar("<Q")
        self._need(length, "a text")
        self._charge(_TEXT_COST + _CHAR_COST * length, f"a text of {length:,} bytes")
        text = self._map[self._pos:self._pos + length].decode("utf-8", errors="replace")
        self._pos += length
        return text

    def _texts(self, count: int, key: str) -> Texts:
        self._charge(_ARRAY_COST + 8 * count, f"the array {shown(key)} of {count:,} texts")
        unpack, data, pos, size = _U64.unpack_from, self._map, self._pos, len(self._map)
        starts = np.empty(count, dtype=np.int64)
        for index in range(count):  # the vocabulary: ~50,000 texts, walked in one tight loop
            if pos + 8 > size:
                raise _Damaged(f"it ends at byte {size:,}, inside the header")
            (length,) = unpack(data, pos)
            if length > size - pos - 8:
                raise _Damaged(f"a text of {length:,} bytes runs past the end of the file")
            starts[index] = pos
            pos += 8 + length
        self._pos = pos
        return Texts(data, starts)

    def _value(self, type_id: int, key: str, depth: int):
        if type_id in _SCALARS:
            return self._scalar(_SCALARS[type_id])
        if type_id == _STRING:
            return self._string()
        if type_id == _ARRAY:
            if depth >= MAX_GGUF_ARRAY_DEPTH:
                raise _Damaged(f"{shown(key)} nests arrays more than {MAX_GGUF_ARRAY_DEPTH} deep")
            item_type, count = self._scalar("<I"), self._scalar("<Q")
            if item_type in _NUMPY:  # numbers: a view of the map, read in one go
                itemsize = np.dtype(_NUMPY[item_type]).itemsize
                self._need(count * itemsize, f"the array {shown(key)}")
                self._charge(_ARRAY_COST, f"the array {shown(key)}")
                values = np.frombuffer(self._map, dtype=_NUMPY[item_type], count=count, offset=self._pos)
                self._pos += values.nbytes
                return values
            if item_type == _STRING:
                self._need(count * 8, f"the array {shown(key)}")  # every text takes 8 bytes or more
                return self._texts(count, key)
            # arrays of arrays (or of an unknown type, refused at its first item): a list, and each array
            # in it charged as it is made, so two million empty ones (12 bytes each) stop at the budget
            self._need(count * _MIN_ARRAY_BYTES, f"the array {shown(key)}")
            self._charge(_ARRAY_COST + 8 * count, f"the array {shown(key)} of {count:,} items")
            return [self._value(item_type, key, depth + 1) for _ in range(count)]
        raise _Damaged(f"{shown(key)} has the unknown value type {type_id}")

    # --- tensors ------------------------------------------------------------------------------
    def tensor(self, name: str) -> np.ndarray:
        """Tensor `name` as a new float32 array (dequantised when stored in blocks); the pages of the
        map it was read from are let go (mapped.py), so neither opening a model nor reading its layers
        again (weights kept stored) keeps the file's bytes in the process's memory beside the result."""
        info = self._info(name)
        return self._values(info, 0, info.shape[0] if info.shape else 1).reshape(info.shape)

    def rows_apart(self, name: str) -> bool:
        """Whether each row of tensor `name` is whole blocks, so that rows can be read alone (as
        llama.cpp writes matrices)."""
        info = self._info(name)
        return math.prod(info.shape[1:]) % TENSOR_TYPES[info.type_id][1] == 0

    def tensor_rows(self, name: str, start: int, stop: int) -> np.ndarray:
        """Rows start … stop − 1 of matrix `name` (along its first axis, as `tensor` gives it): read alone
        when a row is whole blocks (rows_apart); else from the whole tensor."""
        info = self._info(name)
        if not self.rows_apart(name):
            return self.tensor(name)[start:stop]
        return self._values(info, start, stop).reshape(stop - start, *info.shape[1:])

    def _info(self, name: str) -> TensorInfo:
        if name not in self.tensors:
            raise ModelError(f"{self.name}: tensor {name!r} is missing")
        info = self.tensors[name]
        if info.type_id not in TENSOR_TYPES:
            raise ModelError(f"{self.name}: tensor {name!r} uses GGUF type {info.type_id}, which is not supported; "
                             f"supported: {', '.join(t[0] for t in TENSOR_TYPES.values())}")
        return info

    def _values(self, info: TensorInfo, start: int, stop: int) -> np.ndarray:
        """The flat float32 values of rows start … stop − 1 of `info`'s tensor."""
        if info.nbytes == 0:  # no numbers at all
            return np.zeros(0, dtype=np.float32)
        row_bytes = info.nbytes // (info.shape[0] if info.shape else 1)
        offset, nbytes = info.offset + start * row_bytes, (stop - start) * row_bytes
        raw = np.frombuffer(self._map, dtype=np.uint8, count=nbytes, offset=offset)
        values = dequantize(TENSOR_TYPES[info.type_id][0], raw)
        release(self._map, offset, nbytes)  # read once here: what the model keeps is the float32
        return values


def dequantize(kind: str, raw: np.ndarray) -> np.ndarray:
    """Flat float32 values of `raw` bytes stored as `kind` (llama.cpp's block layouts)."""
    if kind == "F32":
        return raw.view(np.float32).copy()
    if kind == "F16":
        return raw.view(np.float16).astype(np.float32)
    if kind == "BF16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if kind == "Q8_0":  # per block: scale d (f16), 32 × int8; x = d·q, scaled in place: one float32 array made
        blocks = raw.reshape(-1, 34)
        values = blocks[:, 2:].view(np.int8).astype(np.float32)
        values *= blocks[:, :2].copy().view(np.float16).astype(np.float32)
        return values.ravel()
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
