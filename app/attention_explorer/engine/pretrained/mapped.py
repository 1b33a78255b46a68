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


FAULT_AROUND_BYTES = 64 * 1024  # Linux maps the pages of about this stretch around each page read...
# ...or a whole folio of the file's cache, up to a page table's reach (2 MiB with 4 KiB pages): one page read
# of a file on ext4 mapped 2 MiB (Linux 6.18). Such folios lie on multiples of their size in the file.
LARGEST_FOLIO_BYTES = mmap.PAGESIZE * mmap.PAGESIZE // 8


def release(data: mmap.mmap, start: int, nbytes: int) -> None:
    """Let the pages of bytes start … start + nbytes − 1 of `data` go from this process's memory, with
    those the system mapped around them as they were read (where the system allows it: Linux, macOS).
    Only the pages wholly inside had gone: what was mapped around each tensor stayed, 11 MiB of
    SmolLM2's window; and a stretch of 64 KiB around them left most of a large folio mapped. A page of a
    neighbouring tensor let go too is read again from the system's cache if it is read at all (the map
    is read-only, so no number can change)."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    # the stretch mapped around a page read lies on multiples of its size in memory, not quite in the file:
    # a stretch more on either side; and a folio on multiples of its size in the file
    first = max(start - FAULT_AROUND_BYTES, 0) // LARGEST_FOLIO_BYTES * LARGEST_FOLIO_BYTES
    end = min(-(-(start + nbytes + FAULT_AROUND_BYTES) // LARGEST_FOLIO_BYTES) * LARGEST_FOLIO_BYTES, len(data))
    if end > first:
        data.madvise(mmap.MADV_DONTNEED, first, end - first)
