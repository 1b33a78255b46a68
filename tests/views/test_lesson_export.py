"""The lessons' plots as one figure (Ctrl+E in the Lessons window): every plot of the open lesson at
its place, drawn alike by Qt and by the programs other than Qt that the figures are checked with
(librsvg and Chromium for the SVG, poppler for the PDF; see test_figure_renderers)."""

import shutil

import pytest
from PIL import Image
from PySide6 import QtWidgets

from attention_explorer.figure_options import FigureOptions
from attention_explorer.view_file import read_view
from chromium import chromium_path
from figure_compare import assert_alike, pdftoppm, rsvg

LESSONS = ["scaling", "heads", "word_order", "cost"]


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_lessons_plots_export_as_png_svg_and_pdf(make_window, tmp_path, monkeypatch, lesson):
    window = make_window()
    window.show_lesson(lesson)
    QtWidgets.QApplication.processEvents()
    for suffix, name_filter in ((".png", "PNG image (*.png)"), (".svg", "SVG image (*.svg)"),
                                (".pdf", "PDF document (*.pdf)")):
        monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName",
                            lambda *_a, f=name_filter: (str(tmp_path / "plots"), f))
        window.lesson_export.action.trigger()
        assert (tmp_path / f"plots{suffix}").stat().st_size > 5000
    assert read_view(tmp_path / "plots.png").model == "cat-sat-on-mat"
    assert ">Lesson " in (tmp_path / "plots.svg").read_text()


RENDERERS = {"librsvg": ("svg", shutil.which("rsvg-convert"), "rsvg-convert (librsvg2-bin) missing"),
             "Chromium": ("svg", chromium_path(), "chromium is not installed"),
             "pdftoppm": ("pdf", shutil.which("pdftoppm"), "pdftoppm (poppler-utils) missing")}


@pytest.mark.parametrize("who", list(RENDERERS))
@pytest.mark.parametrize("lesson", LESSONS)
def test_other_programs_draw_the_lessons_plots_as_qt_draws_them(make_window, request, tmp_path, lesson, who):
    kind, installed, missing = RENDERERS[who]
    if installed is None:
        pytest.skip(missing)
    window = make_window()
    window.show_lesson(lesson)
    QtWidgets.QApplication.processEvents()
    for suffix in (".png", f".{kind}"):  # at 1×, as the figures' own comparisons
        assert window.lesson_export.export_to(str(tmp_path / f"plots{suffix}"), FigureOptions())
    png = Image.open(tmp_path / "plots.png")
    if who == "librsvg":
        drawn = rsvg(tmp_path / "plots.svg", tmp_path / "drawn.png", png.width)
    elif who == "pdftoppm":
        drawn = pdftoppm(tmp_path / "plots.pdf", tmp_path / "drawn", 96)
    else:
        browser = request.getfixturevalue("browser")
        browser.open((tmp_path / "plots.svg").as_uri(), png.width, png.height)
        (tmp_path / "drawn.png").write_bytes(browser.screenshot())
        drawn = Image.open(tmp_path / "drawn.png")
    assert_alike(png, drawn, tmp_path / "diff.png", who, kind)
