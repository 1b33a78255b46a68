"""The heatmap's cells coloured with their masked cells (NaN) transparent (views/cell_image.py): the
same pixels pyqtgraph's own ImageItem makes, for any values, levels and colour table, and a decoder's
heatmap drawn through it as before."""

import numpy as np
import pyqtgraph as pg
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PySide6 import QtGui

from attention_explorer.views.cell_image import CellImage

VALUES = st.one_of(st.just(np.nan), st.floats(-3, 3, width=32), st.floats(width=32, allow_nan=False))
PREMULTIPLIED = QtGui.QImage.Format.Format_ARGB32_Premultiplied


def pixels(image: QtGui.QImage) -> np.ndarray:
    """Premultiplied ARGB words, row by row: what is drawn."""
    converted = image.convertToFormat(PREMULTIPLIED)
    words = np.frombuffer(converted.constBits(), dtype=np.uint32)
    return words.reshape(converted.height(), converted.bytesPerLine() // 4)[:, :converted.width()].copy()


def rendered(item: pg.ImageItem, values: np.ndarray, levels, lut: np.ndarray) -> np.ndarray:
    item.setLookupTable(lut, update=False)
    item.setImage(values, autoLevels=False, levels=levels)
    with np.errstate(over="ignore"):  # huge values overflow on their way to the table's ends, in both
        item.render()
    return pixels(item.qimage)


@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(1, 12), st.integers(1, 12), st.sampled_from(["viridis", "magma", "CET-D1"]),
       st.booleans(), st.integers(2, 256))
def test_cells_with_nan_are_coloured_as_pyqtgraph_colours_them(qapp, data, rows, cols, colormap, translucent,
                                                                 entries):
    values = data.draw(arrays(np.float32, (rows, cols), elements=VALUES))
    values[0, 0] = np.nan  # at least one masked cell: the path that is ours
    low = data.draw(st.floats(-2, 1))
    levels = (low, low + data.draw(st.sampled_from([0.0, 1e-3, 1.0, 7.5])))
    lut = pg.colormap.get(colormap).getLookupTable(0.0, 1.0, entries, alpha=translucent)
    if translucent:
        lut[::3, 3] = 128  # a table with translucent colours: kept as they are, not premultiplied twice
    item = CellImage(lambda *_: None)
    ours = rendered(item, values, levels, lut)
    theirs = rendered(pg.ImageItem(axisOrder="row-major"), values, levels, lut)
    assert np.array_equal(ours, theirs)
    # made by the cell image itself: pyqtgraph makes RGBA bytes, converted again for every drawing
    assert item.qimage.format() == (QtGui.QImage.Format.Format_ARGB32 if translucent else PREMULTIPLIED)
    assert not ours[np.isnan(values)].any()  # masked cells are transparent


def test_an_image_without_nan_is_left_to_pyqtgraph(qapp):
    """A float image with nothing masked keeps pyqtgraph's own indexed image (one byte a cell)."""
    item = CellImage(lambda *_: None)
    item.setLookupTable(pg.colormap.get("viridis").getLookupTable(0.0, 1.0, 256), update=False)
    item.setImage(np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4), autoLevels=False, levels=(0, 1))
    item.render()
    assert item.qimage.format() == QtGui.QImage.Format.Format_Indexed8
