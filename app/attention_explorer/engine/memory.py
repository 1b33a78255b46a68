"""Giving memory back to the system: once a real model is closed, and as soon as a long-lived array is freed.

A real model is hundreds of megabytes of arrays. When it is closed they are freed, but glibc's
allocator keeps most of that memory for the process (its threshold for mapping large blocks on their
own rises after a large one is freed, so the next model's arrays came from the heap, which is never
shrunk on its own): after SmolLM2 and back to a toy model the app still held about 430 MB more than
it started with. malloc_trim hands the free part back. Elsewhere (macOS, Windows, musl) it does not
exist and nothing is done.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import sys

import numpy as np

OWN_PAGES_BYTES = 1 << 20  # arrays this large or larger get pages of their own (own_pages)
# A forward over fewer tokens keeps its arrays on the heap: pages of their own are fresh pages, faulted
# in at each forward, and cost a short one more than the holes they prevent (MiniLM's 4.7 MB of
# thumbnails: 3 ms of a 28 ms forward at 128 tokens); the holes only matter for texts whose forward
# takes seconds (SmolLM2 at 2,048 tokens: 250 MiB of them).
OWN_PAGES_FROM_TOKENS = 1024


M_ARENA_MAX = -8  # glibc's mallopt parameter: how many heaps (arenas) threads may allocate from


def one_heap_for_every_thread() -> None:
    """Every thread allocates from the main thread's heap from now on. A worker thread otherwise gets a
    heap of its own at its first allocation, and memory freed in one heap is never reused by the other:
    with the forwards on the worker, MiniLM's window at 512 tokens peaked at 334 MiB and kept 317 after
    the real-model bench's actions, against 324 and 287 with one heap. Call it before any worker starts.
    Elsewhere than glibc it does nothing."""
    _glibc("mallopt", M_ARENA_MAX, 1)


def release_free_memory() -> None:
    _glibc("malloc_trim", 0)


def _glibc(function: str, *args: int) -> None:
    """Call glibc's allocator `function`; elsewhere (macOS, Windows, musl) nothing is done."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: not glibc
        getattr(ctypes.CDLL(None), function)(*args)


def own_pages(shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    """A zeroed array in a mapping of its own, handed back to the system the moment the last view of it
    goes; under OWN_PAGES_BYTES, an ordinary one.

    For what a trace keeps (each layer's input, the thumbnails): glibc serves arrays of a few MiB from
    its heap once a larger one was freed, and these, made between a forward's temporaries of the same
    sizes, left holes the heap could not give back. A 2,048-token SmolLM2 window ended each forward
    with some 250 MiB more than it used, and a forward that ran while the old trace was still shown
    grew it further (malloc_trim alone, run after, cannot prevent the growth).

    The mapping is private, and where the system can, its pages are faulted in as it is mapped, all at
    once (every caller writes into every page of it). Shared and faulted one page at a time, as mmap
    maps by default, a text so far's 17 MiB of thumbnails took 6–7 ms to map and fill; 3 ms so (a
    scrubber step at 1,000 SmolLM2 tokens makes one)."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if nbytes < OWN_PAGES_BYTES:
        return np.zeros(shape, dtype=dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes, **_PREFAULTED), dtype=dtype).reshape(shape)


# private, anonymous and (Linux's MAP_POPULATE) faulted in at once; elsewhere mmap's own flags
_PREFAULTED = ({"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE}
               if hasattr(mmap, "MAP_POPULATE") else {})
