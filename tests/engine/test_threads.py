"""BLAS runs the products of a sentence on one thread while it computes, and is left as it was after."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from attention_explorer.engine.threads import THREADED_FROM, blas_threads_for, largest_product, single_blas_thread


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def two_blas_threads():
    """As on a two-core machine, whatever this one has."""
    with threadpool_limits(2, user_api="blas"):
        yield


def test_a_long_sentence_of_a_toy_model_is_computed_on_one_thread(two_blas_threads):
    size = largest_product(512, 16, 8)
    assert size == 512 * 512 * 8
    before = blas_threads()
    assert before and all(n == 2 for n in before)
    with blas_threads_for(size):
        assert all(n == 1 for n in blas_threads())
        np.ones((512, 8)) @ np.ones((8, 512))  # a product inside still works
    assert blas_threads() == before


def test_a_tiny_product_keeps_the_threads_as_they_are(two_blas_threads):
    with blas_threads_for(THREADED_FROM - 1):
        assert all(n == 2 for n in blas_threads())


def test_a_real_models_forward_runs_on_one_thread_whatever_its_size(two_blas_threads):
    with single_blas_thread():
        assert all(n == 1 for n in blas_threads())
    assert all(n == 2 for n in blas_threads())


def test_the_largest_product_is_the_projection_when_features_outnumber_words():
    assert largest_product(6, 300, 64) == 6 * 300 * 64
    assert largest_product(300, 6, 4) == 300 * 300 * 4
