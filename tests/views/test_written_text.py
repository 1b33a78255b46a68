"""The written text under the scrubber follows the newest token while it is in sight, leaves a reader who
scrolled away to read alone, and brings the framed token into sight at a scrubber step."""

from dataclasses import dataclass, field

from PySide6 import QtWidgets

from attention_explorer.views.written_text import WrittenText
from screen_oracle import settle


@dataclass
class _Step:
    token_id: int


@dataclass
class _Generation:
    prompt: str
    steps: list = field(default_factory=list)


class _Tokenizer:
    @staticmethod
    def token_text(token_id: int) -> str:
        return f" word{token_id}"


def _box(qtbot) -> tuple[QtWidgets.QTextBrowser, WrittenText]:
    browser = QtWidgets.QTextBrowser()
    qtbot.addWidget(browser)
    browser.resize(220, 70)
    browser.show()
    return browser, WrittenText(browser)


def test_the_box_follows_the_newest_token_unless_the_reader_scrolled_away(qtbot):
    browser, written = _box(qtbot)
    tokenizer, generation = _Tokenizer(), _Generation("The cat sat on the mat")
    bar = browser.verticalScrollBar()
    for count in range(1, 61):  # written one by one, the newest framed, as while the views follow
        generation.steps.append(_Step(count))
        written.show(tokenizer, generation, None, count - 1)
        settle()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # at the foot, the newest token in sight
    bar.setValue(0)  # the reader goes back to the start to read
    for count in range(61, 66):
        generation.steps.append(_Step(count))
        written.show(tokenizer, generation, None, count - 1)
        settle()
    assert bar.value() == 0  # left where the reader is
    assert browser.toPlainText().endswith(" word65")
    written.show(tokenizer, generation, None, 30)  # a scrubber step: the framed token brought into sight
    settle()
    start, end = written.token_span(30)
    assert browser.toPlainText()[start:end] == " word31" and 0 < bar.value() < bar.maximum()


def test_a_token_brought_into_sight_is_shown_on_whole_lines(qtbot):
    """Brought into sight, the framed token's line is in the middle of the box, and the box starts on a
    whole line, its text as far from the top as at the start of the text: centred to the pixel, a box two
    and a half lines high showed a strip of the line above and the token's line cut."""
    browser, written = _box(qtbot)
    tokenizer, generation = _Tokenizer(), _Generation("The cat sat on the mat")
    generation.steps = [_Step(count) for count in range(1, 201)]  # none of those framed near the end
    written.show(tokenizer, generation, None, None)
    for height in (45, 58, 70, 95):
        browser.resize(220, height)
        settle()
        for framed in (90, 12, 150, 41, 30):
            browser.verticalScrollBar().setValue(0 if framed > 35 else browser.verticalScrollBar().maximum())
            written.show(tokenizer, generation, None, framed)
            settle()
            first, _last = written._corners(framed)
            line = first.height()
            top_of_text = written.document.documentMargin()
            lines_in_box = int(browser.viewport().height() - top_of_text) // line
            assert (first.top() - top_of_text) % line == 0, (height, framed)  # lines whole from the box's top
            assert (first.top() - top_of_text) // line == max(0, (lines_in_box - 1) // 2), (height, framed)
            assert written._in_sight(framed)


def test_a_scrubber_step_moves_the_frame_in_one_change_of_the_document(qtbot):
    """The framed token is bold: each change of format lays its paragraph out again, and a long
    generation is one paragraph, so the frame leaves one token and reaches the next in one change."""
    from PySide6 import QtGui

    browser, written = _box(qtbot)
    tokenizer, generation = _Tokenizer(), _Generation("The cat sat on the mat")
    generation.steps = [_Step(i) for i in range(200)]
    written.show(tokenizer, generation, None, 199)
    settle()
    changes = []
    written.document.contentsChange.connect(lambda *change: changes.append(change))
    for shown in (198, 120, 121):
        del changes[:]
        written.show(tokenizer, generation, None, shown)
        assert len(changes) == 1, f"token {shown}: {changes}"
        assert written.framed() == shown
        start, end = written.token_span(shown)
        cursor = QtGui.QTextCursor(written.document)
        cursor.setPosition(end)
        assert cursor.charFormat().fontWeight() == QtGui.QFont.Weight.Bold and cursor.charFormat().fontUnderline()
        start, end = written.token_span(shown + 1 if shown < 199 else shown - 1)
        cursor.setPosition(end)
        assert cursor.charFormat().fontWeight() == QtGui.QFont.Weight.Normal
