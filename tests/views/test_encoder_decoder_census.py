"""The head census of an encoder–decoder (the tiny BART checkpoint) from its window, as a user runs it:
View ▸ Head census… measures the attention the main window shows, says which measures do not apply to
it, opens a head on its best example as both texts, and a part chosen in the main window is another
census. The scores themselves are checked against the runs in tests/engine/census."""

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer.engine.census import builtin_battery, subject_for  # noqa: E402
from attention_explorer.engine.census import run_census as census_of
from attention_explorer.engine.pretrained.encoder_decoder_view import EncoderDecoderPart  # noqa: E402
from bart_window import BART, choose_part  # noqa: E402
from census_helpers import run_census  # noqa: E402
from gui_helpers import hover_cell  # noqa: E402

pytestmark = pytest.mark.usefixtures("own_data_folder")  # the census cache under tmp_path


def colour_by(census, measure: str) -> None:
    index = census.measure_box.findData(measure)
    census.measure_box.setCurrentIndex(index)
    census.measure_box.activated.emit(index)
    QtWidgets.QApplication.processEvents()


def test_the_census_measures_cross_attention_and_says_what_does_not_apply(census_window, bart, qtbot):
    window, census = census_window(BART)
    entry = window.pretrained.census.action
    assert entry.isEnabled() and "encoder–decoder: the attention shown" in entry.toolTip()
    run_census(qtbot, census)
    result = census.census.result
    assert census.windowTitle() == "Head census — tiny-bart (cross-attention)"
    assert (result.n_layers, result.n_heads) == (2, 8)
    subject = subject_for(EncoderDecoderPart(bart, "cross"))
    expected = census_of(subject, builtin_battery(subject))
    assert census.census.measure == "sink"  # induction, the first choice, does not apply: the first that does
    np.testing.assert_allclose(census.view.plot.shown_matrix(), expected.grid("sink"), atol=1e-12)
    colour_by(census, "cross_next")
    np.testing.assert_allclose(census.view.plot.shown_matrix(), expected.grid("cross_next"), atol=1e-12)
    best = expected.ranked("cross_next")[0]
    assert census.view.ranked.item(0).text().startswith(f"L{best.layer + 1} H{best.head + 1}")
    colour_by(census, "previous")
    message = census.view.plot.message.text()
    assert message.startswith("previous token does not apply to tiny-bart (cross-attention): within one text only")
    assert census.view.ranked.count() == 0


def test_a_head_opens_on_its_best_example_as_source_and_target(census_window, qtbot):
    window, census = census_window(BART)
    run_census(qtbot, census)
    colour_by(census, "cross_next")
    best = census.census.result.ranked("cross_next")[0]
    point = hover_cell(census.view.plot, best.layer, best.head)
    QTest.mouseClick(census.view.plot.graphics.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point)
    c = window.controller
    qtbot.waitUntil(lambda: not c.busy)
    example = census.census.result.best_example("cross_next", best.layer, best.head)[0]
    assert c.sentence == example and c.target == example
    assert window.pretrained.target_box.edit.text() == example
    assert (c.layer, c.head, c.part) == (best.layer, best.head, "cross")


def test_another_attention_in_the_main_window_is_another_census(census_window, qtbot):
    window, census = census_window(BART)
    run_census(qtbot, census)
    choose_part(qtbot, window, "Encoder self-attention")
    assert census.census.result is None and "Run the census" in census.view.plot.message.text()
    run_census(qtbot, census)
    result = census.census.result
    assert census.windowTitle() == "Head census — tiny-bart (encoder self-attention)"
    assert (result.n_layers, result.n_heads) == (2, 4) and set(result.not_applicable) == {"cross_own", "cross_next"}
    colour_by(census, "previous")
    assert np.isfinite(census.view.plot.shown_matrix()).all()
    colour_by(census, "cross_own")
    assert "does not apply to tiny-bart (encoder self-attention): cross-attention only" in \
        census.view.plot.message.text()
