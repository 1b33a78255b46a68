"""The census grid as the model view's cells: offered once the census measured the open model, chosen
from the Cells box as a user does, each cell coloured by its score on the grid's one scale, read out on
hover, exported as it is shown with the command that draws it again, and that command drawing the same
cells; a census of another model or a rerun leaves the cells to the weights."""

import shlex
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtGui
from PySide6.QtTest import QTest

pytest.importorskip("tokenizers")

from attention_explorer.cli import main as cli_main  # noqa: E402
from attention_explorer.figure_command import command_for  # noqa: E402
from attention_explorer.figure_options import FigureOptions  # noqa: E402
from attention_explorer.view_file import read_view  # noqa: E402
from attention_explorer.views.model_view import color_table  # noqa: E402
from census_helpers import run_census  # noqa: E402

MEASURE = "previous"
DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
GPT2 = str(DATA / "tiny-gpt2")
pytestmark = pytest.mark.usefixtures("own_data_folder")  # the census cache under tmp_path


def choose(box, data) -> None:
    """As a user picks from a combo: the index changes, then `activated`."""
    index = box.findData(data)
    assert index >= 0, [box.itemData(i) for i in range(box.count())]
    box.setCurrentIndex(index)
    box.activated.emit(index)


def cell_colour(view, layer: int, head: int) -> QtGui.QColor:
    """The colour painted at a cell's corner (its value is written in its middle)."""
    image = view.grid.grab().toImage()
    rect = view.cell_rect(layer, head)
    return image.pixelColor(int(rect.left()) + 3, int(rect.top()) + 3)


def expected_colour(result, layer: int, head: int, colormap: str) -> QtGui.QColor:
    colors = color_table(colormap)
    return QtGui.QColor.fromRgb(colors[int(round(result.grid(MEASURE)[layer, head] * (len(colors) - 1)))])


def test_the_cells_show_a_census_measure_once_it_is_measured(census_window, qtbot):
    window, census = census_window(GPT2)
    view = window.pretrained.model_view
    assert view.cells_box.count() == 2 and not view.cells_box.model().item(1).isEnabled()  # run it first
    run_census(qtbot, census)
    result = census.census.result
    labels = [view.cells_box.itemText(i) for i in range(view.cells_box.count())]
    assert labels[0] == "Weights on this text" and "Census: previous token" in labels
    choose(view.cells_box, MEASURE)
    assert view.census_choice().measure == MEASURE and view.census_cells.result is result
    colormap = window.controller.colormap
    for layer, head in ((0, 0), (1, 3)):
        shown, expected = cell_colour(view, layer, head), expected_colour(result, layer, head, colormap)
        assert max(abs(shown.red() - expected.red()), abs(shown.green() - expected.green()),
                   abs(shown.blue() - expected.blue())) <= 1, (layer, head, shown.name(), expected.name())
    assert "previous token score over" in view.caption.full_text()
    # hovering a cell reads its score, and focuses no word (a census cell is a head over many texts)
    rect = view.cell_rect(1, 2)
    QTest.mouseMove(view.grid, rect.center().toPoint())
    assert view.readout.full_text() == (f"L2 H3: previous token {result.grid(MEASURE)[1, 2]:.3f} "
                                   f"(mean of {int(result.counts[MEASURE][1, 2])} texts)")
    assert window.controller.hovered is None
    # back to the weights on the text
    choose(view.cells_box, None)
    assert view.census_cells is None and "its largest weight" in view.caption.full_text()


def test_the_census_figure_is_drawn_again_by_its_own_command(census_window, qtbot, tmp_path):
    window, census = census_window(GPT2)
    run_census(qtbot, census)
    view = window.pretrained.model_view
    choose(view.cells_box, MEASURE)
    path = tmp_path / "census.png"
    options = FigureOptions(caption=False)
    assert window.export_to("model", str(path), options=options)
    state = read_view(path)  # the view state the figure carries names the census, not its numbers
    assert state.census is not None and state.census.measure == MEASURE and state.view == "model"
    words = shlex.split(command_for(state, options, str(tmp_path / "again.png")))
    assert words[words.index("--census") + 1] == MEASURE and "--census-seed" not in words
    assert cli_main(words[1:]) == 0  # from the census cache the window filled
    first, second = QtGui.QImage(str(path)), QtGui.QImage(str(tmp_path / "again.png"))
    assert first.size() == second.size() and _pixels(first) == _pixels(second)


def test_another_census_or_model_gives_the_cells_back_to_the_weights(census_window, qtbot):
    window, census = census_window(GPT2)
    run_census(qtbot, census)
    view = window.pretrained.model_view
    choose(view.cells_box, MEASURE)
    census.census.set_settings(census.census.settings.__class__(seed=5))
    run_census(qtbot, census)  # another run: another result
    assert view.census_cells is None and view.cells_box.currentIndex() == 0
    choose(view.cells_box, MEASURE)
    window.controller.open_model(str(DATA / "tiny-llama"), "the cat sat")
    qtbot.waitUntil(lambda: not window.controller.busy and window.controller.real_model.name != "tiny-gpt2")
    assert view.census_cells is None and not view.cells_box.model().item(1).isEnabled()


def _pixels(image: QtGui.QImage) -> bytes:
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    return bytes(np.frombuffer(image.constBits(), np.uint8))
