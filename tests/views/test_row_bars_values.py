"""The row bars: a hint while no word is focused, values written only while they fit, and a title cut
to a narrow pane."""

import numpy as np
from PySide6 import QtWidgets

from attention_explorer import engine
from attention_explorer.controller import Controller
from attention_explorer.views.row_bars import HINT, QtRowBars


def shown_bars(qtbot, size: tuple[int, int], sentence: str = "the cat sat on the mat") -> QtRowBars:
    bars = QtRowBars(Controller(engine.load_builtin("cat-sat-on-mat"), sentence))
    qtbot.addWidget(bars)
    bars.resize(*size)
    bars.show()
    return bars


def test_values_appear_when_the_bars_grow_wide_enough(qtbot):
    bars = shown_bars(qtbot, (400, 300), " ".join(["the cat sat on the mat"] * 5))  # 30 bars of 12 px
    controller = bars.controller
    qtbot.waitExposed(bars)
    controller.set_hovered(2)
    QtWidgets.QApplication.processEvents()
    assert not bars.values_written()  # no room for "0.25"
    bars.resize(1800, 300)
    QtWidgets.QApplication.processEvents()
    assert bars.values_written()
    written = [label.text for label in bars.values.labels()]
    assert written == [f"{w:.2f}" for w in controller.trace.heads[0].weights[2]]


def test_the_title_is_cut_to_a_narrow_pane_and_whole_again_when_it_widens(qtbot):
    """Beside an open dock the bars' pane can be narrower than its title: the title ends in … and the
    plot stays inside the pane instead of running past its edge."""
    bars = shown_bars(qtbot, (180, 300))
    qtbot.waitExposed(bars)
    bars.controller.set_hovered(2)
    QtWidgets.QApplication.processEvents()
    qtbot.wait(1)  # the plot is fitted to the pane once the layout has settled
    whole = "where “sat” looks (head 1)"
    narrow = bars.plot.titleLabel.text
    assert narrow.endswith("…") and whole.startswith(narrow[:-1])
    assert bars.graphics.centralWidget.geometry().width() <= bars.width(), "the plot reaches past the pane"
    bars.resize(600, 300)
    QtWidgets.QApplication.processEvents()
    assert bars.plot.titleLabel.text == whole


def test_the_hint_comes_back_when_the_focus_goes(qtbot):
    """A pane with no word in focus looks as it does when the window opens: the hint, not empty bars."""
    bars = shown_bars(qtbot, (500, 300))
    qtbot.waitExposed(bars)
    bars.controller.set_hovered(2)
    assert bars.currentWidget() is bars.graphics
    bars.controller.set_hovered(None)
    assert bars.shown_row() is None
    qtbot.waitUntil(lambda: bars.currentWidget() is bars.hint)  # once the leave that took the focus is over


def test_the_pane_starts_as_a_hint_and_builds_its_plot_while_idle_then_shows_it_at_the_first_focus(qtbot):
    bars = shown_bars(qtbot, (500, 300))
    assert bars.currentWidget() is bars.hint and bars.hint.text() == HINT
    assert bars.graphics is None  # not built for the first paint
    qtbot.waitUntil(lambda: bars.graphics is not None, timeout=2000)  # built while idle ...
    assert bars.currentWidget() is bars.hint  # ... and not shown until a word is focused
    bars.controller.set_hovered(1)
    assert bars.currentWidget() is bars.graphics
    np.testing.assert_array_equal(bars.shown_row(), bars.controller.trace.heads[0].weights[1])
    assert bars.plot.titleLabel.text == "where “cat” looks (head 1)"


def test_the_first_focus_builds_the_plot_at_once_when_it_comes_before_the_idle_build(qtbot):
    bars = shown_bars(qtbot, (500, 300))
    bars.controller.set_hovered(2)
    assert bars.currentWidget() is bars.graphics and bars.plot.titleLabel.text == "where “sat” looks (head 1)"


def test_a_long_text_s_bars_are_never_thinner_than_a_pixel_and_a_half(qtbot):
    """300 words in a pane of 300 pixels: a bar 0.7 of its word's place would be 0.6 pixels, and at
    2,048 words 0.1 (none was drawn); each is widened to MIN_BAR_PX, and narrow again once there is room."""
    from attention_explorer.views.row_bars import BAR_SHARE, MIN_BAR_PX

    bars = shown_bars(qtbot, (300, 260), " ".join(["the cat sat on the mat"] * 50))
    qtbot.waitExposed(bars)
    bars.controller.set_hovered(4)
    QtWidgets.QApplication.processEvents()
    view = bars.plot.getViewBox()

    def bar_px() -> float:
        return bars.bars.opts["width"] * view.width() / bars.controller.trace.n

    assert abs(bar_px() - MIN_BAR_PX) < 1e-6
    bars.resize(1900, 260)
    QtWidgets.QApplication.processEvents()
    assert bars.bars.opts["width"] == BAR_SHARE and bar_px() > MIN_BAR_PX
