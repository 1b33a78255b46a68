"""The paper's Table 1 and the counts behind the cost plot, checked by hand for small n and d."""

import numpy as np
import pytest

from attention_explorer.engine import (
    LAYER_KEYS,
    TABLE_1,
    attention_matrix_bytes,
    maximum_path_length,
    operation_counts,
    sequential_operations,
)


def test_table_1_as_in_the_paper():
    rows = {row.key: (row.complexity, row.sequential, row.path_length) for row in TABLE_1}
    assert rows == {
        "self_attention": ("O(n²·d)", "O(1)", "O(1)"),
        "recurrent": ("O(n·d²)", "O(n)", "O(n)"),
        "convolutional": ("O(k·n·d²)", "O(1)", "O(log_k(n))"),
        "restricted_self_attention": ("O(r·n·d)", "O(1)", "O(n/r)"),
    }
    assert tuple(rows) == LAYER_KEYS


def test_operation_counts_by_hand():
    # n = 1, 2, 4; d = 3; k = 2; r = 2
    counts = operation_counts([1, 2, 4], d=3, k=2, r=2)
    np.testing.assert_array_equal(counts["self_attention"], [3, 12, 48])          # n²·d
    np.testing.assert_array_equal(counts["recurrent"], [9, 18, 36])               # n·d²
    np.testing.assert_array_equal(counts["convolutional"], [18, 36, 72])          # k·n·d²
    np.testing.assert_array_equal(counts["restricted_self_attention"], [3, 12, 24])  # min(r, n)·n·d
    assert counts["self_attention"].dtype == np.float64


def test_self_attention_is_cheaper_than_recurrent_while_n_is_below_d():
    counts = operation_counts(np.array([63, 64, 65]), d=64)
    below, equal, above = counts["self_attention"] - counts["recurrent"]
    assert below < 0 and equal == 0 and above > 0


def test_a_single_length_works_too():
    assert operation_counts(10, d=512)["self_attention"] == 10 * 10 * 512
    assert operation_counts(10, d=512)["recurrent"] == 10 * 512 * 512


def test_sequential_operations_and_path_lengths_by_hand():
    steps = sequential_operations([1, 5, 9])
    np.testing.assert_array_equal(steps["recurrent"], [1, 5, 9])
    np.testing.assert_array_equal(steps["self_attention"], [1, 1, 1])
    np.testing.assert_array_equal(steps["convolutional"], [1, 1, 1])
    paths = maximum_path_length([1, 2, 3, 4, 9, 10], k=3, r=4)
    np.testing.assert_array_equal(paths["self_attention"], [1, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(paths["recurrent"], [1, 2, 3, 4, 9, 10])
    np.testing.assert_array_equal(paths["convolutional"], [1, 1, 1, 2, 2, 3])  # ⌈log₃ n⌉, at least 1
    np.testing.assert_array_equal(paths["restricted_self_attention"], [1, 1, 1, 1, 3, 3])  # ⌈n/4⌉


def test_memory_of_the_weight_matrix():
    np.testing.assert_array_equal(attention_matrix_bytes([1, 10, 1024]), [8, 800, 8 * 1024 * 1024])
    assert attention_matrix_bytes(1024, "float32") == 4 * 2**20          # 4 MiB per head
    assert attention_matrix_bytes(10, "float64", heads=8) == 100 * 8 * 8


@pytest.mark.parametrize("call", [
    lambda: operation_counts(0, d=4),
    lambda: operation_counts([1.5], d=4),
    lambda: operation_counts(4, d=0),
    lambda: maximum_path_length(4, k=1),
    lambda: attention_matrix_bytes(4, "float16"),
    lambda: attention_matrix_bytes(4, heads=0),
])
def test_impossible_sizes_are_refused(call):
    with pytest.raises(ValueError):
        call()
