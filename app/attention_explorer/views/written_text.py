"""The text a decoder wrote, under the scrubber: the prompt plain, each written token tinted, the token
the scrubber stands on framed (bold and underlined); after Generate again, the two continuations one
above the other, each after its heads, with the first token where they part in red in both.

Made with a text cursor rather than set as HTML, so that each written token's place in the document is
known: a scrubber step then only moves the frame, and a token written while the views follow is added
at the end. Setting a thousand tokens' HTML again took 16 ms of a step (21 with making it), and the
scroll bar went back to the top each time. Tokens are written as the tokenizer writes them, their
spaces kept (HTML ran several spaces into one).
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

WRITTEN_TINT = QtGui.QColor(255, 170, 0, 56)  # behind the tokens written, in light and dark themes alike
PARTED_TINT = QtGui.QColor(230, 60, 60, 89)   # the first token where two continuations part
LINE = "\u2028"  # a line break within the paragraph, as HTML's <br> makes
NEWLINE_SHOWN = "↵"  # a written newline is shown, then kept


def heads_heading(generation) -> str:
    """What a continuation was written with, as the heading over it: its heads, and how it picked
    its tokens when not greedy or asked as a chat."""
    settings = generation.settings
    off = sorted(settings.ablate)
    said = ["Heads off: " + ", ".join(f"layer {layer + 1} head {head + 1}" for layer, head in off) if off
            else "Every head on"]
    if not settings.sampling.greedy:
        said.append(settings.sampling.describe())
    if settings.chat:
        said.append("asked as a chat")
    return "; ".join(said) + ":"


def first_difference(first, second) -> int | None:
    """The index of the first written token where two generations part, None when one continues the other."""
    for index, (a, b) in enumerate(zip(first.steps, second.steps)):  # noqa: B905 - the shorter one ends it
        if a.token_id != b.token_id:
            return index
    return None


class WrittenText(QtCore.QObject):
    """Keeps `browser`'s document showing a generation (and the one it is compared with), changing only
    what a new step or a new token changes, and the framed token in sight."""

    def __init__(self, browser: QtWidgets.QTextBrowser):
        super().__init__(browser)
        self.browser = browser
        browser.viewport().installEventFilter(self)  # made shorter, the box keeps the framed token in sight
        self.document = browser.document()
        self.document.setUndoRedoEnabled(False)  # each frame moved would be kept as an edit to undo
        self._made_for: tuple | None = None  # (tokenizer, generation, compared, parted) the text was made for
        self._spans: list[tuple[int, int]] = []  # each written token of the shown generation: (start, end)
        self._framed: int | None = None

    def show(self, tokenizer, generation, compared, shown: int | None) -> None:
        """Show `generation` (after `compared`, when set), its written token `shown` framed (none when
        None or past the last)."""
        parted = first_difference(compared, generation) if compared is not None else None
        made_for, reveal = (tokenizer, generation, compared, parted), True
        if (self._made_for is None or any(a is not b for a, b in zip(made_for[:3], self._made_for[:3], strict=True))
                or parted != self._made_for[3] or len(generation.steps) < len(self._spans)):
            self._make(tokenizer, generation, compared, parted)
            self._made_for = made_for
        elif len(generation.steps) > len(self._spans):  # written on: the new tokens go at the end
            # the box follows the newest token unless the reader scrolled away from it to read on
            reveal = self._framed is None or self._in_sight(self._framed)
            cursor = QtGui.QTextCursor(self.document)
            cursor.movePosition(QtGui.QTextCursor.MoveOperation.End)
            for index in range(len(self._spans), len(generation.steps)):
                self._spans.append(_insert_token(cursor, tokenizer, generation.steps[index].token_id, index == parted))
        self._frame(shown if shown is not None and 0 <= shown < len(self._spans) else None, reveal)

    def clear(self) -> None:
        if self._made_for is None:
            return
        self.document.clear()
        self._made_for, self._spans, self._framed = None, [], None

    def framed(self) -> int | None:
        """The written token framed (its index among the shown generation's), None when none is."""
        return self._framed

    def token_span(self, index: int) -> tuple[int, int]:
        """Where the shown generation's written token `index` stands in the document: (start, end)."""
        return self._spans[index]

    def _make(self, tokenizer, generation, compared, parted) -> None:
        self.document.clear()
        self._framed = None
        cursor = QtGui.QTextCursor(self.document)
        if compared is not None:
            _insert_heading(cursor, heads_heading(compared))
            _insert_continuation(cursor, tokenizer, compared, parted)
            spaced = QtGui.QTextBlockFormat()
            spaced.setTopMargin(QtGui.QFontMetricsF(self.document.defaultFont()).lineSpacing() / 2)
            cursor.insertBlock(spaced)
            _insert_heading(cursor, heads_heading(generation))
        self._spans = _insert_continuation(cursor, tokenizer, generation, parted)

    def _frame(self, index: int | None, reveal: bool) -> None:
        """Frame token `index` in place of the one framed. Both in one edit: each change of format lays its
        paragraph out again, and a generation without a newline is one paragraph (a step at 1,000 tokens
        laid it out twice: 2.1 ms against 0.95)."""
        if index == self._framed:
            return
        cursor = QtGui.QTextCursor(self.document)
        cursor.beginEditBlock()
        if self._framed is not None:
            self._format(cursor, self._framed, framed=False)
        self._framed = index
        if index is not None:
            self._format(cursor, index, framed=True)
        cursor.endEditBlock()
        if index is not None and reveal:
            self._reveal(index)

    def _format(self, cursor: QtGui.QTextCursor, index: int, framed: bool) -> None:
        start, end = self._spans[index]
        cursor.setPosition(start)
        cursor.setPosition(end, QtGui.QTextCursor.MoveMode.KeepAnchor)
        frame = QtGui.QTextCharFormat()
        frame.setFontWeight(QtGui.QFont.Weight.Bold if framed else QtGui.QFont.Weight.Normal)
        frame.setFontUnderline(framed)
        cursor.mergeCharFormat(frame)

    def _reveal(self, index: int) -> None:
        """Scroll the framed token's line to the middle of the box when any of it is out of sight: a long
        generation runs past the box, and the box is a few lines high beside the model view. The box
        then starts on a whole line, as at the top of the text: centred to the pixel, a box two lines
        high showed the lower half of one line over the token's and the upper half of one under it."""
        if self._in_sight(index):
            return
        first, last = self._corners(index)
        line, margin = max(first.height(), 1), self.document.documentMargin()
        spanned = max(1, round((last.bottom() - first.top() + 1) / line))  # lines the token runs over
        whole = int(self.browser.viewport().height() - margin) // line  # lines the box shows whole
        above = max(0, (whole - spanned) // 2)  # lines shown over the token's
        bar = self.browser.verticalScrollBar()
        top = bar.value() + first.top()  # the token's first line, in the document
        bar.setValue(round(top - above * line - margin))

    def _in_sight(self, index: int) -> bool:
        area = self.browser.viewport().rect()
        return all(area.contains(corner) for corner in self._corners(index))

    def _corners(self, index: int) -> tuple[QtCore.QRect, QtCore.QRect]:
        """The text cursor's rectangles (in the box) at the start and the end of written token `index`; the
        start past the token's leading spaces, where a line may break (the space stays at the end of the
        line before: the token's word is on the next)."""
        start, end = self._spans[index]
        while start < end - 1 and self.document.characterAt(start).isspace():
            start += 1
        cursor = QtGui.QTextCursor(self.document)
        corners = []
        for position in (start, end):
            cursor.setPosition(position)
            corners.append(self.browser.cursorRect(cursor))
        return corners[0], corners[1]

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QtCore.QEvent.Type.Resize:  # once the box has its new scroll range, not before
            QtCore.QTimer.singleShot(0, self, self._reveal_framed)
        return False

    def _reveal_framed(self) -> None:
        if self._framed is not None:
            self._reveal(self._framed)


def _insert_heading(cursor: QtGui.QTextCursor, text: str) -> None:
    bold = QtGui.QTextCharFormat()
    bold.setFontWeight(QtGui.QFont.Weight.Bold)
    cursor.insertText(text, bold)
    cursor.insertText(LINE, QtGui.QTextCharFormat())


def _insert_continuation(cursor: QtGui.QTextCursor, tokenizer, generation, parted: int | None
                         ) -> list[tuple[int, int]]:
    """The prompt plain, then each written token tinted; each token's (start, end)."""
    cursor.insertText(generation.prompt.replace("\n", LINE), QtGui.QTextCharFormat())
    return [_insert_token(cursor, tokenizer, step.token_id, index == parted)
            for index, step in enumerate(generation.steps)]


def _insert_token(cursor: QtGui.QTextCursor, tokenizer, token_id: int, parted: bool) -> tuple[int, int]:
    tint = QtGui.QTextCharFormat()
    tint.setBackground(PARTED_TINT if parted else WRITTEN_TINT)
    start = cursor.position()
    cursor.insertText(tokenizer.token_text(token_id).replace("\n", NEWLINE_SHOWN + LINE), tint)
    return start, cursor.position()
