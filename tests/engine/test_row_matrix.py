"""A matrix made a block of rows at a time reads as the whole array would, and makes only the blocks read."""

import numpy as np

from attention_explorer.engine.row_matrix import RowMatrix


def _counted(values: np.ndarray, blocks):
    made = []

    def make(start, stop):
        made.append((start, stop))
        return values[start:stop].copy()

    return RowMatrix(values.shape, values.dtype, make, blocks), made


def test_every_way_of_reading_gives_the_array_s_own_numbers():
    values = np.arange(60, dtype=np.float32).reshape(10, 6)
    matrix, _made = _counted(values, [(0, 4), (4, 8), (8, 10)])
    np.testing.assert_array_equal(np.asarray(matrix), values)
    assert matrix[3, 2] == values[3, 2] and matrix.shape == (10, 6) and matrix.size == 60
    np.testing.assert_array_equal(matrix[5], values[5])
    np.testing.assert_array_equal(matrix[-1], values[-1])
    np.testing.assert_array_equal(matrix[2:9, 1:3], values[2:9, 1:3])   # across blocks
    np.testing.assert_array_equal(np.stack(list(matrix)), values)
    np.testing.assert_array_equal(matrix[np.ix_([1, 3], [0, 5])], values[np.ix_([1, 3], [0, 5])])


def test_a_cell_makes_only_its_block_and_keeps_it():
    matrix, made = _counted(np.ones((1000, 4), dtype=np.float32), [(i, i + 100) for i in range(0, 1000, 100)])
    matrix[250, 1]
    matrix[260, 3]
    assert made == [(200, 300)]


def test_a_window_reads_as_that_part_of_the_array_and_makes_only_its_blocks():
    values = np.arange(100, dtype=np.float32).reshape(10, 10)
    matrix, made = _counted(values, [(0, 4), (4, 8), (8, 10)])
    part = matrix.window(slice(1, 10), slice(1, 10))
    assert part.shape == (9, 9)
    assert part[0, 0] == values[1, 1] and made == [(0, 4)]
    np.testing.assert_array_equal(np.asarray(part), values[1:, 1:])


def test_its_blocks_in_turn_make_the_whole_once_and_reuse_the_blocks_kept():
    values = np.arange(40, dtype=np.float32).reshape(10, 4)
    matrix, made = _counted(values, [(0, 4), (4, 8), (8, 10)])
    matrix[5, 0]  # keeps the middle block
    np.testing.assert_array_equal(np.concatenate(list(matrix.blocks())), values)
    assert made == [(4, 8), (0, 4), (8, 10)]
