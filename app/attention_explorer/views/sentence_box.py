"""The sentence box: type a sentence, complete the model's words, see unknown words flagged in place.

A one-line QPlainTextEdit (a QLineEdit cannot underline single words): unknown words get a red wavy
underline and a tooltip offering the nearest known words; the computation runs on the known ones.
"""

from __future__ import annotations

import unicodedata

from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import Controller
from ..engine import nearest_words
from ..engine.tokenizer import canonical
from .text_positions import TextPositions


class QtSentenceBox(QtWidgets.QPlainTextEdit):
    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.setObjectName("sentenceBox")
        self.setPlaceholderText("Type a sentence, e.g. the cat sat on the mat")
        self.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        self.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTabChangesFocus(True)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.setFont(font)
        margins = self.contentsMargins()
        self.setFixedHeight(QtGui.QFontMetrics(font).lineSpacing() + 2 * int(self.document().documentMargin())
                            + margins.top() + margins.bottom() + 4)

        self.completer = QtWidgets.QCompleter(self)
        self.completer.setWidget(self)
        self.completer.setCaseSensitivity(QtCore.Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QtWidgets.QCompleter.CompletionMode.PopupCompletion)
        self.completer.activated.connect(self.insert_completion)

        self.setPlainText(controller.sentence)
        self.textChanged.connect(self._on_text_changed)
        controller.sentence_changed.connect(self._on_sentence_changed)
        controller.model_changed.connect(self._on_model_changed)
        controller.model_edited.connect(self._on_model_changed)  # an added word completes too
        controller.trace_changed.connect(self._flag_unknown_words)
        self._on_model_changed(controller.model)
        self._flag_unknown_words()

    # --- model → widget -------------------------------------------------------------------------
    def _on_model_changed(self, model) -> None:
        self.completer.setModel(QtCore.QStringListModel(sorted(model.vocabulary), self.completer))
        # the underlines wait for trace_changed, which follows: the words are not recomputed yet

    def _on_sentence_changed(self, sentence: str) -> None:
        if sentence != self.toPlainText():
            with QtCore.QSignalBlocker(self):
                self.setPlainText(sentence)
                self.setTextCursor(self._after_the_last_word())
        self.setExtraSelections([])  # until trace_changed brings the words of this sentence

    def _after_the_last_word(self) -> QtGui.QTextCursor:
        """A cursor at the end of the last line that holds more than spaces. The box is one line high and
        shows the cursor's line: a generation's text often ends in line breaks, and a cursor at its very
        end showed an empty line, as if the box held nothing."""
        block = self.document().lastBlock()
        while not block.text().strip() and block.previous().isValid():
            block = block.previous()
        cursor = QtGui.QTextCursor(block)
        cursor.movePosition(QtGui.QTextCursor.MoveOperation.EndOfBlock)
        return cursor

    def _flag_unknown_words(self, *_):
        selections = []
        underline = QtGui.QTextCharFormat()
        underline.setUnderlineStyle(QtGui.QTextCharFormat.UnderlineStyle.WaveUnderline)
        underline.setUnderlineColor(QtGui.QColor("#E03131"))
        underline.setForeground(QtGui.QColor("#E03131"))
        text = self.toPlainText()
        words = self.controller.words if text == self.controller.sentence else ()  # offsets index this text
        positions = TextPositions(text)
        for word in words:
            if word.known:
                continue
            selection = QtWidgets.QTextEdit.ExtraSelection()
            cursor = QtGui.QTextCursor(self.document())
            cursor.setPosition(positions.to_qt(word.start))
            cursor.setPosition(positions.to_qt(word.end), QtGui.QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selection.format = underline
            selections.append(selection)
        self.setExtraSelections(selections)

    def flagged_words(self) -> list[str]:
        """The words underlined as unknown, in order."""
        return [s.cursor.selectedText() for s in self.extraSelections()]

    # --- widget → model -------------------------------------------------------------------------
    def _on_text_changed(self) -> None:
        self.controller.set_sentence(self.toPlainText())
        self._update_completion()

    def _prefix_span(self) -> tuple[int, int]:
        """Start and end (Python indices) of the word being typed at the cursor; empty when the cursor
        is mid-word."""
        text = self.toPlainText()
        pos = TextPositions(text).to_python(self.textCursor().position())
        if pos < len(text) and _is_word_character(text[pos]):
            return pos, pos
        start = pos
        while start > 0 and _is_word_character(text[start - 1]):
            start -= 1
        return start, pos

    def _current_prefix(self) -> str:
        start, end = self._prefix_span()
        return self.toPlainText()[start:end]

    def _update_completion(self) -> None:
        prefix = self._current_prefix() if self.hasFocus() else ""
        if not prefix or canonical(prefix) in self.controller.model.vocabulary:
            self.completer.popup().hide()
            return
        self.completer.setCompletionPrefix(prefix)
        if self.completer.completionCount() == 0:
            self.completer.popup().hide()
            return
        rect = self.cursorRect()
        rect.setWidth(self.completer.popup().sizeHintForColumn(0) + 24)
        self.completer.complete(rect)

    def insert_completion(self, completion: str) -> None:
        """Replace the word being typed by `completion` and add a space."""
        start, end = self._prefix_span()
        positions = TextPositions(self.toPlainText())
        cursor = self.textCursor()
        cursor.setPosition(positions.to_qt(start))
        cursor.setPosition(positions.to_qt(end), QtGui.QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(completion + " ")
        self.setTextCursor(cursor)

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 - Qt API
        popup_open = self.completer.popup().isVisible()
        if popup_open and event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter,
                                          QtCore.Qt.Key.Key_Escape, QtCore.Qt.Key.Key_Tab):
            event.ignore()  # the completer's popup takes it
            return
        if event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter, QtCore.Qt.Key.Key_Escape):
            # Done typing: leave the box, so Space and the arrow keys drive the steps again.
            event.accept()
            self.clearFocus()
            return
        super().keyPressEvent(event)

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ToolTip:
            self._show_word_tooltip(event)
            return True
        return super().event(event)

    def _show_word_tooltip(self, event: QtGui.QHelpEvent) -> None:
        position = self.cursorForPosition(self.viewport().mapFrom(self, event.pos())).position()
        position = TextPositions(self.toPlainText()).to_python(position)
        for word in self.controller.words:
            if not word.known and word.start <= position <= word.end:
                QtWidgets.QToolTip.showText(event.globalPos(), self.unknown_word_hint(word.text), self)
                return
        QtWidgets.QToolTip.hideText()

    def unknown_word_hint(self, word: str) -> str:
        """The tooltip of an unknown word: that it is left out, and the nearest known words."""
        near = nearest_words(word, self.controller.model.vocabulary)
        hint = f"“{word}” is not in the vocabulary of {self.controller.model.name}; it is left out."
        return hint + (f" Known words spelled like it: {', '.join(near)}." if near else "")


def _is_word_character(character: str) -> bool:
    """A letter, or a combining mark (the accent of "cát" typed as two characters) inside a word."""
    return character.isalpha() or unicodedata.category(character).startswith("M")
