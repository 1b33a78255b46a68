"""The sentence box is one line high. A text set from outside with several lines (a generation's, which
often ends in line breaks) shows the last line that holds words: its very end, an empty line, made the
box look as if it held nothing."""

import numpy as np
import pytest

from attention_explorer.views.sentence_box import QtSentenceBox


def _pixels(box: QtSentenceBox) -> np.ndarray:
    image = box.viewport().grab().toImage()
    return np.array([[image.pixel(x, y) for x in range(0, image.width(), 2)] for y in range(image.height())])


@pytest.mark.parametrize("text", ["the cat sat\non the mat\n\n", "the cat sat\non the mat\n \n", "on the mat"])
def test_a_text_set_from_outside_shows_its_last_line_with_words(sentence_box, text):
    box = sentence_box
    empty = _pixels(box)
    box.controller.set_sentence(text)
    assert box.toPlainText() == text  # the text itself, line breaks and all
    assert box.firstVisibleBlock().text() == "on the mat"
    assert box.textCursor().block().text() == "on the mat" and box.textCursor().atBlockEnd()
    assert (_pixels(box) != empty).any()  # words on screen, not an empty box
