"""The arc diagram's batches: every line in exactly one batch, batches weakest bucket first and head by
head within a bucket, each head's lines in their order, one pen per colour and bucket; and the lines'
widths narrowed to rows closer than the widest line."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6 import QtGui

from attention_explorer.views import theme
from attention_explorer.views.arc_lines import BUCKETS, ArcLinesItem, HeadArcs, batches_of, bucket_pen, narrowing


def _grouped_one_by_one(arcs: list[HeadArcs]) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """(bucket, head's place, pairs) per non-empty group, picked out bucket by bucket and head by head."""
    groups = []
    for bucket in range(BUCKETS):
        for place, head in enumerate(arcs):
            buckets = np.minimum((head.weights * BUCKETS).astype(int), BUCKETS - 1)
            chosen = buckets == bucket
            if chosen.any():
                groups.append((bucket, place, list(zip(head.looking[chosen].tolist(),
                                                       head.looked_at[chosen].tolist(), strict=True))))
    return groups


@st.composite
def heads_of_lines(draw):
    heads = []
    for index in range(draw(st.integers(0, 5))):
        count = draw(st.integers(0, 40))
        weights = draw(st.lists(st.floats(0.005, 1.0, allow_nan=False), min_size=count, max_size=count))
        looking = draw(st.lists(st.integers(0, 30), min_size=count, max_size=count))
        looked_at = draw(st.lists(st.integers(0, 30), min_size=count, max_size=count))
        heads.append(HeadArcs(index, theme.head_color(index), np.array(looking, dtype=np.intp),
                              np.array(looked_at, dtype=np.intp), np.array(weights, dtype=np.float32)))
    return heads


@settings(max_examples=150, deadline=None)
@given(heads_of_lines())
def test_batches_group_every_line_by_bucket_then_head_in_order(qapp, arcs):
    batches = batches_of(arcs)
    expected = _grouped_one_by_one(arcs)
    assert len(batches) == len(expected)
    for (pen, pairs), (bucket, place, expected_pairs) in zip(batches, expected, strict=True):
        assert [tuple(pair) for pair in pairs.tolist()] == expected_pairs
        assert pen is bucket_pen(arcs[place].color, bucket)
        assert pen.color().rgb() == arcs[place].color.rgb()
        strength = (bucket + 0.5) / BUCKETS
        assert abs(pen.widthF() - (0.6 + 7.0 * strength)) < 1e-9
        assert abs(pen.color().alphaF() - (0.18 + 0.8 * strength)) < 1 / 255
    assert sum(len(pairs) for _, pairs in batches) == sum(len(head.weights) for head in arcs)


def test_one_pen_per_colour_and_bucket(qapp):
    red, blue = QtGui.QColor("red"), QtGui.QColor("blue")
    assert bucket_pen(red, 3) is bucket_pen(QtGui.QColor("red"), 3)
    assert bucket_pen(red, 3) is not bucket_pen(red, 4)
    assert bucket_pen(red, 3) is not bucket_pen(blue, 3)
    assert bucket_pen(red, 9).widthF() > bucket_pen(red, 0).widthF()
    assert bucket_pen(red, 9).isCosmetic()


def _horizontal_lines_image(qtbot, row_px: float, rows: int = 40) -> np.ndarray:
    """The strongest bucket's lines, every word to itself, drawn with rows `row_px` apart; the middle
    column of the picture's pixels, as grey levels (white is the background)."""
    item = ArcLinesItem()
    item.set_batches([(bucket_pen(QtGui.QColor("black"), BUCKETS - 1), np.column_stack([np.arange(rows)] * 2))], rows)
    image = QtGui.QImage(200, int(rows * row_px) + 40, QtGui.QImage.Format.Format_RGB32)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    painter.setTransform(QtGui.QTransform.fromScale(200, row_px) * QtGui.QTransform.fromTranslate(0, 20))
    item.paint(painter, None, None)
    painter.end()
    grey = QtGui.QImage(image).convertToFormat(QtGui.QImage.Format.Format_Grayscale8)
    pixels = np.frombuffer(grey.constBits(), np.uint8, grey.sizeInBytes()).reshape(grey.height(), -1)
    return pixels[20:20 + int((rows - 1) * row_px), 100]


@pytest.mark.parametrize("row_px", [2.5, 4.0, 6.0])
def test_rows_closer_than_the_widest_line_narrow_the_lines_so_that_the_rows_between_show(qtbot, row_px):
    """75 words in a short pane were 3.7 px a row under 7.6 px lines: every head's strongest lines
    painted the pane solid in the colour of the head drawn last."""
    column = _horizontal_lines_image(qtbot, row_px)
    assert (column > 128).any()  # at least half the background between the lines
    assert (column < 60).any()   # and the lines themselves, dark


def test_rows_wider_apart_than_the_widest_line_keep_its_width(qtbot):
    column = _horizontal_lines_image(qtbot, 20.0)
    dark = np.flatnonzero(column[10:30] < 128)  # the second word's line, 20 px down
    assert 7 <= len(dark) <= 9  # the strongest line's 7.25 px, as before


def test_narrowing_keeps_every_width_where_rows_have_room_and_the_thinnest_always():
    assert narrowing(20.0) == 1.0
    assert 0 < narrowing(4.0) < narrowing(6.0) < 1.0
    assert narrowing(0.5) == 0.0  # rows packed closer than a pixel: every line the thinnest
