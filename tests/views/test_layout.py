"""Readable at every size: on 1280×720, 1400×900 and 1920×1080 screens the window and the lessons fit
the screen, the heatmap's cells are square and large enough, and Copy image stays on the toolbar.
Each size runs in its own process (layout_probe.py), since the offscreen screen is fixed at start."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attention_explorer import engine

PROBE = Path(__file__).with_name("layout_probe.py")
SIZES = [(1280, 720), (1400, 900), (1920, 1080)]


def forty_words() -> str:
    vocabulary = list(engine.load_builtin("cat-sat-on-mat").vocabulary)
    return " ".join(vocabulary[(7 * i) % len(vocabulary)] for i in range(40))


@pytest.fixture(scope="module", params=SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def measured(request, tmp_path_factory):
    width, height = request.param
    folder = tmp_path_factory.mktemp(f"screen{width}")
    screen = folder / "screen.json"
    screen.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": width, "height": height,
                                               "logicalDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen}")
    run = subprocess.run([sys.executable, str(PROBE), str(folder / "settings.ini"), forty_words()],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_window_and_the_lessons_fit_the_screen(measured):
    assert measured["window_inside"]
    assert measured["lessons_inside"]
    assert measured["copy_visible"], "Copy image is on the toolbar, not in its overflow"


def test_every_lesson_fits_the_window_without_scrolling(measured):
    """Their plots shrink to the window instead (at 1280×720 almost every lesson scrolled)."""
    assert measured["lessons_scroll"] == {key: 0 for key in measured["lessons_scroll"]}


def test_no_lesson_plot_title_is_cut(measured):
    assert measured["lessons_cut_titles"] == []


def test_the_default_sentence_gets_square_cells_of_at_least_28_px(measured):
    cell = measured["default"]
    assert abs(cell["cell_w"] - cell["cell_h"]) < 0.5, "cells are square"
    assert cell["cell_w"] >= 28
    assert not cell["zoomable"] and cell["visible_rows"] == cell["visible_cols"] == 6


def test_a_forty_word_sentence_stays_readable_zoomed_in_if_it_must(measured):
    cell = measured["long"]
    assert abs(cell["cell_w"] - cell["cell_h"]) < 0.5
    assert cell["cell_w"] >= 12
    if cell["zoomable"]:
        assert cell["visible_rows"] < 40  # zoomed in on part of it; Fit shows all
    else:
        assert cell["visible_rows"] == cell["visible_cols"] == 40


def test_short_screens_fold_the_step_tables_and_tall_ones_show_them(measured):
    assert measured["tables_shown"] == (measured["screen"][1] >= 1000)


def test_opened_step_tables_take_at_most_two_fifths_of_the_window(measured):
    assert measured["tables_share"] <= 0.4  # a floor above that left a 110-pixel heatmap at 1280×720


def test_opened_step_tables_show_every_row_and_the_whole_result_from_1400_wide(measured):
    if measured["screen"][0] < 1400:
        pytest.skip("at 1280 the step's three tables scroll sideways")
    horizontal, vertical = measured["tables_scroll"]
    assert horizontal == 0 and vertical <= 30  # at most a few pixels of the last row's border
    assert measured["tables_cell"] >= 20  # and the heatmap keeps readable cells
