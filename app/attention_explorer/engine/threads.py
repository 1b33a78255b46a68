"""How many threads NumPy's BLAS may use for the engine's matrix products: one, for the whole process.

OpenBLAS splits a product over every core once it passes about 262,144 multiply-adds. For the
products of one sentence, waking and syncing those threads costs more than they save: a 512-word
trace of a toy model took 132–144 ms with OpenBLAS's default threads on two busy cores and 34–43 ms
on one; SmolLM2's forward at 12 tokens (width 576) 0.4–2.3 s with two threads and 0.14–0.28 s with
one (bench/bench_pretrained.py measures both).

The limit is set once and never given back. It used to be set around each product and restored
after, but the limit is process-wide, and OpenBLAS does not allow it to change while another thread
is inside a product: the window's toy traces (GUI thread) and a real model's forward or generation
(worker) changed it under each other, the likeliest cause of the segmentation faults the test
suite's random walks died of now and then. So the window sets it on the GUI thread before any worker starts, and
the engine sets it at the first large product or real model, which in a script comes before any
thread of ours. (Set from another thread, after the main thread has set it once, OpenBLAS 0.3.31
keeps the main thread's number: one more reason to set it there, first.)
It is set at run time with threadpoolctl, since NumPy is already imported by then.
"""

from __future__ import annotations

import threading

THREADED_FROM = 1 << 18   # multiply-adds: below this OpenBLAS stays on one thread by itself

_lock = threading.Lock()
_limited = False


def use_one_blas_thread() -> None:
    """From now on NumPy's BLAS uses one thread in this process. The first call costs about 7 ms
    (threadpoolctl looks through the loaded libraries); later ones nothing."""
    global _limited
    if _limited:
        return
    with _lock:
        if not _limited:
            from threadpoolctl import ThreadpoolController

            ThreadpoolController().limit(limits=1, user_api="blas")  # kept: nothing restores it
            _limited = True


def largest_product(n_tokens: int, d_model: int, d_proj: int) -> int:
    """An upper bound on the multiply-adds of the largest product of a toy model's trace: the
    projections (n × d_model by d_model × d_proj), QKᵀ and weights × V (n × n by n × d_proj at
    most), W_O."""
    return n_tokens * max(n_tokens, d_model) * d_proj


def one_blas_thread_for(multiply_adds: int) -> None:
    """One BLAS thread before products that OpenBLAS would share out; for smaller ones nothing is
    done, not even importing threadpoolctl (the command line's sentences are that small)."""
    if multiply_adds >= THREADED_FROM:
        use_one_blas_thread()
