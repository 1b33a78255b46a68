"""The checks a real layer passes before it is drawn: every number finite, and no score or output that
could overflow float32 (Cauchy–Schwarz on the rows' lengths). Whatever the numbers, a check that lets a
layer through is never wrong about it."""

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_explorer.engine.pretrained.model import _products_bounded
from attention_explorer.engine.pretrained.weights import all_finite

FLOATS = st.floats(width=32, allow_nan=True, allow_infinity=True)
UNIT = st.floats(min_value=-1.0, max_value=1.0, width=32)


@given(arrays(np.float32, st.tuples(st.integers(0, 6), st.integers(1, 5)), elements=FLOATS))
def test_finite_is_every_number_finite(values):
    assert all_finite(values) == bool(np.isfinite(values).all())


def _trace(q, k, v, w_o):
    heads = [SimpleNamespace(q=q[h], k=k[h // 2], v=v[h // 2], d_k=q.shape[-1]) for h in range(len(q))]
    return SimpleNamespace(heads=heads, w_o=w_o, b_o=None)


@settings(max_examples=300)
@given(st.data())
def test_a_layer_found_bounded_has_every_score_and_output_finite(data):
    n, d = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    scale = data.draw(st.sampled_from([1.0, 1e9, 1e18, 1e19, 1.3e19, 1e30]))
    q, k, v = (data.draw(arrays(np.float32, shape, elements=UNIT)) * np.float32(scale)
               for shape in ((4, n, d), (2, n, d), (2, n, d)))
    w_o = data.draw(arrays(np.float32, (4 * d, 4 * d), elements=UNIT)) * np.float32(data.draw(st.sampled_from(
        [1.0, 1e19, 1e30])))
    if not _products_bounded(_trace(q, k, v, w_o), group=2):
        return
    with np.errstate(all="ignore"):
        scores = np.matmul(q, np.repeat(k, 2, axis=0).transpose(0, 2, 1))
        concat = np.concatenate(np.repeat(v, 2, axis=0), axis=-1)  # an average of value rows at most this large
        assert np.isfinite(scores).all() and np.isfinite(concat @ w_o).all()


def test_rows_whose_squares_overflow_float32_are_not_found_bounded():
    q = np.full((2, 3, 4), 2e19, dtype=np.float32)  # each square 4e38: past float32's largest
    k = np.full((1, 3, 4), 1e-30, dtype=np.float32)
    trace = _trace(q, k, np.ones((1, 3, 4), np.float32), np.ones((8, 8), np.float32))
    assert not _products_bounded(trace, group=2)
