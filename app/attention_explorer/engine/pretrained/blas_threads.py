"""One BLAS thread for real-model forwards.

At these sizes (a few hundred tokens, width 384–576) the matrix products are too small to share
well: on two busy cores, SmolLM2's forward at 12 tokens took 0.4–2.3 s with OpenBLAS's two
threads and 0.14–0.28 s with one (bench/bench_pretrained.py measures both). NumPy is already
imported, so the limit is set at run time with threadpoolctl; without it, nothing changes.
"""

from __future__ import annotations

import contextlib
from functools import lru_cache


@lru_cache(maxsize=1)
def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def single_blas_thread():
    """A context in which NumPy's BLAS uses one thread (a no-op when threadpoolctl is missing)."""
    controller = _controller()
    return contextlib.nullcontext() if controller is None else controller.limit(limits=1, user_api="blas")
