"""A reader of the safetensors format (an 8-byte header length, a JSON header, raw data).

Why our own: the `safetensors` library's NumPy API took 0.47–0.74 s for MiniLM's 90 MB; reading
each tensor straight into its own array takes 0.04–0.14 s. Own arrays rather than views of a
memory map: the loaders replace many tensors by re-laid-out copies, and an array of its own is
freed when its copy is made, while a mapped file stays counted in resident memory. A tensor stored
in bf16 or fp16 is converted to float32 a few MiB at a time as it is read, so opening a checkpoint
takes about its weights' float32 size, not that plus the file's bytes or a wider copy of them; a
layer's matrix is read transposed straight into its place in the array the layer multiplies by
(read_transposed), not converted in the file's layout and copied again.
A model that keeps its weights stored reads its layers again and again in the same way, after the
file is closed (keep_open): read rather than mapped, the file's bytes stay in the system's cache and
never count in the process's memory, and a file not yet cached is read in large pieces.

The header is checked whole before any tensor is read: every entry's type, shape and byte range
against the others and the file's length (no range past the end, no two ranges sharing bytes), so
what is read is at most the file itself; a damaged header is one ModelError naming the file and the
tensor. The file is opened through the same door as every file the user names (engine.safe_read).
"""

from __future__ import annotations

import math
import os
import struct
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..errors import ModelError
from ..limits import JSON_VALUE_BYTES, MAX_SAFETENSORS_HEADER_BYTES, MIN_HEADER_VALUE_BUDGET
from ..safe_read import open_regular_file, parse_json
from .fields import shown

_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "F64": np.float64,
           "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
_FLOATS = ("F32", "F16", "BF16", "F64")
_MAX_DIMS = 8


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the header, checked: its type, shape and where its bytes are in the file."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int   # absolute offset in the file
    nbytes: int


class SafetensorsFile:
    """One open safetensors file: `entries` (name → TensorEntry, checked) and `read(name)`."""

    def __init__(self, path: Path, handle: BinaryIO, size: int):
        self.path, self.name, self._handle = Path(path), Path(path).name, handle
        self.entries = _read_header(self.name, handle, size)
        self._reading = threading.Lock()

    def keep_open(self) -> None:
        """Read the tensors from a handle of the file's own from now on, kept until this object goes,
        so that they can still be read once the file is closed: a model of stored weights reads each
        layer whenever it computes it. A copy of the same handle (the file that was checked, not
        whatever is at its path now)."""
        self._handle = os.fdopen(os.dup(self._handle.fileno()), "rb")
        weakref.finalize(self, self._handle.close)

    def read(self, name: str) -> np.ndarray:
        """Tensor `name` as a new array; the floating-point ones as float32.

        F32 and the integer types are read straight into their array. BF16, F16 and F64 are read a
        few MiB at a time into one small buffer and converted into the float32 array as they come, so
        a tensor takes its float32 size and no more: neither its raw bytes whole nor a wider copy.
        """
        entry = self.entries[name]
        return self._read(entry, 0, entry.shape)

    def read_rows(self, name: str, start: int, stop: int) -> np.ndarray:
        """Rows start … stop − 1 of tensor `name` (along its first axis), as `read` gives them."""
        entry = self.entries[name]
        return self._read(entry, start * math.prod(entry.shape[1:]), (stop - start, *entry.shape[1:]))

    def read_transposed(self, name: str, out: np.ndarray) -> None:
        """The 2-D tensor `name` (rows, columns) transposed into `out` (columns, rows; float32, a column
        slice of a layer's laid-out array as a rule: weights.laid_out), converted as it is read: a few MiB
        of rows at a time into one small buffer, then _ROWS_TRANSPOSED rows at a time converted into a
        float32 scratch that stays in the processor's cache and copied from there into `out`'s columns.
        Neither the file's bytes whole nor a float32 copy in the file's layout is made."""
        entry = self.entries[name]
        stored = np.dtype(_DTYPES[entry.dtype])
        rows, row_bytes = entry.shape[0], entry.shape[1] * stored.itemsize
        step = max(1, _CHUNK_BYTES // max(row_bytes, 1))
        buffer = np.empty((min(step, rows), entry.shape[1]), dtype=stored)
        scratch = np.empty((min(_ROWS_TRANSPOSED, rows), entry.shape[1]), dtype=np.float32)
        for begin in range(0, rows, step):
            part = buffer[:min(step, rows - begin)]
            self._read_into(name, entry.start + begin * row_bytes, memoryview(part.reshape(-1)).cast("B"))
            for row in range(0, len(part), _ROWS_TRANSPOSED):
                block = part[row:row + _ROWS_TRANSPOSED]
                converted = scratch[:len(block)]
                _to_float32(block, converted, entry.dtype)
                np.copyto(out[:, begin + row:begin + row + len(block)], converted.T)

    def _read(self, entry: TensorEntry, first: int, shape: tuple[int, ...]) -> np.ndarray:
        """The values of `entry` from its `first` on, as many as `shape` holds."""
        stored = np.dtype(_DTYPES[entry.dtype])
        converted = entry.dtype in _FLOATS and entry.dtype != "F32"
        array = np.empty(shape, dtype=np.float32 if converted else stored)
        offset = entry.start + first * stored.itemsize
        if not converted:
            self._read_into(entry.name, offset, memoryview(array.reshape(-1)).cast("B"))
            return array
        flat, step = array.reshape(-1), max(1, _CHUNK_BYTES // stored.itemsize)
        buffer = np.empty(min(step, flat.size), dtype=stored)
        for begin in range(0, flat.size, step):
            part = buffer[:min(step, flat.size - begin)]
            self._read_into(entry.name, offset + begin * stored.itemsize, memoryview(part).cast("B"))
            _to_float32(part, flat[begin:begin + part.size], entry.dtype)
        return array

    def _read_into(self, name: str, start: int, target: memoryview) -> None:
        """Fill `target` with the file's bytes from `start`; a short read is the file cut short (a
        regular file may also give fewer bytes than asked at once: Linux gives at most ~2 GiB)."""
        done = 0
        try:
            with self._reading:  # one place in the file at a time: a layer made ahead reads beside the reader
                self._handle.seek(start)
                while done < len(target):
                    got = self._handle.readinto(target[done:])
                    if not got:
                        break
                    done += got
        except OSError as error:
            raise ModelError(f"{self.name}: cannot read tensor {name!r} ({error.strerror or error})") from error
        if done != len(target):
            raise ModelError(f"{self.name}: tensor {name!r} is cut short; the file is truncated, download it again")


_CHUNK_BYTES = 1 << 22  # what a converted tensor reads at a time: 4 MiB
_ROWS_TRANSPOSED = 16  # rows converted, then copied into columns, at once (read_transposed): 128 KiB as
                       # float32 for a row of 2,048, kept in the processor's cache from one column written
                       # to the next; 16 took half the time of 64 or 128, and 4/5 of converting into the
                       # columns straight from the file's 16 bits


def _to_float32(raw: np.ndarray, out: np.ndarray, dtype: str) -> None:
    """`raw` (BF16 as uint16, F16, F32, F64; any layout, a transposed view too) converted exactly into
    the float32 `out`, no array as large made on the way. bfloat16 is the top half of a float32: its
    16 bits shifted up by 16."""
    if dtype == "BF16":
        np.left_shift(raw, np.uint32(16), out=out.view(np.uint32), dtype=np.uint32)
    else:
        np.copyto(out, raw, casting="unsafe")  # F16 widens exactly; F64 rounds to nearest, as astype did


@contextmanager
def open_safetensors(path: Path) -> Iterator[SafetensorsFile]:
    """The file with its header read and checked; closed on leaving."""
    with open_regular_file(path, "safetensors file", error=ModelError,
                           advice=f"put the model's own {Path(path).name} there") as (handle, size):
        yield SafetensorsFile(path, handle, size)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of `path`; the floating-point ones as float32."""
    with open_safetensors(path) as file:
        return {name: file.read(name) for name in file.entries}


def _read_header(file_name: str, handle: BinaryIO, size: int) -> dict[str, TensorEntry]:
    try:
        head = handle.read(8)
        if len(head) < 8:
            raise ModelError(f"{file_name}: the file is empty or truncated (no safetensors header)")
        (header_len,) = struct.unpack("<Q", head)
        if header_len > size - 8:
            raise ModelError(f"{file_name}: the header says {header_len:,} bytes but the file has {size:,}; "
                             f"it is truncated or not a safetensors file")
        if header_len > MAX_SAFETENSORS_HEADER_BYTES:
            raise ModelError(f"{file_name}: the header says {header_len:,} bytes; a safetensors header is at most "
                             f"{MAX_SAFETENSORS_HEADER_BYTES:,}, so this is not one")
        raw = handle.read(header_len)
    except OSError as error:
        raise ModelError(f"{file_name}: cannot read it ({error.strerror or error})") from error
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ModelError(f"{file_name}: the safetensors header is not UTF-8 text (byte {error.start:,}); "
                         f"the file is damaged or not a safetensors file") from None
    most = max(size, MIN_HEADER_VALUE_BUDGET) // JSON_VALUE_BYTES  # parsed, the header takes at most the file's size
    header = parse_json(text, f"{file_name} (its header)", "safetensors header", max_values=most, error=ModelError)
    if not isinstance(header, dict):
        raise ModelError(f"{file_name}: the safetensors header is not a JSON object")
    data_start, data_len = 8 + header_len, size - 8 - header_len
    entries = {name: _entry(file_name, name, info, data_start, data_len)
               for name, info in header.items() if name != "__metadata__"}
    _check_disjoint(file_name, entries)
    return entries


def _entry(file_name: str, name: str, info, data_start: int, data_len: int) -> TensorEntry:
    def bad(what: str) -> ModelError:
        return ModelError(f"{file_name}: tensor {name!r} {what}; the header is damaged or not a safetensors header")

    if not isinstance(info, dict):
        raise bad(f"has {shown(info)} where its type, shape and offsets belong")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in _DTYPES:
        raise ModelError(f"{file_name}: tensor {name!r} has the unsupported type {shown(dtype)}; "
                         f"supported: {', '.join(_DTYPES)}")
    if not isinstance(shape, list) or len(shape) > _MAX_DIMS or not all(_whole(d) for d in shape):
        raise bad(f"has the shape {shown(shape)}, not a list of at most {_MAX_DIMS} whole numbers of 0 or more")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_whole(o) for o in offsets) \
            or offsets[0] > offsets[1]:
        raise bad(f"has the data offsets {shown(offsets)}, not [begin, end] with 0 ≤ begin ≤ end")
    begin, end = offsets
    if end > data_len:
        raise ModelError(f"{file_name}: tensor {name!r} ends at byte {data_start + end:,} but the file has "
                         f"{data_start + data_len:,} bytes; the file is truncated, download it again")
    needed = math.prod(shape) * np.dtype(_DTYPES[dtype]).itemsize  # Python integers: no overflow
    if needed != end - begin:
        raise bad(f"holds {end - begin:,} bytes, its shape {tuple(shape)} of {dtype} needs {needed:,}")
    return TensorEntry(name, dtype, tuple(shape), data_start + begin, end - begin)


def _whole(value) -> bool:
    """A whole number NumPy can take as a size or an offset (a JSON true is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 ** 63


def _check_disjoint(file_name: str, entries: dict[str, TensorEntry]) -> None:
    """No two tensors share a byte: each is read into its own array, so a header of aliases (200
    entries over one range) would otherwise multiply the memory a file takes."""
    previous = None
    for entry in sorted((e for e in entries.values() if e.nbytes), key=lambda e: e.start):
        if previous is not None and entry.start < previous.start + previous.nbytes:
            raise ModelError(f"{file_name}: tensors {previous.name!r} and {entry.name!r} claim the same bytes "
                             f"(from {entry.start:,}); the header is damaged")
        previous = entry
