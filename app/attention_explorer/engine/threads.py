"""How many threads NumPy's BLAS may use for the engine's matrix products.

OpenBLAS splits a product over every core once it passes about 262,144 multiply-adds. For the
products of one sentence (up to 512 words by a few hundred features) waking and syncing those
threads costs more than they save: a 512-word trace took 132–144 ms with OpenBLAS's default
threads on two busy cores and 34–43 ms on one. So products in between run on one thread; tiny
ones never start threads anyway (and then threadpoolctl is not even imported), and large ones, as
a real model's layers can be, keep BLAS's own choice.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

THREADED_FROM = 1 << 18   # multiply-adds: below this OpenBLAS stays on one thread by itself
LARGE_PRODUCT = 1 << 26   # multiply-adds: from here on more threads can pay


def largest_product(n_tokens: int, d_model: int, d_proj: int) -> int:
    """An upper bound on the multiply-adds of the largest product of one trace: the projections
    (n × d_model by d_model × d_proj), QKᵀ and weights × V (n × n by n × d_proj at most), W_O."""
    return n_tokens * max(n_tokens, d_model) * d_proj


@contextlib.contextmanager
def blas_threads_for(multiply_adds: int) -> Iterator[None]:
    """Run the block with one BLAS thread if its largest product is of the size where threads lose."""
    if not THREADED_FROM <= multiply_adds < LARGE_PRODUCT:
        yield
        return
    with _controller().limit(limits=1, user_api="blas"):
        yield


@functools.cache
def _controller():
    """Found once: threadpoolctl looks through the loaded libraries for BLAS (about a millisecond);
    after that a limit costs microseconds."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()
