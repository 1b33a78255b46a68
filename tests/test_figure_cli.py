"""`attention-explorer export` makes every picture the window makes: each figure option reaches the
file (read back from the view state it carries), options that change nothing are refused in one line,
and the installed command writes PDF, HTML, grids and print sizes, exiting 0 every time."""

import re
from typing import NamedTuple

import numpy as np
import pytest
from PIL import Image

from attention_explorer import engine
from attention_explorer.cli import main
from attention_explorer.figure_command import command_for
from attention_explorer.figure_options import FigureOptions
from attention_explorer.view_file import read_view
from test_entry_point import RUNS, run, run_repeatedly

BERT = "tests/engine/pretrained/data/tiny-bert"


class RealViewArgs(NamedTuple):
    """The two readings under test, as the view state names them."""

    hide_first: bool = False
    rollout: bool = False


def export(capsys, tmp_path, *argv, name="f.png"):
    target = tmp_path / name
    code = main(["export", *argv, "-o", str(target)])
    err = capsys.readouterr().err
    assert code == 0, err
    return target, err


def test_the_drawing_options_reach_the_figure(capsys, tmp_path):
    target, _ = export(capsys, tmp_path, "--colormap", "magma", "--span", "row", "--focus", "the₂:looked-at",
                       "--head", "2")
    state = read_view(target)
    assert (state.colormap, state.span, state.head) == ("magma", "row", 1)
    assert (state.focus.index, state.focus.role, state.focus.word) == (4, "looked_at", "the₂")


def test_a_word_is_found_by_its_label_or_as_typed(capsys, tmp_path):
    target, _ = export(capsys, tmp_path, "--focus", "SAT")
    assert read_view(target).focus.word == "sat" and read_view(target).focus.role == "looking"


def test_title_caption_theme_and_print_size(capsys, tmp_path):
    svg, _ = export(capsys, tmp_path, "--title", "Figure 1: who looks at whom", name="t.svg")
    text = svg.read_text()
    assert ">Figure 1: who looks at whom<" in text and "cat-sat-on-mat · “the cat sat on the mat”" in text
    with_caption, _ = export(capsys, tmp_path, name="a.png")
    without, _ = export(capsys, tmp_path, "--no-caption", name="b.png")
    assert Image.open(without).height < Image.open(with_caption).height
    dark, _ = export(capsys, tmp_path, "--theme", "dark", name="d.png")
    assert Image.open(dark).convert("RGB").getpixel((2, 2)) == (0x20, 0x21, 0x24)
    column, _ = export(capsys, tmp_path, "--width-cm", "8.5", "--dpi", "300", name="c.png")
    assert Image.open(column).width == 1004


def test_small_multiples_of_every_head_share_one_colour_bar(capsys, tmp_path):
    svg, _ = export(capsys, tmp_path, "--grid", "heads", name="g.svg")
    text = svg.read_text()
    assert ">head 1<" in text and ">head 2<" in text and len(re.findall(r">attention weight\s*<", text)) == 1
    assert read_view(svg).grid == "heads"


def test_a_real_models_reading_and_switched_off_heads_reach_the_figure_and_its_csv(capsys, tmp_path):
    pytest.importorskip("tokenizers")
    target, _ = export(capsys, tmp_path, "--model", BERT, "--layer", "2", "--head", "3", "--words",
                       "--hide-specials", "--ablate", "1:2,1:1", "--sentence", "the cat sat on the mat")
    state = read_view(target)
    assert state.real and (state.layer, state.head, state.ablated) == (1, 2, ((0, 0), (0, 1)))
    assert state.reading == {"words": True, "hide_specials": True, "hide_first": False, "rollout": False}
    assert len(state.model_sha256) == 64
    csv, _ = export(capsys, tmp_path, "--model", BERT, "--layer", "2", "--head", "3", "--words",
                    "--hide-specials", "--ablate", "1:2,1:1", "--sentence", "the cat sat on the mat", name="m.csv")
    from attention_explorer.engine.pretrained import open_pretrained
    from attention_explorer.pretrained_display import RealView, shown_trace

    model = open_pretrained(BERT)
    shown, _ = shown_trace(model.run("the cat sat on the mat", frozenset({(0, 0), (0, 1)})), 1,
                           RealView(merge_words=True, hide_specials=True))
    rows = [line.split(",") for line in csv.read_text().splitlines()]
    assert rows[0][1:] == shown.labels
    np.testing.assert_allclose(np.array([r[1:] for r in rows[1:]], dtype=float), shown.heads[2].weights, atol=1e-12)


@pytest.mark.parametrize("flag, view, caption", [
    ("--hide-first", RealViewArgs(hide_first=True), "hidden: [CLS]"),
    ("--rollout", RealViewArgs(rollout=True), "rollout: the heads averaged with the residual"),
])
def test_hide_first_and_rollout_reach_the_figure_its_caption_and_its_csv(capsys, tmp_path, flag, view, caption):
    pytest.importorskip("tokenizers")
    from attention_explorer.engine.pretrained import open_pretrained
    from attention_explorer.pretrained_display import RealView, shown_trace

    argv = ("--model", BERT, "--layer", "2", "--head", "2", flag, "--sentence", "the cat sat on the mat")
    svg, _ = export(capsys, tmp_path, *argv, name="f.svg")
    state = read_view(svg)
    assert state.reading == {"words": False, "hide_specials": False, **view._asdict()}
    assert caption in re.search(r"<desc>(.*)</desc>", svg.read_text()).group(1)
    if view.rollout:  # the colour bar says what its numbers are
        assert re.search(r">rollout weight\s*<", svg.read_text())
    csv, _ = export(capsys, tmp_path, *argv, name="m.csv")
    shown, _ = shown_trace(open_pretrained(BERT).run("the cat sat on the mat"), 1, RealView(**view._asdict()))
    rows = [line.split(",") for line in csv.read_text().splitlines()]
    assert rows[0][1:] == shown.labels and len(rows) == 1 + shown.n
    np.testing.assert_allclose(np.array([r[1:] for r in rows[1:]], dtype=float), shown.heads[1].weights, atol=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["--colormap", "magma", "-o", "x.csv"], "--colormap changes a picture; a CSV holds the numbers"),
    (["--words", "-o", "x.png"], "--words applies to real models"),
    (["--ablate", "1:1", "-o", "x.png"], "--ablate applies to real models"),
    (["--span", "row", "--view", "arcs", "-o", "x.png"], "--span chooses what the heatmap's weights"),
    (["--strongest", "3", "-o", "x.png"], "--all-heads and --strongest choose the arcs' lines"),
    (["--grid", "layers", "-o", "x.png"], "a toy model has one layer"),
    (["--grid", "heads", "--view", "arcs", "-o", "x.png"], "--grid sets heatmaps side by side"),
    (["--theme", "dark", "--transparent", "-o", "x.png"], "--transparent is --theme transparent-light"),
    (["--dpi", "300", "-o", "x.png"], "give --width-cm too"),
    (["--width-cm", "8.5", "--width-px", "900", "-o", "x.png"], "both set the size"),
    (["--width-cm", "500", "-o", "x.png"], "a print width must be from 2 to 100 cm"),
    (["--width-px", "800", "-o", "x.pdf"], "--width-px sets a PNG's or SVG's width"),
    (["--view", "arcs", "-o", "x.html"], "the interactive page (.html) is the heatmap"),
    (["--focus", "", "-o", "x.png"], "--focus needs a word"),
    (["--focus", "zebra", "-o", "x.png"], "there is no word 'zebra' to focus on here"),
    (["--view", "bars", "-o", "x.png"], "the bars show one word's weights: pin a word"),
    (["-o", "x.docx"], "end it in .csv, .png, .svg, .pdf, .html or .gif"),
])
def test_options_that_do_not_fit_are_one_line_and_nothing_is_written(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code = main(["export", *argv])
    err = capsys.readouterr().err
    assert code in (1, 2) and message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_a_long_text_is_drawn_whole_not_the_corner_the_window_opens_on(qapp, tmp_path):
    """320 words: more than fit at a readable cell size, so the heatmap zooms in the window; a figure
    holds every row and column (its labels thinned) and says nothing is left out."""
    from attention_explorer.controller import Controller
    from attention_explorer.figure import built_figure
    from attention_explorer.figure_controller import capture_state, figure_facts
    from attention_explorer.figure_options import FigureOptions
    from attention_explorer.headless import destroy_now

    words = " ".join(("the cat sat on the mat " * 60).split()[:320])
    controller = Controller(engine.load_builtin("cat-sat-on-mat"), words)
    try:
        state = capture_state(controller, "heatmap")
        with built_figure(controller, state, FigureOptions(), figure_facts(controller)) as figure:
            heatmap = figure.pieces[0].widget.parentWidget()
            rows, cols = heatmap.visible_cells()
            assert (len(rows), len(cols)) == (320, 320)
            assert "part shown" not in figure.caption
    finally:
        destroy_now(controller)


def test_the_model_view_draws_norm_based_attention_from_the_command_line(capsys, tmp_path):
    pytest.importorskip("tokenizers")
    drawn = {matrix: export(capsys, tmp_path, "--model", BERT, "--view", "model", "--matrix", matrix,
                            name=f"{matrix}.png")[0] for matrix in ("weights", "norm")}
    state = read_view(drawn["norm"])
    assert (state.view, state.matrix) == ("model", "norm")
    assert "--matrix norm" in command_for(state, FigureOptions(), "model.png")
    assert "--matrix" not in command_for(read_view(drawn["weights"]), FigureOptions(), "model.png")
    assert not np.array_equal(np.asarray(Image.open(drawn["norm"])), np.asarray(Image.open(drawn["weights"])))


# --- the installed command -----------------------------------------------------------------------------

SHAPES = [
    (["export", "--view", "heatmap", "--focus", "sat", "--title", "T"], "heatmap.pdf"),
    (["export", "--view", "arcs", "--theme", "transparent-dark"], "arcs.pdf"),
    (["export", "--view", "steps", "--step", "softmax"], "steps.pdf"),
    (["export", "--grid", "heads", "--width-cm", "17"], "heads.png"),
    (["export", "--sentence", "the cat sat on the mat"], "page.html"),
    (["export", "--model", BERT, "--view", "model", "--hide-specials"], "model.pdf"),
    (["export", "--model", BERT, "--grid", "layers", "--words"], "layers.svg"),
]


@pytest.mark.parametrize("argv, output", SHAPES, ids=[name for _, name in SHAPES])
def test_the_installed_command_writes_every_new_kind_of_figure_and_exits_0_every_time(argv, output, tmp_path):
    if BERT in argv:
        pytest.importorskip("tokenizers")
        argv = [str(arg).replace(BERT, str(__import__("pathlib").Path(BERT).resolve())) for arg in argv]
    for attempt, (folder, result) in enumerate(run_repeatedly([*argv, "-o", output], tmp_path, RUNS), start=1):
        assert result.returncode == 0 and "Traceback" not in result.stderr, \
            f"run {attempt} of {RUNS} exited {result.returncode}: {result.stderr.strip()[-600:]}"
        assert [p.name for p in folder.iterdir()] == [output]
        written = folder / output
        assert written.stat().st_size > 1000
        if output.endswith((".png", ".svg", ".pdf")):
            assert read_view(written).view in ("heatmap", "arcs", "steps", "model")


def test_the_installed_command_refuses_a_bad_option_in_one_line(tmp_path):
    result = run(["export", "--focus", "zebra", "-o", "x.png"], tmp_path)
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1 and "zebra" in result.stderr
