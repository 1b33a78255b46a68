"""Giving memory back to the system once a real model is closed.

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
import sys


def release_free_memory() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: not glibc
        ctypes.CDLL(None).malloc_trim(0)
