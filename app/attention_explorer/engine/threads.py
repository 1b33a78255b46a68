"""How many threads NumPy's BLAS may use for the engine's matrix products: one.

OpenBLAS splits a product over every core once it passes about 262,144 multiply-adds. For the
products of one sentence, waking and syncing those threads costs more than they save: a 512-word
trace of a toy model took 132–144 ms with OpenBLAS's default threads on two busy cores and 34–43 ms
on one; SmolLM2's forward at 12 tokens (width 576) 0.4–2.3 s with two threads and 0.14–0.28 s with
one (bench/bench_pretrained.py measures both). The limit is set at run time with threadpoolctl,
since NumPy is already imported by then.
"""

from __future__ import annotations

import contextlib
import functools

THREADED_FROM = 1 << 18   # multiply-adds: below this OpenBLAS stays on one thread by itself


def single_blas_thread() -> contextlib.AbstractContextManager:
    """A context in which NumPy's BLAS uses one thread, restored as it was after."""
    return _controller().limit(limits=1, user_api="blas")


def largest_product(n_tokens: int, d_model: int, d_proj: int) -> int:
    """An upper bound on the multiply-adds of the largest product of a toy model's trace: the
    projections (n × d_model by d_model × d_proj), QKᵀ and weights × V (n × n by n × d_proj at
    most), W_O."""
    return n_tokens * max(n_tokens, d_model) * d_proj


def blas_threads_for(multiply_adds: int) -> contextlib.AbstractContextManager:
    """One BLAS thread for products that OpenBLAS would share out; for smaller ones nothing is done,
    not even importing threadpoolctl (the window's first sentence is that small)."""
    return single_blas_thread() if multiply_adds >= THREADED_FROM else contextlib.nullcontext()


@functools.cache
def _controller():
    """Found once: threadpoolctl looks through the loaded libraries for BLAS (about a millisecond);
    after that a limit costs microseconds."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()
