"""BLAS runs the engine's products on one thread, set once for the process and never changed back:
the limit is process-wide, and OpenBLAS must not have it changed while another thread multiplies."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from attention_explorer import engine
from attention_explorer.engine import threads
from attention_explorer.engine.threads import THREADED_FROM, largest_product, one_blas_thread_for, use_one_blas_thread


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def two_blas_threads_not_yet_limited(monkeypatch):
    """As on a two-core machine before the engine's first large product, whatever this one has; the
    test process's own limit is put back after."""
    monkeypatch.setattr(threads, "_limited", False)
    with threadpool_limits(2, user_api="blas"):
        assert blas_threads() and all(n == 2 for n in blas_threads())
        yield


def test_a_long_sentence_of_a_toy_model_leaves_blas_on_one_thread(two_blas_threads_not_yet_limited):
    model = engine.load_builtin("cat-sat-on-mat")
    assert largest_product(512, model.d_model, model.d_proj) >= THREADED_FROM
    trace = engine.run(model, " ".join(["the cat sat on the mat"] * 86))  # 516 words
    assert len(trace.tokens) == 516
    assert all(n == 1 for n in blas_threads())  # and it stays so: nothing gives it back
    np.ones((512, 8)) @ np.ones((8, 512))
    assert all(n == 1 for n in blas_threads())


def test_a_short_sentence_leaves_the_threads_as_they_are(two_blas_threads_not_yet_limited):
    engine.run(engine.load_builtin("cat-sat-on-mat"), "the cat sat on the mat")
    assert all(n == 2 for n in blas_threads())  # not even threadpoolctl was needed


def test_a_tiny_product_keeps_the_threads_as_they_are(two_blas_threads_not_yet_limited):
    one_blas_thread_for(THREADED_FROM - 1)
    assert all(n == 2 for n in blas_threads())
    assert not threads._limited


def test_the_limit_is_set_once_and_later_calls_change_nothing(two_blas_threads_not_yet_limited, monkeypatch):
    use_one_blas_thread()
    assert all(n == 1 for n in blas_threads())
    calls = []
    monkeypatch.setattr("threadpoolctl.ThreadpoolController.limit", lambda *a, **k: calls.append(k))
    for _ in range(3):
        use_one_blas_thread()
        one_blas_thread_for(THREADED_FROM)
    assert calls == []  # never touched again, whichever thread multiplies meanwhile


def test_threads_racing_for_the_first_limit_set_it_once(two_blas_threads_not_yet_limited, monkeypatch):
    from threadpoolctl import ThreadpoolController

    calls = []
    real_limit = ThreadpoolController.limit

    def counted(self, **kwargs):
        calls.append(kwargs)
        return real_limit(self, **kwargs)

    monkeypatch.setattr(ThreadpoolController, "limit", counted)
    racers = [threading.Thread(target=use_one_blas_thread) for _ in range(8)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert calls == [{"limits": 1, "user_api": "blas"}]


def test_the_largest_product_is_the_projection_when_features_outnumber_words():
    assert largest_product(6, 300, 64) == 6 * 300 * 64
    assert largest_product(300, 6, 4) == 300 * 300 * 4
