"""Unicode in the sentence box: emoji, ß, combining accents and right-to-left text, typed into the
real box. Qt counts UTF-16 units where Python counts characters; the underlines, the completion and
the tooltips must still land on the right word."""

import pytest
from PySide6 import QtCore, QtGui

from attention_explorer import engine
from attention_explorer.controller import Controller


@pytest.fixture
def box(sentence_box):
    return sentence_box


def _type(qtbot, box, text: str) -> None:
    """Type `text` at the cursor: plain keys for ASCII, as an input method would for the rest."""
    for character in text:
        if character.isascii():
            qtbot.keyClicks(box, character)
        else:
            box.insertPlainText(character)


@pytest.mark.parametrize(("typed", "flagged"), [
    ("🐱 the cat zebra", ["zebra"]),
    ("straße zebra", ["straße", "zebra"]),
    ("the 🐱🐶 cat cow mat", ["cow"]),
    ("שלום the cat עולם", ["שלום", "עולם"]),
    ("the ca\u0301t sat", ["ca\u0301t"]),
    ("the 👩‍👩‍👧 cat émile", ["émile"]),
])
def test_unknown_words_are_underlined_exactly(qtbot, box, typed, flagged):
    _type(qtbot, box, typed)
    assert box.toPlainText() == typed
    assert box.flagged_words() == flagged


def test_a_combining_accent_does_not_split_a_word(qtbot, box):
    _type(qtbot, box, "the ca\u0301t")
    words = box.controller.words
    assert [w.text for w in words] == ["the", "c\u00e1t"], "NFC: the accent composes into one word"
    assert box.controller.trace.unknown == ["c\u00e1t"]


def test_completion_after_an_emoji_completes_the_word_being_typed(qtbot, box):
    _type(qtbot, box, "🐱 the ca")
    assert box._current_prefix() == "ca"
    box.insert_completion("cat")
    assert box.toPlainText() == "🐱 the cat "
    assert box.controller.trace.tokens == ["the", "cat"]


def test_prefix_in_the_middle_of_emoji_text(qtbot, box):
    _type(qtbot, box, "🐱🐱 sa 🐶")
    cursor = box.textCursor()
    cursor.setPosition(7)  # Qt units: two emoji (4) + space (1) + "sa" (2): just after "sa"
    box.setTextCursor(cursor)
    assert box._current_prefix() == "sa"
    box.insert_completion("sat")
    assert box.toPlainText() == "🐱🐱 sat  🐶"


def test_typing_after_an_emoji_raises_nothing_and_keeps_completing(qtbot, box):
    _type(qtbot, box, "🐶🐶🐶 m")
    assert box._current_prefix() == "m"
    assert box.completer.completionPrefix() == "m"
    assert box.completer.popup().isVisible()


def test_the_tooltip_of_an_unknown_word_after_an_emoji(qtbot, box, monkeypatch):
    _type(qtbot, box, "🐱🐱🐱 zebra")
    shown = []
    monkeypatch.setattr("PySide6.QtWidgets.QToolTip.showText", lambda _pos, text, *_a: shown.append(text))
    rect = box.cursorRect(_cursor_at(box, 9))  # Qt position inside "zebra"
    point = box.viewport().mapTo(box, rect.center())
    event = QtGui.QHelpEvent(QtCore.QEvent.Type.ToolTip, point, box.mapToGlobal(point))
    box.event(event)
    assert shown and shown[0].startswith("“zebra” is not in the vocabulary")


def test_a_lone_surrogate_is_refused_with_a_message():
    controller = Controller(engine.load_builtin("cat-sat-on-mat"), "the cat \udcff sat")
    assert controller.trace is None
    assert "not valid text" in controller.error and "U+DCFF" in controller.error
    assert controller.words == ()


def _cursor_at(box, position: int) -> QtGui.QTextCursor:
    cursor = QtGui.QTextCursor(box.document())
    cursor.setPosition(position)
    return cursor
