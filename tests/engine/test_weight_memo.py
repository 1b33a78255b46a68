"""Numbers made once per weight matrix: made again for another matrix, for other arguments, and for a new
matrix that took a dead one's place in memory; never kept past the matrix."""

import gc
import weakref

import numpy as np

from attention_explorer.engine.census.norm_attention import w_o_grams
from attention_explorer.engine.pretrained.model import longest_column
from attention_explorer.engine.weight_memo import per_weight


def test_a_weight_s_numbers_are_made_once_and_again_for_anything_else():
    made = []

    @per_weight
    def total(weight, scale=1):
        made.append((id(weight), scale))
        return float(weight.sum()) * scale

    a, b = np.ones((2, 3)), np.full((2, 3), 2.0)
    assert total(a) == 6.0 and total(a) == 6.0 and len(made) == 1
    assert total(b) == 12.0 and total(a, 10) == 60.0 and len(made) == 3
    seen = weakref.ref(a)
    del a
    gc.collect()
    assert seen() is None
    for _ in range(50):  # new matrices, some of them where the dead one lay: each made afresh
        c = np.zeros((2, 3))
        assert total(c) == 0.0
        del c


def test_the_remembered_weight_numbers_equal_those_made_directly():
    rng = np.random.default_rng(3)
    w_o = rng.standard_normal((8, 5)).astype(np.float32)
    expected = max(float(np.sqrt(np.sum(np.asarray(w_o[:, j], dtype=np.float64) ** 2))) for j in range(5))
    assert np.isclose(longest_column(w_o), expected, rtol=1e-12) and longest_column(w_o) == longest_column(w_o)
    rows = w_o.astype(np.float64).reshape(2, 4, 5)
    np.testing.assert_allclose(w_o_grams(w_o, 2), [r @ r.T for r in rows], rtol=1e-12)
    assert w_o_grams(w_o, 2) is w_o_grams(w_o, 2) and w_o_grams(w_o, 4).shape == (4, 2, 2)
