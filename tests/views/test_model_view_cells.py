"""The model view's cells: which thumbnails changed, found without comparing every cell whole; and
the pictures of a generation's texts so far, made again below the rows they share with the whole text."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer.views import model_view
from attention_explorer.views.model_view import CellPictures, changed_cells, color_table, weights_images


@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 6), st.integers(1, 6), st.data())
def test_the_cells_found_changed_are_those_whose_thumbnails_differ_anywhere(layers, heads, rows, cols, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    old = rng.random((layers, heads, rows, cols), dtype=np.float32)
    new = old.copy()
    for layer, head in data.draw(st.lists(st.tuples(st.integers(0, layers - 1), st.integers(0, heads - 1)))):
        if rows:  # one number changed, in the first row or any other
            new[layer, head, data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1))] += 1
    whole = (old != new).reshape(layers, heads, -1).any(axis=2)
    np.testing.assert_array_equal(changed_cells(old, new), whole)


def test_a_change_below_a_cell_s_first_row_is_found():
    old = np.zeros((2, 3, 4, 4), dtype=np.float32)
    new = old.copy()
    new[1, 2, 3, 3] = 0.5   # past the first row: found by the whole comparison
    new[0, 1, 0, 2] = 0.25  # in the first row: found at once
    expected = np.zeros((2, 3), dtype=bool)
    expected[1, 2] = expected[0, 1] = True
    np.testing.assert_array_equal(changed_cells(old, new), expected)


def _pixels(picture) -> np.ndarray:
    """A one-byte picture's pixels, without the padding at the end of each line."""
    lines = np.frombuffer(picture.constBits(), dtype=np.uint8).reshape(picture.height(), picture.bytesPerLine())
    return lines[:, :picture.width()].copy()  # the picture may go; its pixels with it


def _fresh_pixels(thumbnail: np.ndarray) -> np.ndarray:
    return _pixels(weights_images(thumbnail[None], color_table("viridis"))[0])


def _text_so_far(rng: np.random.Generator, whole: np.ndarray, size: int, shared_rows: int, faint: bool) -> np.ndarray:
    """Thumbnails of `size` a side whose first `shared_rows` rows are the whole text's, the rest new
    (`faint`: weaker than the shared rows, so each cell's largest weight stays among them)."""
    rest = rng.random((*whole.shape[:2], size - shared_rows, size), dtype=np.float32) * (0.1 if faint else 2.0)
    return np.concatenate([whole[:, :, :shared_rows, :size], rest], axis=2)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_pictures_of_texts_sharing_the_whole_text_s_rows_are_those_made_fresh(data, qapp):
    """Texts so far that share their first rows with the whole text's thumbnails, shown one after
    another (with or without saying so, in turns with other sizes): every cell's picture is the one a
    fresh CellPictures makes, whichever cells were drawn between the steps."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    whole = (rng.random((2, 3, 6, 6), dtype=np.float32) + 0.5)
    whole.flags.writeable = False
    pictures = CellPictures()
    for _step in range(data.draw(st.integers(1, 6))):
        size = data.draw(st.sampled_from([5, 5, 5, 6, 4]))
        rows = data.draw(st.integers(0, size))
        thumbnails = _text_so_far(rng, whole, size, rows, data.draw(st.booleans()))
        said = data.draw(st.booleans())
        pictures.show(thumbnails, "viridis", shared=(whole, rows) if said else None)
        drawn = data.draw(st.lists(st.sampled_from([(0, 0), (0, 1), (1, 2), (1, 0)]), unique=True))
        for cell in drawn:  # drawn now; the others are made when next drawn
            np.testing.assert_array_equal(_pixels(pictures[cell]), _fresh_pixels(thumbnails[cell]))
    for cell in pictures:
        np.testing.assert_array_equal(_pixels(pictures[cell]), _fresh_pixels(thumbnails[cell]))


def test_a_cell_changed_below_the_shared_rows_has_only_those_rows_made_again(qapp, monkeypatch):
    """A step between two texts so far of one pooled size: the cells whose largest weight stayed are
    made again below the rows they share with the whole text only; one whose largest weight moved, whole."""
    rng = np.random.default_rng(4)
    whole = rng.random((2, 3, 6, 6), dtype=np.float32) + 0.5
    whole.flags.writeable = False
    pictures = CellPictures()
    before = _text_so_far(rng, whole, 5, 4, faint=True)
    pictures.show(before, "viridis", shared=(whole, 4))
    cells = list(pictures)
    for cell in cells:
        pictures[cell]
    after = _text_so_far(rng, whole, 5, 4, faint=True)
    after[1, 2, 4, 0] = 9.0  # a new largest weight: that cell's colours all change
    made_whole = []

    def counted(thumbnails, *args):
        made_whole.append(len(thumbnails))
        return weights_images(thumbnails, *args)

    monkeypatch.setattr(model_view, "weights_images", counted)
    pictures.show(after, "viridis", shared=(whole, 4))
    for cell in cells:
        np.testing.assert_array_equal(_pixels(pictures[cell]), _fresh_pixels(after[cell]))
    assert sum(made_whole) == 1


def _drawn(picture, rect, part) -> np.ndarray:
    from PySide6 import QtGui
    canvas = QtGui.QImage(int(rect.right()) + 4, int(rect.bottom()) + 4, QtGui.QImage.Format.Format_RGB32)
    canvas.fill(0)
    painter = QtGui.QPainter(canvas)
    painter.drawImage(rect, picture, part)
    painter.end()
    return np.frombuffer(canvas.constBits(), dtype=np.uint32).copy()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 130), st.integers(model_view.MIN_CELL_PX, model_view.MAX_CELL_PX), st.integers(0, 3), st.data())
def test_a_picture_drawn_in_a_cell_of_any_size_shows_the_same_pixels_whichever_form_is_drawn(qapp, size, cell,
                                                                                           short, data):
    """Large cells draw a 32-bit copy of the picture (model_view.drawable): pixel for pixel what the
    one-byte picture draws, the part past the tokens (a pooled picture's last block) left out alike."""
    from PySide6 import QtCore
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    picture = weights_images(rng.random((1, size, size), dtype=np.float32), color_table("viridis"))[0]
    part = QtCore.QRectF(0, 0, max(1, size - short), max(1, size - short))
    rect = QtCore.QRectF(3, 2, cell, cell)
    shown = model_view.drawable(picture, rect, part)
    assert (shown.format() == picture.format()) == (cell <= model_view.LARGE_CELL_PX or 4 * cell * cell <= size * size)
    np.testing.assert_array_equal(_drawn(shown, rect, part), _drawn(picture, rect, part))
