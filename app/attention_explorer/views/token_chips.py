"""The sentence's words as chips: hover one to highlight it everywhere, click to pin it.

Unknown words appear as struck-through red chips with a tooltip offering the nearest known words.
Tokens a reading of a real model's layer hides (its specials, its first token) keep their chips,
greyed and dashed, where they stand: the sentence reads whole, and hiding them moves no chip.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import Controller
from ..engine import nearest_words
from . import theme
from .flow_layout import FlowLayout
from .list_edits import edits, prefix_kept

# A chip shows at most this many characters: one 40,000-letter "word" would otherwise make a chip,
# and with it the window, hundreds of thousands of pixels wide (a gigabyte of window memory).
MAX_CHIP_CHARACTERS = 40
HIDE_TO_ADD = 8  # this many new chips or more go in while the chips are hidden (see QtTokenChips._rebuild)


def _shortened(word: str) -> str:
    return word if len(word) <= MAX_CHIP_CHARACTERS else word[:MAX_CHIP_CHARACTERS - 1] + "…"


class _Chip(QtWidgets.QLabel):
    hovered = QtCore.Signal(object)
    clicked = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget):
        super().__init__(parent)
        self.token_index: int | None = None
        self.under_mouse = False
        self.unknown_word: str | None = None
        self._flags: dict[str, bool] = {}  # the style-sheet properties as last set
        self._shown: tuple | None = None     # what show_token, show_unknown or show_left_out last set
        self.setMouseTracking(True)
        self.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # a token may read "<s>", which as rich text is empty

    def show_token(self, label: str, index: int) -> None:
        shown = ("token", label, index)
        if shown == self._shown:  # a new layer of the same words: nothing to set (512 chips: 18 → 1.4 ms)
            return
        was_token = self._shown is not None and self._shown[0] == "token"
        self._show_text(shown)
        self._shown = shown
        self.token_index = index
        self.unknown_word = None
        if not was_token:  # words shifted one place (specials hidden): the same tip and cursor (512 chips: 8 ms)
            self.setToolTip("Hover to see where this word looks; click to pin it")
            self.setCursor(QtCore.Qt.CursorShape.PointingHandCursor)

    def _show_text(self, shown: tuple) -> None:
        """Set the label of `shown` (kind, label, index) unless the chip shows it already: the same word at
        another index (the specials hidden), or left out, needs no new text (a label lays itself out again
        on every setText)."""
        if shown[:2] != self.shown_text() and _shortened(shown[1]) != self.text():
            self.setText(_shortened(shown[1]))

    def shown_text(self) -> tuple[str, str] | None:
        """("token", label), ("unknown", word) or ("left out", label): what this chip shows, whatever its
        token's index."""
        return self._shown[:2] if self._shown is not None else None

    @property
    def left_out(self) -> bool:
        """A token the views leave out (a reading hides it): it shows, but stands for no row of theirs."""
        return self._shown is not None and self._shown[0] == "left out"

    def show_left_out(self, label: str) -> None:
        """A token a reading hides from the views: no hover, no pin, a tip saying why."""
        shown = ("left out", label, None)
        if shown == self._shown:
            return
        self._show_text(shown)
        self._shown = shown
        self.token_index = None
        self.unknown_word = None
        self.setToolTip("Hidden from the views by the reading chosen above (Hide specials, Hide first token)")
        self.setCursor(QtCore.Qt.CursorShape.ArrowCursor)

    def show_unknown(self, word: str) -> None:
        """An unknown word. It has no tooltip of its own: the chips widget writes one when asked,
        as looking up the nearest known words for thousands of chips would slow every edit."""
        shown = ("unknown", word, None)
        if shown == self._shown:
            return
        self._shown = shown
        self.setText(_shortened(word))
        self.token_index = None
        self.unknown_word = word
        self.setToolTip("")
        self.setCursor(QtCore.Qt.CursorShape.WhatsThisCursor)

    def set_state(self, **flags: bool) -> None:
        """Set the style-sheet properties; re-polish only when one really changed (polish is slow).
        Compared in Python first: asking Qt for three properties of 500 chips on each hover adds up."""
        if flags == self._flags:
            return
        self._flags = dict(flags)
        changed = False
        for name, value in flags.items():
            if self.property(name) != value:
                self.setProperty(name, value)
                changed = True
        if changed:
            self.style().unpolish(self)
            self.style().polish(self)

    def enterEvent(self, event):  # noqa: N802 - Qt API
        self.under_mouse = True
        self.hovered.emit(self.token_index)
        super().enterEvent(event)

    def leaveEvent(self, event):  # noqa: N802 - Qt API
        self.under_mouse = False
        self.hovered.emit(None)
        super().leaveEvent(event)

    def mousePressEvent(self, event):  # noqa: N802 - Qt API
        if event.button() == QtCore.Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mousePressEvent(event)


def _drop(gone: list[_Chip]) -> None:
    """Chips no longer wanted: off the screen now, not when the event loop next deletes them (a nested
    loop may not). No leave event will come from them: the chips settle the hover after a change."""
    for chip in gone:
        chip.hide()
        chip.deleteLater()


def _give(chips: list[_Chip], wanted: list[tuple[str, str]], index: int) -> None:
    """Each chip its word of `wanted`, the tokens numbered from `index`."""
    for chip, (kind, text) in zip(chips, wanted, strict=True):
        if kind == "token":
            chip.show_token(text, index)
            index += 1
        elif kind == "left out":
            chip.show_left_out(text)
        else:
            chip.show_unknown(text)


def chip_words(controller: Controller) -> list[tuple[str, str]]:
    """What each chip shows, in order: ("token", label) for each token of the trace, ("unknown", word) for
    a word the model does not know, and ("left out", label) where a reading hides a token of the layer's
    own (its specials, its first token), in its place among the others; a word merged from pieces has
    one chip."""
    trace = controller.trace
    reading = trace.reading if trace is not None else None
    if reading is not None and sum(map(len, reading.groups)) < reading.source.n:
        owner = {group[0]: shown for shown, group in enumerate(reading.groups) if group}  # a word's first piece
        covered = {token for group in reading.groups for token in group}
        return [("token", trace.labels[owner[token]]) if token in owner else ("left out", label)
                for token, label in enumerate(reading.source.labels) if token in owner or token not in covered]
    labels = iter(trace.labels if trace else [])
    return [("token", next(labels)) if word.known and trace is not None else ("unknown", word.text)
            for word in controller.words]


class QtTokenChips(QtWidgets.QWidget):
    """Chips are reused between sentences and styled by one style sheet keyed on properties, so a
    128-word sentence re-renders in a few milliseconds."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.chips: list[_Chip] = []
        self._chip_of: dict[int, _Chip] = {}  # token index → its chip
        self._styled_for: tuple | None = None  # (focus, pinned) the chips were styled for; None: restyle all
        self._wanted: list[tuple[str, str]] = []  # what each chip was last given: ("token", label) or ("unknown", word)
        self._rebuilding = False
        self._layout = FlowLayout(self, spacing=5)
        self._apply_style_sheet()
        controller.trace_changed.connect(self._rebuild)
        controller.focus_changed.connect(self._restyle)
        controller.pinned_changed.connect(self._restyle)
        self._rebuild()

    def chip_for_token(self, index: int) -> _Chip:
        return self._chip_of[index]

    def _apply_style_sheet(self) -> None:
        fg, hl = theme.foreground().name(), theme.highlight().name()
        self.setStyleSheet(
            f"QLabel {{ color:{fg}; border:1px solid palette(mid); border-radius:9px; padding:2px 8px; }}"
            "QLabel[unknown=\"true\"] { color:#E03131; border:1px dashed #E03131; text-decoration:line-through; }"
            f"QLabel[leftOut=\"true\"] {{ color:{theme.muted().name(QtGui.QColor.NameFormat.HexArgb)};"
            " border:1px dashed palette(mid); }"
            f"QLabel[focused=\"true\"] {{ color:white; background:{hl}; border:1px solid {hl}; }}"
            "QLabel[pinned=\"true\"] { font-weight:bold; }")

    def _rebuild(self, *_):
        wanted = chip_words(self.controller)
        if wanted == self._wanted:
            return  # another layer or head of the same words: each chip shows what it shows (2,048: 3 ms)
        hovered_before = next((chip.token_index for chip in self.chips if chip.under_mouse), None)
        if not (self._left_out_in_place(wanted) or self._cut_or_extend(wanted)):
            self._rebuild_all(wanted)
        self._wanted = wanted
        # later, not while the trace is still being announced: the other views have not seen it yet
        QtCore.QTimer.singleShot(0, self, lambda: self._settle_hover(hovered_before))
        self.updateGeometry()

    def _left_out_in_place(self, wanted: list[tuple[str, str]]) -> bool:
        """The same words, some now left out or shown again (a reading hiding tokens switched on or off):
        every chip keeps its text and place and is numbered again; only those left out or shown again and
        those the focus or the pin leaves or reaches are styled (restyling every chip took 0.8 ms of
        hiding the specials at 512 tokens). False (nothing done) for any other change."""
        if len(wanted) != len(self._wanted) or any(new[1] != old[1]
                                                   for new, old in zip(wanted, self._wanted, strict=True)):
            return False
        changed = [chip for chip, new, old in zip(self.chips, wanted, self._wanted, strict=True) if new[0] != old[0]]
        # the chips styled for the focus and the pin, found by their numbers before they change
        styled = self.chips if self._styled_for is None else [self._chip_of[i] for i in self._styled_for
                                                              if i in self._chip_of]
        self._rebuilding = True
        _give(self.chips, wanted, 0)
        self._rebuilding = False
        self._index_chips()
        self._style(changed + styled)
        self._restyle()
        return True

    def _cut_or_extend(self, wanted: list[tuple[str, str]]) -> bool:
        """The chips of the words shown, cut after the words `wanted` keeps or with a few added after them
        (a scrubber step, a token written): the chips kept are left alone. False (nothing done) for any
        other change. Every chip looked at again took 4 ms of a step at 1,000 tokens."""
        kept = prefix_kept(self._wanted, wanted)
        if kept is None or len(wanted) - kept >= HIDE_TO_ADD:
            return False
        self._rebuilding = True
        gone, self.chips = self.chips[kept:], self.chips[:kept]
        _drop(gone)
        for chip in gone:
            self._chip_of.pop(chip.token_index, None)
        new = [self._new_chip() for _ in wanted[kept:]]
        self._show_new(new)
        _give(new, wanted[kept:], len(self._chip_of))  # numbered on from the tokens among the chips kept
        self._chip_of.update({chip.token_index: chip for chip in new if chip.token_index is not None})
        self.chips += new
        self._layout.set_widgets(self.chips)
        self._rebuilding = False
        self._style(new)
        self._restyle()
        return True

    def _rebuild_all(self, wanted: list[tuple[str, str]]) -> None:
        """Chips for `wanted`, those of words still wanted kept (list_edits)."""
        self._rebuilding = True
        chips, gone, new = self._chips_for(wanted)
        hidden_while_adding = len(new) >= HIDE_TO_ADD and self.isVisible()
        if hidden_while_adding:
            # Qt lays out every visible parent each time a child is shown: with this widget hidden
            # while the new chips go in, the window is laid out once, not once per chip. Not for a
            # few: hidden and shown again, every chip is painted anew (a word written: all 64 of them).
            self.hide()
        self._show_new(new)
        _drop(gone)
        self.chips = chips
        self._layout.set_widgets(chips)
        _give(chips, wanted, 0)
        if hidden_while_adding:
            self.show()
        self._rebuilding = False
        self._index_chips()
        self._styled_for = None
        self._restyle()

    def _index_chips(self) -> None:
        self._chip_of = {chip.token_index: chip for chip in self.chips if chip.token_index is not None}

    def _show_new(self, new: list[_Chip]) -> None:
        """Show new chips with the layout switched off, to be placed once with the rest: each chip shown
        (now, or by Qt a pass later) is polished by the style sheet, which invalidates the row, and showing
        it lays the row out again (the specials shown again at 512 tokens: two passes of 2 ms over every
        chip)."""
        self._layout.setEnabled(False)
        for chip in new:
            chip.show()
        self._layout.setEnabled(True)

    def _chips_for(self, wanted: list[tuple[str, str]]) -> tuple[list[_Chip], list[_Chip], list[_Chip]]:
        """A chip for each wanted word, in order; the chips left over; and the chips made. A chip that
        shows a word still wanted keeps showing it (the specials hidden: the words between keep their
        chips, so none is re-measured), others are reused in place or made."""
        shown = [chip.shown_text() for chip in self.chips]
        chips: list[_Chip] = []
        gone: list[_Chip] = []
        new: list[_Chip] = []
        for _tag, i1, i2, j1, j2 in edits(shown, wanted):
            reused = self.chips[i1:i2]
            made = [self._new_chip() for _ in range(j2 - j1 - len(reused))]
            chips += reused[:j2 - j1] + made
            gone += reused[j2 - j1:]
            new += made
        return chips, gone, new

    def _new_chip(self) -> _Chip:
        chip = _Chip(self)
        # of no size until the row places it: shown at its default size it covered the first chips, which
        # were painted again for it (a written word repainted five chips it never touched)
        chip.resize(0, 0)
        chip.hovered.connect(self._on_chip_hovered)
        chip.clicked.connect(lambda c=chip: self._on_chip_clicked(c))
        return chip

    def _on_chip_hovered(self, index: int | None) -> None:
        if not self._rebuilding:  # hiding and showing the chips while rebuilding moves no mouse
            self.controller.set_hovered(index, source=self)

    def _settle_hover(self, hovered_before: int | None) -> None:
        """The chip under the mouse may now show another word, or be gone (removed chips send no
        leave event): hover what is under the mouse now, so the hovered index never points past the
        last word or at a word the mouse is not on."""
        under = next((chip for chip in self.chips if chip.under_mouse), None)
        now = under.token_index if under is not None else None
        if now != hovered_before:
            self.controller.set_hovered(now, source=self)

    def event(self, event: QtCore.QEvent) -> bool:
        """A tooltip asked over an unknown word's chip (which has none, so the request comes here)."""
        if event.type() == QtCore.QEvent.Type.ToolTip:
            chip = self.childAt(event.pos())
            if isinstance(chip, _Chip) and chip.unknown_word is not None:
                QtWidgets.QToolTip.showText(event.globalPos(), self.unknown_hint(chip.unknown_word), chip)
                return True
        return super().event(event)

    def unknown_hint(self, word: str) -> str:
        nearest = nearest_words(word, self.controller.model.vocabulary)
        return "Unknown word, left out of the computation." + (f" Known words spelled like it: {', '.join(nearest)}"
                                                                if nearest else "")

    def _on_chip_clicked(self, chip: _Chip) -> None:
        if chip.token_index is not None:
            self.controller.toggle_pinned(chip.token_index)

    def _restyle(self, *_):
        """Style the chips for the focus and the pin: after a rebuild every chip, else only the chips of
        the words that were or now are focused or pinned (every chip of 8,192 took 7 ms of a hover)."""
        focus, pinned = self.controller.focus, self.controller.pinned
        if self._styled_for is None:
            chips = self.chips
        else:
            chips = [self._chip_of[i] for i in {*self._styled_for, focus, pinned} if i in self._chip_of]
        self._styled_for = (focus, pinned)
        self._style(chips)

    def _style(self, chips: list[_Chip]) -> None:
        """Style `chips` for the focus and the pin as they are now."""
        focus, pinned = self.controller.focus, self.controller.pinned
        for chip in chips:
            known = chip.token_index is not None
            chip.set_state(unknown=chip.unknown_word is not None, leftOut=chip.left_out,
                           focused=known and chip.token_index == focus, pinned=known and chip.token_index == pinned)
