"""The readings on an encoder–decoder (the tiny BART checkpoint), clicked in the real-model bar as a user
clicks them: Words, Hide specials, Hide first token on each of its three attentions, and Rollout on the
encoder's and the decoder's self-attention (not on cross-attention, whose box says why).

Every number shown is checked against weights worked out here, with plain loops, from the engine's own
run of the two texts (`model.run(source, target)`), not through the readings' code: a word's row is the
mean over its pieces of the sum over the looked-at word's pieces; a hidden token's row and column go and
each row left is divided by what it kept; rollout multiplies (mean of the heads + I, rows normalised)
through the layers. Cross-attention's rows follow the target's words and specials, its columns the
source's."""

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer.controller import LOOKED_AT  # noqa: E402
from attention_explorer.engine.tokenizer import token_labels  # noqa: E402
from bart_window import SOURCE, choose_part, type_target  # noqa: E402
from gui_helpers import hover_cell  # noqa: E402
from reading_oracle import hidden, merged, merged_labels, not_special, rollout, words_of  # noqa: E402

TARGET = "unbelievably, a dog sat"  # the tiny tokenizer cuts "unbelievably" into twelve pieces
CROSS, ENCODER, DECODER = ("Cross-attention (target reads source)", "Encoder self-attention",
                           "Decoder self-attention (causal)")


def toggle(qtbot, window, box) -> None:
    """Click a reading's check box as a user does, and let the window redraw."""
    box.click()
    qtbot.waitUntil(lambda: not window.controller.busy)
    QtWidgets.QApplication.processEvents()


def shown(window, layer: int, head: int) -> np.ndarray:
    c = window.controller
    c.set_layer(layer)
    c.set_head(head)
    QtWidgets.QApplication.processEvents()
    return window.heatmap.shown_matrix()


@pytest.fixture
def on_target(bart_window, bart, qtbot):
    type_target(qtbot, bart_window, TARGET)
    return bart_window, bart.run(SOURCE, TARGET)


def test_words_merge_cross_attention_s_target_rows_and_source_columns(on_target, qtbot):
    window, run = on_target
    bar = window.pretrained.bar
    assert bar.merge.isEnabled() and bar.hide_specials.isEnabled() and bar.hide_first.isEnabled()
    toggle(qtbot, window, bar.merge)
    target, source = list(run.target.labels), list(run.source.labels)
    rows, cols = words_of(target), words_of(source)
    assert window.heatmap.row_labels() == merged_labels(target, rows) == ["</s>", "<s>", "unbelievably", ",", "a",
                                                                          "dog", "sat"]
    assert window.heatmap.column_labels() == merged_labels(source, cols)
    weights = shown(window, 1, 5)
    expected = merged(run.cross_attention[1, 5], rows, cols)
    np.testing.assert_allclose(weights, expected, atol=1e-6)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)  # a word's row still sums to 1
    assert [chip.text() for chip in window.chips.chips] == window.heatmap.row_labels()
    assert f"{len(target)} target × {len(source)} source tokens" in window.status_line.text()  # the run's own
    assert "words: a word looks with the mean of its pieces" in window.pretrained.bar.note.toolTip() + \
        window.pretrained.bar.note.text()
    # the readout writes the weight out from the pieces: "unbelievably" (12 pieces) reading "sat" (2)
    looking, looked_at = 2, window.heatmap.column_labels().index("sat")
    hover_cell(window.heatmap, looking, looked_at)
    readout = window.heatmap.readout.full_text()
    assert readout.startswith(f"unbelievably → sat {expected[looking, looked_at] * 100:.1f} % — words: ")
    assert "each of unbelievably's 12 pieces summed over sat's, then averaged" in readout


def test_hiding_specials_or_the_first_token_hides_them_on_both_texts(on_target, qtbot):
    window, run = on_target
    bar = window.pretrained.bar
    target, source = list(run.target.labels), list(run.source.labels)
    toggle(qtbot, window, bar.hide_specials)
    rows, cols = not_special(target), not_special(source)
    assert window.heatmap.row_labels() == token_labels([target[i] for i in rows])
    assert window.heatmap.column_labels() == token_labels([source[i] for i in cols])
    # the target's specials keep their chips, left out, where they stand; the others are the rows
    chips = window.chips.chips
    assert [chip.left_out for chip in chips] == [i not in rows for i in range(len(target))]
    assert [chip.text() for chip in chips if not chip.left_out] == window.heatmap.row_labels()
    assert [chip.token_index for chip in chips if not chip.left_out] == list(range(len(rows)))
    weights = shown(window, 0, 3)
    np.testing.assert_allclose(weights, hidden(run.cross_attention[0, 3], rows, cols), atol=1e-6)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)
    assert "&lt;/s&gt;, &lt;s&gt; hidden" in window.heatmap.title_item.text  # shown as written, not as markup
    share = np.mean([[1 - run.cross_attention[0, h, i, cols].sum() for i in rows] for h in range(8)])
    assert f"hidden: </s>, <s> — they had {share:.0%} of the weight on average" in bar.note.toolTip() + \
        bar.note.text()
    toggle(qtbot, window, bar.hide_specials)
    toggle(qtbot, window, bar.hide_first)  # the target's first token (the decoder's start, </s>), the source's <s>
    rows, cols = list(range(1, len(target))), list(range(1, len(source)))
    assert window.heatmap.row_labels()[0] == "<s>" and window.heatmap.column_labels()[0] == "the₁"
    np.testing.assert_allclose(shown(window, 1, 7), hidden(run.cross_attention[1, 7], rows, cols), atol=1e-6)
    # both, then words: the hidden tokens go first, then the pieces left are merged
    toggle(qtbot, window, bar.hide_specials)
    toggle(qtbot, window, bar.merge)
    rows, cols = not_special(target), not_special(source)
    kept = hidden(run.cross_attention[1, 2], rows, cols)
    row_words = words_of([target[i] for i in rows])
    col_words = words_of([source[i] for i in cols])
    np.testing.assert_allclose(shown(window, 1, 2), merged(kept, row_words, col_words), atol=1e-6)
    assert window.heatmap.row_labels() == ["unbelievably", ",", "a", "dog", "sat"]


def test_the_readings_read_the_encoder_s_and_the_decoder_s_self_attention(on_target, qtbot):
    window, run = on_target
    bar = window.pretrained.bar
    choose_part(qtbot, window, ENCODER)
    toggle(qtbot, window, bar.merge)
    toggle(qtbot, window, bar.hide_specials)
    source = list(run.source.labels)
    keep = not_special(source)
    words = words_of([source[i] for i in keep])
    expected = merged(hidden(run.encoder_attention[1, 2], keep, keep), words, words)
    np.testing.assert_allclose(shown(window, 1, 2), expected, atol=1e-6)
    assert window.heatmap.row_labels() == window.heatmap.column_labels() == \
        merged_labels([source[i] for i in keep], words)
    choose_part(qtbot, window, DECODER)
    target = list(run.target.labels)
    keep = not_special(target)
    words = words_of([target[i] for i in keep])
    expected = merged(hidden(run.decoder_attention[0, 6], keep, keep), words, words)
    weights = shown(window, 0, 6)
    np.testing.assert_allclose(weights, expected, atol=1e-6)
    assert np.all(np.triu(weights, 1) == 0)  # a word reads no later word: still causal
    c = window.controller
    assert c.trace.mask is not None and c.trace.mask.shape == (len(words),) * 2 and c.trace.mask[0, 1]


def test_rollout_rolls_each_stack_out_and_is_off_for_cross_attention(on_target, qtbot):
    window, run = on_target
    bar = window.pretrained.bar
    assert not bar.rollout.isEnabled() and "Not for cross-attention" in bar.rollout.toolTip()
    choose_part(qtbot, window, ENCODER)
    assert bar.rollout.isEnabled() and "Abnar & Zuidema" in bar.rollout.toolTip()
    toggle(qtbot, window, bar.rollout)
    for layer in (0, 1):
        np.testing.assert_allclose(shown(window, layer, 1), rollout(run.encoder_attention, layer), atol=1e-6)
    assert window.heatmap.title().startswith("attention rollout up to layer 2 (all heads)")
    choose_part(qtbot, window, DECODER)
    expected = rollout(run.decoder_attention, 1)
    weights = shown(window, 1, 0)
    np.testing.assert_allclose(weights, expected, atol=1e-6)
    assert np.all(np.triu(weights, 1) == 0)  # causal weights roll out causally
    choose_part(qtbot, window, CROSS)  # the choice stays for the stacks; cross-attention shows its own heads
    assert bar.rollout.isChecked() and not bar.rollout.isEnabled()
    np.testing.assert_allclose(shown(window, 1, 4), run.cross_attention[1, 4], atol=1e-6)
    assert "no rollout for cross-attention" in bar.note.toolTip() + bar.note.text()
    assert window.controller.trace.reading is None


def test_the_model_view_reads_every_head_as_the_heatmap_does(on_target, qtbot):
    window, run = on_target
    bar = window.pretrained.bar
    toggle(qtbot, window, bar.merge)
    toggle(qtbot, window, bar.hide_first)
    view = window.pretrained.model_view
    rows, cols = window.heatmap.row_labels(), window.heatmap.column_labels()
    image = view.images[(1, 5)]
    assert (image.width(), image.height()) == (len(cols), len(rows))
    weights = shown(window, 1, 5)
    rect = view.cell_rect(1, 5)  # the mouse over the cell's last row, third column
    QTest.mouseMove(view.grid, QtCore.QPoint(int(rect.left() + 2.5 * rect.width() / len(cols)),
                                             int(rect.bottom() - 2)))
    QtWidgets.QApplication.processEvents()
    assert view.readout.full_text().startswith(f"layer 2, head 6: {rows[-1]} → {cols[2]}")
    assert f"{weights[-1, 2]:.3f}" in view.readout.full_text()


def test_every_view_draws_what_a_fresh_one_draws_under_each_reading(on_target, qtbot):
    from view_twins import check_twin  # tests/ is on the path, as for the walk

    window, _run = on_target
    bar, c = window.pretrained.bar, window.controller
    views = (window.heatmap, window.arcs, window.row_bars, window.timeline, window.chips,
             window.pretrained.model_view)
    for box, part in ((bar.merge, CROSS), (bar.hide_specials, CROSS), (bar.hide_first, ENCODER),
                      (bar.rollout, DECODER), (bar.merge, CROSS), (bar.rollout, ENCODER)):
        choose_part(qtbot, window, part)
        toggle(qtbot, window, box)
        c.set_hovered(1, LOOKED_AT)
        QtWidgets.QApplication.processEvents()
        for view in views:
            check_twin(view, f"{box.text()} clicked on {part}")
