"""A GGUF file read through a memory map, and a tensor's pages let go once it is dequantised.

The pages of a mapped file that have been read count in the process's resident memory until the
system needs them back. A model dequantises each tensor once at open, or each layer again whenever
it computes it when its weights stay in the file (weights.choose_mode); letting each tensor's pages
go once it is dequantised keeps its memory near what it converted, instead of growing to the file's
whole size on top of it. The file's bytes stay in the system's cache, so reading them again costs
no disk. (A safetensors file is read, not mapped: safetensors_reader.py.)
"""

from __future__ import annotations

import mmap
from typing import BinaryIO

from ..errors import ModelError


def map_file(handle: BinaryIO, file_name: str) -> mmap.mmap:
    """The open file, mapped read-only (the map outlives the handle)."""
    try:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as error:
        raise ModelError(f"{file_name}: cannot open it ({error})") from error


def release(data: mmap.mmap, start: int, nbytes: int) -> None:
    """Let the whole pages of bytes start … start + nbytes − 1 of `data` go from this process's memory
    (where the system allows it: Linux, macOS)."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    end = (start + nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        data.madvise(mmap.MADV_DONTNEED, first, end - first)
