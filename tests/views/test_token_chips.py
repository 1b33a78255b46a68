"""The chips: laid out once per change however long the sentence, and the hovered word settled when
the chip under the mouse goes away or changes word."""

from PySide6 import QtCore, QtGui, QtWidgets

from attention_explorer.views import flow_layout
from gui_helpers import hover_widget
from screen_oracle import settle


def _count_arranges(monkeypatch) -> dict:
    """Counts the passes over every chip: arranging them for a width, and placing them."""
    calls = {"n": 0}

    def counted(original):
        def passing(self, *args):
            calls["n"] += 1
            return original(self, *args)
        return passing

    for name in ("_arrange", "_place"):
        monkeypatch.setattr(flow_layout.FlowLayout, name, counted(getattr(flow_layout.FlowLayout, name)))
    return calls


def test_a_long_sentence_is_laid_out_a_few_times_not_once_per_chip(make_window, monkeypatch):
    window = make_window()
    vocabulary = sorted(window.controller.model.vocabulary)
    calls = _count_arranges(monkeypatch)
    window.controller.set_sentence(" ".join(vocabulary[i % len(vocabulary)] for i in range(600)))
    QtWidgets.QApplication.processEvents()
    assert len(window.chips.chips) == 600 and all(chip.isVisible() for chip in window.chips.chips)
    assert calls["n"] <= 20, f"{calls['n']} layout passes for 600 chips"
    first, last = window.chips.chips[0].geometry(), window.chips.chips[-1].geometry()
    assert last.top() > first.bottom(), "the chips wrap onto later rows"


def test_chips_wrap_into_rows_without_overlapping(make_window):
    window = make_window()
    window.controller.set_sentence(" ".join(["quick brown fox"] * 40))
    QtWidgets.QApplication.processEvents()
    rects = [chip.geometry() for chip in window.chips.chips]
    assert len({r.y() for r in rects}) > 1, "a long sentence wraps"
    for a, b in zip(rects, rects[1:], strict=False):
        assert not a.intersects(b)


def test_removing_the_hovered_chip_clears_the_hovered_word(qtbot, make_window):
    window = make_window(sentence="the cat sat on the mat")
    hover_widget(window.chips.chip_for_token(5))
    assert window.controller.hovered == 5
    window.controller.set_sentence("the cat")  # the chip under the mouse is gone
    QtWidgets.QApplication.processEvents()
    assert window.controller.hovered is None
    assert window.controller.focus is None


def test_when_the_hovered_chip_shows_another_word_that_word_is_hovered(qtbot, make_window):
    window = make_window(sentence="the cat sat on the mat")
    hover_widget(window.chips.chip_for_token(2))
    assert window.controller.hovered == 2
    window.controller.set_sentence("the zebra cat sat")  # chip 2 now shows "cat", token 1
    QtWidgets.QApplication.processEvents()
    chip = window.chips.chips[2]
    assert chip.text() == "cat" and chip.token_index == 1
    assert window.controller.hovered == 1


def test_an_unknown_chip_explains_itself_when_asked(qtbot, make_window, monkeypatch):
    window = make_window(sentence="the cta sat")
    shown = []
    monkeypatch.setattr(QtWidgets.QToolTip, "showText", lambda _pos, text, *_a: shown.append(text))
    chip = window.chips.chips[1]
    assert chip.token_index is None and chip.text() == "cta"
    point = chip.geometry().center()
    window.chips.event(QtGui.QHelpEvent(QtCore.QEvent.Type.ToolTip, point, window.chips.mapToGlobal(point)))
    assert shown == ["Unknown word, left out of the computation. Known words spelled like it: cat"]


def test_a_30000_letter_word_does_not_widen_the_window(make_window):
    window = make_window()
    width = window.width()
    for sentence in ("the cat " + "y" * 30_000, "x" * 30_000):  # a left-out word, then an error naming it
        window.controller.set_sentence(sentence)
        QtWidgets.QApplication.processEvents()
        assert window.width() == width, "a window hundreds of thousands of pixels wide takes a gigabyte"
    assert window.chips.chips[0].text() == "x" * 39 + "…"


def test_chips_of_words_gone_leave_the_screen_at_once(make_window):
    """Removed chips waited for the event loop to delete them and stayed drawn meanwhile (under a
    loop that does not delete them, "because it was tired" stayed beside a six-word sentence)."""
    window = make_window("it-was-tired")
    window.sentence_box.setPlainText("the dog sat on the mat")
    QtWidgets.QApplication.processEvents()  # no deferred deletes
    shown = [chip for chip in window.chips.findChildren(QtWidgets.QLabel) if chip.isVisible()]
    assert [chip.text() for chip in shown] == ["the₁", "dog", "sat", "on", "the₂", "mat"]


def test_a_chip_that_turns_from_unknown_to_known_gets_a_word_s_tip_and_cursor(make_window):
    """A chip keeps its tip and cursor while it goes on showing a word (every word shifts a place when
    specials are hidden), and takes a word's when its unknown word is mended."""
    window = make_window()
    known = sorted(window.controller.model.vocabulary)[0]
    window.controller.set_sentence(f"{known} zzqx {known}")
    QtWidgets.QApplication.processEvents()
    unknown = window.chips.chips[1]
    assert unknown.cursor().shape() == QtCore.Qt.CursorShape.WhatsThisCursor and unknown.toolTip() == ""
    window.controller.set_sentence(f"{known} {known} {known}")
    QtWidgets.QApplication.processEvents()
    for chip in window.chips.chips:
        assert chip.cursor().shape() == QtCore.Qt.CursorShape.PointingHandCursor
        assert chip.toolTip().startswith("Hover to see where this word looks")


def test_another_layer_of_the_same_words_leaves_every_chip_and_the_layout_alone(real_window, qtbot, monkeypatch):
    """A real model's trace is one layer's: each layer changed went through every chip (2,048 of a long
    text: 3 ms) and laid the chips out again; the same words give the same chips."""
    from pathlib import Path

    from screen_oracle import settle

    window = real_window(str(Path(__file__).parents[1] / "engine" / "pretrained" / "data" / "tiny-bert"))
    settle()
    chips = list(window.chips.chips)
    texts = [chip.text() for chip in chips]
    calls = _count_arranges(monkeypatch)
    shown = []
    monkeypatch.setattr(type(chips[0]), "show_token", lambda self, *a: shown.append(a))
    trace, words = window.controller.trace, window.controller.words
    window.controller.set_layer(1)
    settle()
    assert window.controller.trace is not trace  # a new trace, of the same words
    assert window.controller.words is words  # the same words, not made and compared again one by one
    assert window.chips.chips == chips and [chip.text() for chip in chips] == texts
    assert shown == [] and calls["n"] == 0
    window.controller.set_sentence("the dog sat")
    qtbot.waitUntil(lambda: len(shown) > 0)  # other words (read on the worker): the chips are given them


def test_a_word_added_paints_its_own_chip_not_every_chip(make_window, monkeypatch):
    """Chips went in with the whole row hidden, so that many new chips lay the window out once; for
    one word more (a decoder's next token, a scrubber step forward) every chip was painted again."""
    from event_log import EventLog
    from screen_oracle import check_backing_store, settle

    window = make_window(sentence="the cat sat on the mat and the dog sat on the rug")
    settle()
    old = list(window.chips.chips)
    with EventLog({QtCore.QEvent.Type.Paint}, *old) as painted:
        window.controller.set_sentence("the cat sat on the mat and the dog sat on the rug again")
        settle()
    assert window.chips.chips[:-1] == old and window.chips.chips[-1].isVisible()
    assert window.chips.chips[-1].text() == "again"
    assert len(painted.seen) <= 2, f"{len(painted.seen)} old chips painted for one word added"
    check_backing_store(window, "a word added")
    calls = _count_arranges(monkeypatch)
    window.controller.set_sentence(" ".join(["the cat sat on the mat"] * 20))
    settle()
    assert len(window.chips.chips) == 120 and all(chip.isVisible() for chip in window.chips.chips)
    assert calls["n"] <= 20, f"{calls['n']} layout passes for 106 chips more"
    check_backing_store(window, "many words added")


def test_after_any_run_of_hovers_and_pins_every_chip_is_styled_for_the_focus_and_pin(make_window):
    """A hover restyles only the chips of the words that were or are focused or pinned: every other chip
    must still be as a full restyle leaves it, across new sentences and an unknown word among them."""
    window = make_window()
    controller, chips = window.controller, window.chips
    sentences = ["the cat sat on the mat", "the zzyzx cat sat", "the dog sat on the mat and the cat sat"]
    steps = [("hover", 2), ("pin", 2), ("hover", 4), ("hover", None), ("pin", 4), ("hover", 0), ("pin", 4),
             ("sentence", 1), ("hover", 1), ("pin", 2), ("sentence", 2), ("hover", 7), ("hover", 3)]
    for kind, value in steps:
        if kind == "hover":
            controller.set_hovered(value)
        elif kind == "pin":
            controller.toggle_pinned(value)
        else:
            controller.set_sentence(sentences[value])
        QtWidgets.QApplication.processEvents()
        for chip in chips.chips:
            known = chip.token_index is not None
            expected = (not known, known and chip.token_index == controller.focus,
                        known and chip.token_index == controller.pinned)
            assert (chip.property("unknown"), chip.property("focused"), chip.property("pinned")) == expected, \
                f"after {kind} {value}: chip {chip.text()!r}"


def test_a_long_sentence_remembered_from_the_last_run_is_laid_out_at_the_chips_width(make_window, settings):
    """The app opened on a sentence of four rows of chips, remembered from the last run: the chips got
    their size in an event Qt sends as it first shows them, the strip then showed its scroll bar and
    made them narrower, and Qt dropped that size before the chips heard of it. The chips stayed placed
    for the width without the scroll bar, the last of the first row under it, where a fresh view wraps
    it (found by a fuzzer of window updates)."""
    words = ("big ate small bird jumped fox house mouse in park box brown red over fish slept a my " * 4)[:-1]
    settings.setValue("model/sentence", words)
    window = make_window()
    settle()
    chips, area = window.chips, window.chips.parentWidget().parentWidget()
    assert area.verticalScrollBar().isVisible(), "the test needs more rows than the strip shows"
    assert chips.layout().geometry() == chips.contentsRect()
    assert max(chip.geometry().right() for chip in chips.chips) < chips.width()


def test_hiding_the_specials_leaves_their_chips_greyed_in_place_and_moves_no_chip(real_window, qtbot, monkeypatch):
    """[CLS] and [SEP] hidden keep their chips where they stand, greyed and standing for no token (no
    hover, no pin), and the words between are numbered from the first shown. Removed, they moved every
    other chip (512 tokens: 510 chips placed and painted again, 6 ms of a 35-ms toggle). No chip is given
    a new text or place, and the row draws as a row built fresh for the same state; shown again, the
    chips are as before."""
    from pathlib import Path

    from screen_oracle import settle
    from view_twins import check_twin

    window = real_window(str(Path(__file__).parents[1] / "engine" / "pretrained" / "data" / "tiny-bert"),
                         sentence="the cat sat on the mat and the dog sat on the mat")
    settle()
    before = list(window.chips.chips)
    words = [chip.text() for chip in before]
    places = [chip.geometry() for chip in before]
    assert words[0] == "[CLS]" and words[-1] == "[SEP]"
    texts, moved = [], []
    monkeypatch.setattr(type(before[0]), "setText", lambda self, text: texts.append(text))
    monkeypatch.setattr(flow_layout.QtWidgets.QWidgetItem, "setGeometry", lambda self, rect: moved.append(rect))
    window.pretrained.bar.hide_specials.click()
    qtbot.waitUntil(lambda: window.chips.chips[0].left_out)
    settle()
    assert window.chips.chips == before and texts == [] and moved == []
    assert [chip.geometry() for chip in before] == places
    assert [chip.left_out for chip in before] == [True] + [False] * (len(before) - 2) + [True]
    assert [chip.token_index for chip in before] == [None, *range(len(before) - 2), None]
    assert window.controller.trace.labels[0] == before[1].text()
    assert before[0].property("leftOut") and not before[0].property("unknown")
    window.controller.set_hovered(0)
    settle()
    assert before[1].property("focused") and not before[0].property("focused")
    monkeypatch.undo()
    check_twin(window.chips, "the specials hidden")
    window.pretrained.bar.hide_specials.click()
    qtbot.waitUntil(lambda: not window.chips.chips[0].left_out)
    settle()
    assert window.chips.chips == before and [chip.text() for chip in before] == words
    assert [chip.token_index for chip in before] == list(range(len(before)))
    assert [chip.geometry() for chip in before] == places
    check_twin(window.chips, "the specials shown again")
    window.controller.toggle_pinned(3)  # a pin and a hover held while the specials go: styled as a fresh row
    window.controller.set_hovered(5)
    window.pretrained.bar.hide_specials.click()
    qtbot.waitUntil(lambda: window.chips.chips[0].left_out)
    settle()
    styled = [chip for chip in before if chip.property("pinned") or chip.property("focused")]
    assert styled == [window.chips.chip_for_token(i) for i in sorted({window.controller.pinned,
                                                                     window.controller.focus} - {None})]
    check_twin(window.chips, "the specials hidden under a pin")


def test_words_cut_or_added_at_the_end_leave_the_other_chips_as_a_fresh_row_has_them(make_window, monkeypatch):
    """A sentence cut after some of its words, or with a few added after them (as a scrubber steps or a
    decoder writes), keeps the chips of the words before and looks after the change, chip by chip, as a
    row given that sentence fresh: texts, token numbers, styles and places, with unknown words among
    them and a word hovered and pinned; a change elsewhere goes the long way."""
    from attention_explorer.views.token_chips import QtTokenChips

    window = make_window(sentence="the cat sat on a mat")
    controller, chips = window.controller, window.chips
    controller.toggle_pinned(1)
    controller.set_hovered(4)
    long_way, rebuild_all = [], QtTokenChips._rebuild_all
    monkeypatch.setattr(QtTokenChips, "_rebuild_all", lambda self, wanted: (
        self is chips and long_way.append(len(wanted))) or rebuild_all(self, wanted))  # this row's, not a fresh one's
    sentences = ["the cat sat on a mat and my dog", "the cat sat on a mat and", "the cat sat", "the cat sat zzyzx on",
                 "the dog sat zzyzx on", "the dog", "the dog the"]
    for sentence in sentences:
        before = list(chips.chips)
        controller.set_sentence(sentence)
        QtWidgets.QApplication.processEvents()
        kept = [chip for chip in before if chip in chips.chips]
        fresh = make_window(sentence=sentence)
        fresh.controller.toggle_pinned(1)
        fresh.controller.set_hovered(controller.hovered)
        fresh.resize(window.size())
        QtWidgets.QApplication.processEvents()

        def shown(row):
            return [(chip.text(), chip.token_index, chip.property("unknown"), chip.property("focused"),
                     chip.property("pinned"), chip.geometry().getRect()) for chip in row.chips.chips]

        assert shown(window) == shown(fresh), sentence
        assert chips.chips[:len(kept)] == kept  # the chips of the words before stayed the same widgets
        assert all(chips.chip_for_token(chip.token_index) is chip for chip in chips.chips if chip.token_index
                   is not None)
    # a word changed in the middle; a repeated word, which numbers the first "the" ("the₁")
    assert long_way == [5, 3]
