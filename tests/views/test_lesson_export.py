"""The lessons' plots as one figure (Ctrl+E in the Lessons window): every plot of the open lesson at
its place, drawn alike by Qt and librsvg."""

import shutil

import pytest
from PIL import Image
from PySide6 import QtWidgets

from attention_explorer.figure_options import FigureOptions
from attention_explorer.view_file import read_view
from figure_compare import difference, rsvg, save_diff


@pytest.mark.parametrize("lesson", ["scaling", "heads", "word_order", "cost"])
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
    if shutil.which("rsvg-convert"):  # at 1×, as the figures' own comparisons (see test_figure_renderers)
        for suffix in (".png", ".svg"):
            assert window.lesson_export.export_to(str(tmp_path / f"one{suffix}"), FigureOptions())
        png = Image.open(tmp_path / "one.png")
        drawn = rsvg(tmp_path / "one.svg", tmp_path / "rsvg.png", png.width)
        found = difference(png, drawn)
        if found.differing > 0.03 or found.worst_block > 0.5:
            pytest.fail(f"librsvg draws the lesson otherwise: {found}; see {save_diff(png, drawn, tmp_path / 'd.png')}")
