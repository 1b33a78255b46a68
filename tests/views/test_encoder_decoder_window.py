"""An encoder–decoder (the tiny BART checkpoint) in the window, driven as a user drives it: opened as a
folder, a target typed into its box, the attention chosen in the bar's combo box. What the heatmap,
arcs, steps and model view show is checked against the engine's own run of the two texts."""

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer import engine  # noqa: E402
from attention_explorer.app import MainWindow  # noqa: E402
from attention_explorer.controller import LOOKED_AT, LOOKING, Controller  # noqa: E402
from attention_explorer.engine.steps import step_index, step_view  # noqa: E402
from attention_explorer.figure import built_figure  # noqa: E402
from attention_explorer.figure_controller import figure_facts  # noqa: E402
from attention_explorer.figure_options import FigureOptions  # noqa: E402
from attention_explorer.figure_text import caption  # noqa: E402
from attention_explorer.headless import destroy_now  # noqa: E402
from attention_explorer.view_file import read_view  # noqa: E402
from attention_explorer.views.arc_diagram import LEFT, RIGHT  # noqa: E402
from attention_explorer.views.heatmap import CROSS_AXIS_TITLES  # noqa: E402
from bart_window import BART, SOURCE, choose_part, settle, type_target  # noqa: E402
from html_page import page_data  # noqa: E402


def test_a_bart_folder_opens_on_cross_attention_with_the_source_as_its_target(bart_window, bart):
    window = bart_window
    box = window.pretrained.target_box
    assert box.isVisible() and box.edit.text() == SOURCE  # BART's target for a text is the text
    bar = window.pretrained.bar
    assert bar.part.isVisible() and bar.part.currentText().startswith("Cross-attention")
    expected = bart.run(SOURCE, SOURCE)
    shown = window.heatmap.shown_matrix()
    assert shown.shape == (len(expected.target_labels), len(expected.source.labels))
    assert np.abs(shown - expected.cross_attention[0, 0]).max() < 1e-6
    assert window.heatmap.row_labels() == engine.tokenizer.token_labels(expected.target_labels)
    assert window.heatmap.column_labels() == engine.tokenizer.token_labels(expected.source.labels)
    plot = window.heatmap.plot
    assert (plot.getAxis("left").labelText, plot.getAxis("top").labelText) == CROSS_AXIS_TITLES
    assert "cross-attention" in window.heatmap.title()
    assert window.options_bar.head.count() == 8  # the decoder's heads
    assert "Cross-attention" in window.status_line.text()
    chips = [chip.text() for chip in window.chips.chips]  # one chip per row: the target's tokens, shown as typed
    assert chips == engine.tokenizer.token_labels(expected.target_labels) and chips[1] == "<s>"


def test_a_source_with_half_a_character_starts_a_target_the_box_can_hold(qtbot, settings):
    """A target starts as the source text. A source holding half a character (a lone surrogate, from a
    view file's text; the source's own check names it) made a target the Target box could not show:
    Qt's line edit dropped the character, and the box read "the cat  sat" while the model read another
    target (found by a random walk). The half character is now U+FFFD in the target, the box and the model."""
    controller = Controller(engine.load_builtin("cat-sat-on-mat"), "the cat sat", background=True)
    window = MainWindow(controller, settings)
    qtbot.addWidget(window)
    window.show()
    controller.set_sentence("the cat \udcff sat")  # as a view file's text is set (the box cannot hold it)
    qtbot.waitUntil(lambda: not controller.busy)
    assert "\udcff" in controller.sentence and "half of a character" in controller.error
    window.open_model(BART)
    qtbot.waitUntil(lambda: controller.is_encoder_decoder and not controller.busy)
    box = window.pretrained.target_box
    assert controller.target == box.edit.text() == "the cat \ufffd sat"
    controller.set_target("the dog \udcff ran")  # as a view file's target is set
    settle(qtbot, controller)
    assert controller.target == box.edit.text() == "the dog \ufffd ran"
    controller.cancel()
    controller.wait_idle()


def test_typing_a_target_runs_the_model_again_and_every_view_follows(bart_window, bart, qtbot):
    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, "a dog")
    assert c.target == "a dog"
    expected = bart.run(SOURCE, "a dog")
    c.set_layer(1)
    c.set_head(5)
    QtWidgets.QApplication.processEvents()
    shown = window.heatmap.shown_matrix()
    assert shown.shape == (4, len(expected.source.labels))  # </s>, <s>, a, dog × the source's tokens
    assert np.abs(shown - expected.cross_attention[1, 5]).max() < 1e-6
    assert window.heatmap.row_labels() == ["</s>", "<s>", "a", "dog"]
    # arcs: target words on the left, source words on the right, each line the weight it stands for
    arcs = window.arcs
    assert arcs.label(LEFT, 3).text == "dog" and arcs.label(RIGHT, 2).text == "cat"
    drawn = arcs.drawn_arcs()  # every head's lines (a short text shows them all)
    assert 5 in {head for head, *_ in drawn}
    for head, looking, looked_at, weight in drawn:
        assert looking < 4 and looked_at < len(expected.source.labels)
        assert abs(weight - expected.cross_attention[1, head, looking, looked_at]) < 1e-6
    # the steps: q from the decoder's stream, k and v from the encoder's last hidden states
    kv = step_view(c.step_trace, "kv", c.head)
    assert "encoder's last hidden states" in kv.step.title_for(c.step_trace)
    assert kv.results[0].rows == tuple(engine.tokenizer.token_labels(expected.source.labels))
    np.testing.assert_array_equal(step_view(c.step_trace, "softmax", c.head).results[0].values, shown)
    # the model view: one cell per decoder layer and head, each the cross-attention of its head
    view = window.pretrained.model_view
    assert sorted(view.images) == [(lay, h) for lay in range(2) for h in range(8)]
    image = view.images[(1, 5)]
    assert (image.width(), image.height()) == (len(expected.source.labels), 4)
    rect = view.cell_rect(1, 5)  # the mouse over the cell's last row, second column: "dog" reading "the₁"
    QTest.mouseMove(view.grid, QtCore.QPoint(int(rect.left() + 1.5 * rect.width() / 11), int(rect.bottom() - 2)))
    QtWidgets.QApplication.processEvents()
    assert view.readout.full_text().startswith("layer 2, head 6: dog → the₁")
    assert f"{expected.cross_attention[1, 5, 3, 1]:.3f}" in view.readout.full_text()
    assert (c.focus, c.focus_role) == (3, LOOKING)


def test_choosing_each_part_sizes_layers_and_heads_to_it(bart_window, bart, qtbot):
    window, c = bart_window, bart_window.controller
    expected = bart.run(SOURCE, SOURCE)
    choose_part(qtbot, window, "Encoder self-attention")
    assert c.part == "encoder" and window.options_bar.head.count() == 4
    assert window.pretrained.bar.layer.count() == 2
    c.set_head(3)
    QtWidgets.QApplication.processEvents()
    assert np.abs(window.heatmap.shown_matrix() - expected.encoder_attention[0, 3]).max() < 1e-6
    assert window.heatmap.column_labels() == window.heatmap.row_labels()
    assert sorted(window.pretrained.model_view.images) == [(lay, h) for lay in range(2) for h in range(4)]
    choose_part(qtbot, window, "Decoder self-attention (causal)")
    assert c.part == "decoder" and window.options_bar.head.count() == 8 and c.trace.options.causal
    assert np.abs(window.heatmap.shown_matrix() - expected.decoder_attention[0, 3]).max() < 1e-6
    assert c.trace.mask is not None and c.trace.mask[0, 1]
    choose_part(qtbot, window, "Cross-attention (target reads source)")
    assert c.part == "cross" and (c.trace.n, c.trace.n_keys) == expected.cross_attention.shape[2:]


def test_hovering_a_source_word_focuses_it_as_the_word_looked_at(bart_window, qtbot):
    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, "a dog")
    c.set_hovered(9, LOOKED_AT)  # "·mat": a source token past the target's four
    assert (c.focus, c.focus_role) == (9, LOOKED_AT)
    assert window.arcs.label(RIGHT, 9).bold and window.arcs.label(LEFT, 3).text == "dog"
    c.set_hovered(9, LOOKING)  # no ninth target token: nothing is focused
    assert c.focus is None
    c.set_hovered(2, LOOKING)
    assert window.arcs.label(LEFT, 2).bold


def test_what_an_encoder_decoder_does_not_offer_is_off_and_says_why(bart_window):
    window = bart_window
    bar = window.pretrained.bar
    for box in (bar.merge, bar.hide_specials, bar.hide_first):  # (tests/views/test_encoder_decoder_readings.py)
        assert box.isEnabled()
    assert not bar.rollout.isEnabled() and "cross-attention mixes two texts" in bar.rollout.toolTip()
    assert not window.pretrained.generation.isVisible()  # its decoder writes with the target box's Write


def test_a_right_click_switches_a_head_of_the_attention_shown_off(bart_window, bart, qtbot):
    window, c = bart_window, bart_window.controller
    view = window.pretrained.model_view
    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=view.cell_rect(0, 2).center().toPoint())
    settle(qtbot, c)
    assert c.heads_off == {("cross", 0, 2)} and c.ablated == {(0, 2)}
    off = bart.run(SOURCE, SOURCE, frozenset({("cross", 0, 2)}))
    assert not np.array_equal(off.cross_attention[1], bart.run(SOURCE, SOURCE).cross_attention[1])  # later layers
    c.set_layer(1)
    c.set_head(4)
    QtWidgets.QApplication.processEvents()
    assert np.abs(window.heatmap.shown_matrix() - off.cross_attention[1, 4]).max() < 1e-6
    c.set_layer(0)
    c.set_head(2)
    QtWidgets.QApplication.processEvents()
    assert window.pretrained.bar.ablate.isChecked() and not c.trace.heads[2].output.any()
    assert "1 head off" in window.status_line.text()
    choose_part(qtbot, window, "Encoder self-attention")  # another attention's heads: all on, the run the same
    assert c.ablated == frozenset() and c.heads_off == {("cross", 0, 2)}
    assert not window.pretrained.bar.heads_on.isEnabled()
    np.testing.assert_array_equal(c.pretrained_trace.all_weights(), off.encoder_attention)
    choose_part(qtbot, window, "Cross-attention (target reads source)")
    window.pretrained.bar.heads_on.click()
    settle(qtbot, c)
    assert c.heads_off == frozenset() and not window.pretrained.bar.ablate.isChecked()


def test_an_empty_or_very_long_target_says_so_and_the_window_goes_on(bart_window, qtbot):
    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, "")
    assert c.trace is None and "target is empty" in c.error
    type_target(qtbot, window, "a dog")
    assert c.trace is not None and c.trace.n == 4
    long_target = " ".join(["the cat sat on the mat"] * 40)  # far past the 64 tokens tiny-bart reads
    window.pretrained.target_box.edit.setText(long_target)
    window.pretrained.target_box.edit.textEdited.emit(long_target)
    settle(qtbot, c)
    assert c.trace is not None and c.trace.n == 64 and c.error == ""
    assert "Target cut: kept the first 64 of" in window.status_line.toolTip() + window.status_line.text()
    assert window.heatmap.shown_matrix().shape == (64, c.trace.n_keys)
    c.set_sentence("")
    settle(qtbot, c)
    assert c.trace is None and c.error
    c.set_sentence(SOURCE)
    settle(qtbot, c)
    assert c.trace is not None


def test_a_one_text_model_after_it_hides_the_target_box_and_the_part(bart_window, qtbot):
    window, c = bart_window, bart_window.controller
    window.open_model("cat-sat-on-mat")
    QtWidgets.QApplication.processEvents()
    assert not c.is_real and not window.pretrained.target_box.isVisible()
    assert c.focus_role == LOOKING and c.trace.n_keys == c.trace.n
    window.open_model(str(Path(BART).parent / "tiny-bert"))  # a one-text real model: its own controls back
    qtbot.waitUntil(lambda: c.is_real and not c.busy)
    bar = window.pretrained.bar
    assert not c.is_encoder_decoder and not bar.part.isVisible() and not window.pretrained.target_box.isVisible()
    assert bar.merge.isEnabled() and "encoder–decoder" not in bar.merge.toolTip()
    assert window.pretrained.census.action.isEnabled()
    assert window.heatmap.plot.getAxis("left").labelText == "word looking"


def test_exports_draw_both_texts(bart_window, qtbot, tmp_path, monkeypatch):
    window, c = bart_window, bart_window.controller
    warnings = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda _parent, _title, text: warnings.append(text))
    type_target(qtbot, window, "a dog")
    assert window.export_to("heatmap", str(tmp_path / "cross.png"))
    facts = figure_facts(c)  # what an exported figure's caption says: both texts, and which attention
    assert caption(window._exports().state_for("heatmap"), facts).count("“a dog”") == 1
    assert "cross-attention: the target “a dog” reads the source" in facts.note
    assert window.pretrained.bar.note.toolTip() == facts.note or facts.note in window.pretrained.bar.note.text()
    assert window.export_to("grid-layers", str(tmp_path / "layers.png"))
    assert window.export_to("csv", str(tmp_path / "cross.csv"))
    header = (tmp_path / "cross.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[1:] == c.trace.looked_at_labels and len(header) - 1 == c.trace.n_keys
    assert window.export_to("json", str(tmp_path / "cross.json"))
    written = json.loads((tmp_path / "cross.json").read_text(encoding="utf-8"))
    assert written["key_labels"] == c.trace.looked_at_labels and written["labels"] == ["</s>", "<s>", "a", "dog"]
    # a word is named by its role: looking, a target's (a row); looked at, the source's (a column)
    assert c.trace.labels_of(looked_at=False) == written["labels"]
    assert c.trace.labels_of(looked_at=True) == written["key_labels"] != written["labels"]
    assert window.export_to("html", str(tmp_path / "cross.html"))
    page = page_data(tmp_path / "cross.html")  # the web page: target rows reading source columns
    assert page["labels"] == c.trace.labels and page["keyLabels"] == c.trace.looked_at_labels
    np.testing.assert_allclose(page["matrix"], c.trace.heads[0].weights, atol=page["step"])
    assert not warnings


def test_the_steps_frame_a_source_word_where_the_source_is(bart_window, qtbot):
    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, "a dog")
    window.steps_dock.show()
    window.timeline.go_to(step_index("kv"))
    QtWidgets.QApplication.processEvents()
    c.set_hovered(9, LOOKED_AT)  # "·mat" of the source: a row of H, K and V
    results = window.timeline.panel.results()
    assert results["k"].focus_mark() == (9, None) and results["v"].focus_mark() == (9, None)
    window.timeline.go_to(step_index("softmax"))
    QtWidgets.QApplication.processEvents()
    c.set_hovered(9, LOOKED_AT)
    assert window.timeline.panel.results()["weights"].focus_mark() == (None, 9)  # its column
    c.set_hovered(3, LOOKING)  # "dog" of the target: its row
    assert window.timeline.panel.results()["weights"].focus_mark() == (3, None)
    np.testing.assert_array_equal(window.row_bars.shown_row(), c.trace.heads[c.head].weights[3])


def test_a_target_typed_while_the_model_opens_again_is_the_one_read(bart_window, bart, qtbot):
    window, c = bart_window, bart_window.controller
    window.open_model(BART)
    type_target(qtbot, window, "a dog")  # the box is there: the model open before stays until the new one is in
    settle(qtbot, c)
    assert c.target == "a dog" and window.pretrained.target_box.edit.text() == "a dog"
    assert c.pretrained_trace.target == "a dog" and c.trace.n == 4
    np.testing.assert_array_equal(c.pretrained_trace.all_weights(), bart.run(SOURCE, "a dog").cross_attention)


def test_every_view_draws_what_a_fresh_one_draws_after_the_texts_and_parts_change(bart_window, qtbot):
    from view_twins import check_twin  # tests/ is on the path, as for the walk

    window, c = bart_window, bart_window.controller
    views = (window.heatmap, window.arcs, window.row_bars, window.timeline, window.chips,
             window.pretrained.model_view, window.pretrained.next_tokens)
    for target, part in (("a dog", "Cross-attention (target reads source)"), ("a", "Encoder self-attention"),
                         ("the cat sat on the mat and the dog", "Decoder self-attention (causal)"),
                         ("a dog sat", "Cross-attention (target reads source)")):
        type_target(qtbot, window, target)
        choose_part(qtbot, window, part)
        c.set_hovered(1, LOOKED_AT)
        QtWidgets.QApplication.processEvents()
        for view in views:
            check_twin(view, f"target {target!r}, {part}")


def test_a_focus_set_while_the_attention_changes_waits_for_its_lines(bart_window, qtbot):
    """A widget rebuilt under the mouse may set the focus while the controller announces another part, before
    the new trace reaches the arcs (whose lines were of eight heads, the encoder's four now)."""
    window, c = bart_window, bart_window.controller
    c.set_head(7)

    def hovered_meanwhile(_model):
        c.set_hovered(3, LOOKING)

    c.real_model_changed.connect(hovered_meanwhile)
    try:
        choose_part(qtbot, window, "Encoder self-attention")
    finally:
        c.real_model_changed.disconnect(hovered_meanwhile)
    assert c.head == 3 and (c.focus, c.focus_role) == (3, LOOKING)
    drawn = window.arcs.drawn_arcs()
    assert drawn and {looking for _head, looking, _at, _weight in drawn} == {3}
    assert {head for head, *_ in drawn} <= set(range(4))


def shown(window) -> tuple:
    """What the window shows of an encoder–decoder: texts, attention, layer, head and the heatmap."""
    c = window.controller
    return (c.sentence, c.target, c.part, c.layer, c.head, window.pretrained.target_box.edit.text(),
            window.pretrained.bar.part.currentData(), window.heatmap.row_labels(), window.heatmap.column_labels(),
            window.heatmap.shown_matrix().tolist())


def test_a_saved_view_reopens_in_a_fresh_window_with_its_target_and_attention(bart_window, qtbot, tmp_path,
                                                                              monkeypatch, settings):
    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, "a dog")
    choose_part(qtbot, window, "Decoder self-attention (causal)")
    c.set_layer(1)
    c.set_head(5)
    made = shown(window)
    path = tmp_path / "dog.aeview"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(path), ""))
    window.files.save_view_action.trigger()  # File ▸ Save view…
    assert path.exists() and read_view(path).target == "a dog" and read_view(path).part == "decoder"

    fresh = MainWindow(Controller(engine.load_builtin("cat-sat-on-mat"), "a cat", background=True), settings)
    qtbot.addWidget(fresh)
    fresh.resize(1280, 820)
    fresh.show()
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *_a, **_k: (str(path), ""))
    fresh.files.open_view_action.trigger()  # File ▸ Open view or figure…
    qtbot.waitUntil(lambda: fresh.controller.is_encoder_decoder and not fresh.controller.busy
                    and fresh.controller.layer == 1)
    QtWidgets.QApplication.processEvents()
    assert shown(fresh) == made
    assert fresh.controller.pretrained_trace.target == "a dog" and fresh.heatmap.shown_matrix().shape == (4, 4)
    fresh.controller.cancel()
    fresh.controller.wait_idle()


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_an_exported_figure_carries_the_target_and_attention_and_opens_them(bart_window, qtbot, tmp_path, suffix):
    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, "a dog")
    choose_part(qtbot, window, "Encoder self-attention")
    c.set_head(2)
    made = shown(window)
    figure = tmp_path / f"encoder{suffix}"
    assert window.export_to("heatmap", str(figure))
    state = read_view(figure)
    assert (state.sentence, state.target, state.part, state.head) == (SOURCE, "a dog", "encoder", 2)
    type_target(qtbot, window, "le chat")
    choose_part(qtbot, window, "Cross-attention (target reads source)")
    assert shown(window) != made
    assert window.files.open_path(str(figure))
    qtbot.waitUntil(lambda: not c.busy and c.part == "encoder" and c.pretrained_trace.target == "a dog")
    QtWidgets.QApplication.processEvents()
    assert shown(window) == made


def test_the_last_target_and_attention_come_back_at_the_next_start(bart_window, qtbot, settings):
    window = bart_window
    type_target(qtbot, window, "a dog")
    choose_part(qtbot, window, "Encoder self-attention")
    window.close()  # the settings are saved as the window closes
    again = MainWindow(Controller(background=True), settings)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitUntil(lambda: again.controller.is_encoder_decoder and not again.controller.busy
                    and again.controller.trace is not None)
    QtWidgets.QApplication.processEvents()
    restored = again.controller
    assert (restored.sentence, restored.target, restored.part) == (SOURCE, "a dog", "encoder")
    assert again.pretrained.target_box.edit.text() == "a dog"
    assert again.pretrained.bar.part.currentData() == "encoder"
    assert restored.pretrained_trace.target == "a dog" and restored.trace.n == len(restored.pretrained_trace.tokens)
    restored.cancel()
    restored.wait_idle()


def test_an_exported_cross_attention_heatmap_has_square_cells_and_no_empty_band(bart_window, qtbot, tmp_path):
    """3 target tokens under 11 source ones: the window's export is a short, wide picture whose cells
    are as wide as they are tall (before, the matrix sat at the top of a frame two thirds empty)."""
    window, c = bart_window, bart_window.controller
    window.sentence_box.setFocus()
    window.sentence_box.selectAll()
    QTest.keyClicks(window.sentence_box, "The cat sat on mat")
    settle(qtbot, c)
    type_target(qtbot, window, "L")
    assert (c.trace.n, c.trace.n_keys) == (3, 11)
    path = tmp_path / "cross.png"
    assert window.export_to("heatmap", str(path))
    image = QtGui.QImage(str(path))
    assert image.width() >= 560 and image.height() < 0.5 * image.width(), (image.width(), image.height())
    exports = window._exports()
    copy = exports.figure_copy()
    try:
        state = exports.state_for("heatmap")
        with built_figure(copy, state, FigureOptions(caption=False), figure_facts(copy)) as drawn:
            heatmap = drawn.pieces[0].widget.parentWidget()  # the figure's own heatmap, as it was painted
            width, height = heatmap.frame.cell_size()
            assert abs(width - height) < 0.5 and width >= 28, (width, height)
            assert heatmap.visible_cells() == (range(3), range(11))  # the whole matrix
            assert drawn.height < 0.5 * drawn.width and image.width() == round(drawn.width)
    finally:
        destroy_now(copy)


def test_the_note_under_the_model_view_keeps_its_wrapped_lines_when_squeezed(bart_window, qtbot):
    """At 1280 × 720 the splitter gave the note (what the next tokens listed are) the height of its least
    size, which leaves wrapping out: its lines were cut at their top and bottom."""
    window = bart_window
    window.resize(1280, 720)
    body, note = window.pretrained.body, window.pretrained.next_tokens
    body.setSizes([10_000, 1, 1])  # the model view's handle pulled down as far as it goes
    QtWidgets.QApplication.processEvents()
    title = note.title
    assert "target's last token" in title.text() and title.isVisible()
    assert title.height() >= title.heightForWidth(title.width()) > title.fontMetrics().height()


@pytest.mark.parametrize(("tokens", "hide_specials"), [(2, False), (1, True)])
def test_after_write_the_heatmap_draws_what_a_fresh_one_draws(bart_window, qtbot, tokens, hide_specials):
    """Found by the random walk: a written token's label (its ›) widened the row labels by a pixel, and
    the plot kept its old size (changes under half a pixel were let go), so its cells and colour bar
    stood 0.1 px taller than a heatmap built fresh on the same state, and the bar was drawn otherwise."""
    from view_twins import check_twin

    window, c = bart_window, bart_window.controller
    if hide_specials:
        window.pretrained.bar.hide_specials.click()
        settle(qtbot, c)
    box = window.pretrained.target_box
    box.tokens.setValue(tokens)
    QTest.mouseClick(box.write_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: c.target_written and not c.busy)
    QtWidgets.QApplication.processEvents()
    check_twin(window.heatmap, f"Write of {tokens} tokens")


def test_write_lets_the_model_write_the_target_and_the_views_show_it_read_as_written(bart_window, bart, qtbot):
    """Write (clicked, with 6 tokens asked for): the Target box holds what the model wrote, and the views
    show the decoder reading those tokens, marked as written, each row the step's own cross-attention;
    a target typed afterwards is read as typed again."""
    from attention_explorer.engine.pretrained.encoder_decoder_write import write_target
    from attention_explorer.engine.pretrained.generate import GenerationSettings
    from attention_explorer.engine.pretrained.tokenizing import WRITTEN_MARK

    window, c = bart_window, bart_window.controller
    box = window.pretrained.target_box
    assert box.write_button.isEnabled() and box.tokens.maximum() == 64  # tiny-bart's decoder reads 64 tokens
    box.tokens.setValue(6)
    box.write_button.click()
    qtbot.waitUntil(lambda: c.target_written is not None and not c.busy)
    QtWidgets.QApplication.processEvents()
    expected = write_target(bart, SOURCE, GenerationSettings(tokens=6))
    assert box.edit.text() == expected.written == c.target
    assert list(c.pretrained_trace.result.target_ids) == expected.read_ids.tolist()
    rows = window.heatmap.row_labels()
    assert len(rows) == len(expected.steps) and not rows[0].startswith(WRITTEN_MARK)
    assert all(label.lstrip("·").startswith(WRITTEN_MARK) for label in rows[1:])
    shown = window.heatmap.shown_matrix()
    np.testing.assert_allclose(shown, np.stack([s.cross_attention[0, 0] for s in expected.steps]), atol=1e-5)
    type_target(qtbot, window, "a dog")
    assert not c.target_written and not any(WRITTEN_MARK in label for label in window.heatmap.row_labels())


def test_the_export_dialog_names_a_hovered_source_word_past_the_target_s_last(bart_window, qtbot):
    """A source word hovered as the word looked at may stand past the target's last token: the dialog
    named it from the target's words, out of their range (an error dialog; X11 random walk, seed 72)."""
    from attention_explorer.views.export_dialog import QtExportDialog

    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, "a dog")
    c.set_hovered(9, LOOKED_AT)  # "·mat": a source token past the target's four
    shown = {}

    def read_and_cancel():
        dialog = next(w for w in QtWidgets.QApplication.topLevelWidgets()
                      if isinstance(w, QtExportDialog) and w.isVisible())
        shown["keep hover"] = dialog.keep_hover.text()
        dialog.reject()

    QtCore.QTimer.singleShot(0, read_and_cancel)
    window.export_dialog("csv")
    assert shown["keep hover"].endswith(f"(“{c.trace.looked_at_labels[9]}”)")


def test_the_bars_over_the_source_keep_their_width_as_their_pane_is_resized(bart_window, qtbot):
    """The bars of a target word stand on the source's words. Resized, their width was worked out for
    as many bars as the target has words (62 here, against the source's 10): 0.82 of a place against
    the 0.7 a redraw gives (an X11 random walk, seed 79)."""
    from attention_explorer.views.row_bars import BAR_SHARE, QtRowBars

    window, c = bart_window, bart_window.controller
    type_target(qtbot, window, " ".join(["a dog ran"] * 20))
    assert c.trace.n > 50 and c.trace.n_keys < 15
    bars = QtRowBars(c)
    qtbot.addWidget(bars)
    bars.resize(1200, 260)
    bars.show()
    qtbot.waitExposed(bars)
    c.set_hovered(3, LOOKING)
    QtWidgets.QApplication.processEvents()
    assert len(bars.shown_row()) == c.trace.n_keys
    for width in (180, 1200, 200):
        bars.resize(width, 260)
        QtWidgets.QApplication.processEvents()
        assert bars.bars.opts["width"] == BAR_SHARE == bars.focus_bar.opts["width"]
