"""Exports from the window, driven as a user drives them (the Export dialog's own widgets, the Save
dialog answered), and settings across restarts. A figure made in the window and its command-line
twin (the command the dialog shows, run as the installed program) are the same picture."""

import csv
import json
import shlex
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer.app import MainWindow
from attention_explorer.controller import LOOKED_AT, Controller
from attention_explorer.figure_options import FigureOptions
from attention_explorer.view_file import read_view
from attention_explorer.views.export_dialog import QtExportDialog
from figure_compare import pdftoppm
from gui_helpers import hover_cell
from test_entry_point import run

BERT = str(Path("tests/engine/pretrained/data/tiny-bert").resolve())
BART = str(Path("tests/engine/pretrained/data/tiny-bart").resolve())


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    return struct.unpack(">II", data[16:24])


def pixels(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGBA"), dtype=np.int16)


@pytest.fixture
def save_as(monkeypatch):
    """Answer the Save dialog with `name` and the file type `chosen`; record where it opened."""
    asked = []

    def answer(name, chosen: str = ""):
        def dialog(_parent, _title, start, filters, selected):
            asked.append((start, filters, selected))
            return str(name), chosen or selected
        monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", dialog)
    answer.asked = asked
    return answer


def use_dialog(window, kind="heatmap", **choices):
    """Open the Export dialog from the menu, set its widgets as a user would, press Save; return the
    command it showed."""
    shown = {}

    def drive():
        dialog = next(w for w in QtWidgets.QApplication.topLevelWidgets()
                      if isinstance(w, QtExportDialog) and w.isVisible())
        for name, value in choices.items():
            widget = getattr(dialog, name)
            if isinstance(widget, QtWidgets.QComboBox):
                widget.setCurrentIndex(widget.findData(value))
            elif isinstance(widget, QtWidgets.QCheckBox):
                widget.setChecked(value)
            elif isinstance(widget, QtWidgets.QLineEdit):
                widget.clear()
                QTest.keyClicks(widget, value)
            else:
                widget.setValue(value)
        shown["command"] = dialog.command.text()
        shown["kind"] = dialog.chosen().kind
        save = dialog.findChild(QtWidgets.QDialogButtonBox).button(QtWidgets.QDialogButtonBox.StandardButton.Save)
        QTest.mouseClick(save, QtCore.Qt.MouseButton.LeftButton)

    QtCore.QTimer.singleShot(0, drive)
    window.export_dialog(kind)
    return shown


def test_the_chosen_file_type_wins_when_the_name_has_no_ending(make_window, save_as, tmp_path):
    window = make_window()
    save_as(tmp_path / "figure", "SVG image (*.svg)")
    use_dialog(window, "heatmap")
    assert [p.name for p in tmp_path.iterdir()] == ["figure.svg"]
    assert (tmp_path / "figure.svg").read_text().lstrip().startswith("<?xml")


def test_the_save_dialog_opens_on_a_default_name_in_the_folder_last_used_for_that_kind(make_window, save_as,
                                                                                      tmp_path):
    window = make_window()
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir(), second.mkdir()
    save_as(first / "h.png")
    use_dialog(window, "heatmap")
    save_as(second / "a.png")
    use_dialog(window, "arcs")
    save_as(first / "h2.png")
    use_dialog(window, "heatmap")
    starts = [Path(start) for start, _filters, _selected in save_as.asked]
    assert starts[0].name == "cat-sat-on-mat-heatmap-head1-the-cat-sat.png"
    assert starts[1].parent != first and starts[1].name == "cat-sat-on-mat-arcs-head1-the-cat-sat.png"
    assert starts[2].parent == first  # the heatmap's folder, not the arcs'
    assert Path(window.settings.value("export/folder/arcs")) == second


def test_a_figure_leaves_out_the_passing_hover_unless_asked(make_window, save_as, tmp_path):
    window = make_window()
    hover_cell(window.heatmap, 2, 1)  # the mouse crossing the heatmap on its way to the menu
    assert window.controller.hovered == 2
    save_as(tmp_path / "plain.png")
    use_dialog(window, "heatmap")
    assert read_view(tmp_path / "plain.png").focus is None
    hover_cell(window.heatmap, 2, 1)
    save_as(tmp_path / "hovered.png")
    use_dialog(window, "heatmap", keep_hover=True)
    assert read_view(tmp_path / "hovered.png").focus.word == "sat"
    window.controller.set_hovered(None)
    save_as(tmp_path / "none.png")
    use_dialog(window, "heatmap")
    assert np.array_equal(pixels(tmp_path / "plain.png"), pixels(tmp_path / "none.png"))


def test_the_part_on_screen_is_drawn_and_named_when_asked(make_window, save_as, tmp_path, monkeypatch):
    window = make_window(sentence=" ".join(("the cat sat on the mat " * 20).split()[:120]))
    window.resize(900, 600)
    QtWidgets.QApplication.processEvents()
    assert window.heatmap.is_zoomable()
    rows, cols = window.heatmap.visible_cells()
    save_as(tmp_path / "part.png")
    use_dialog(window, "heatmap", visible_only=True)
    caption = Image.open(tmp_path / "part.png").text["Description"]
    assert f"part shown: rows {rows.start + 1}–{rows.stop} and columns {cols.start + 1}–{cols.stop} of 120" in caption
    save_as(tmp_path / "whole.svg")
    use_dialog(window, "heatmap", file_type=".svg", visible_only=True)  # not offered: SVG cannot clip the part
    assert "part shown" not in (tmp_path / "whole.svg").read_text()
    messages = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: messages.append(a[2]))
    assert not window._exports().export_to("heatmap", str(tmp_path / "part.pdf"), FigureOptions(visible_only=True))
    assert "PNG only" in messages[0] and not (tmp_path / "part.pdf").exists()


def _twin(window, save_as, tmp_path, kind, suffix=".png", **choices):
    """The window's figure and the one its shown command draws, as the installed program."""
    target = tmp_path / f"window{suffix}"
    save_as(target)
    shown = use_dialog(window, kind, file_type=suffix, **choices)
    words = shlex.split(shown["command"])
    assert words[:2] == ["attention-explorer", "export"] and words[-2] == "-o" and words[-1].endswith(suffix)
    folder = tmp_path / f"cli{suffix}"
    folder.mkdir()
    result = run([*words[1:-1], f"twin{suffix}"], folder)
    assert result.returncode == 0, result.stderr
    return target, folder / f"twin{suffix}", shown["command"]


def same_vector_file(mine: Path, twin: Path) -> bool:
    """The same SVG; or PDFs that poppler draws alike to the pixel (each PDF has its own date and
    identifier, and a process embeds the fonts in the order it first met them)."""
    if mine.suffix == ".svg":
        return mine.read_bytes() == twin.read_bytes()
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) missing: the PDFs cannot be compared")
    drawn = [np.asarray(pdftoppm(path, path.with_name(f"{path.stem}-page"), 96)) for path in (mine, twin)]
    return np.array_equal(*drawn)


@pytest.mark.parametrize("kind, choices", [
    ("heatmap", {"theme": "dark", "title": "Who looks at whom"}),
    ("arcs", {"scale": "1", "caption": True}),
    ("steps", {"theme": "transparent-light"}),
    ("grid-heads", {"scale": "cm", "width_cm": 12.0}),
])
def test_a_figure_made_in_the_window_and_its_command_line_twin_are_the_same_picture(make_window, save_as, tmp_path,
                                                                                   kind, choices):
    window = make_window("cat-ate-fish")
    window.controller.set_pinned(1, LOOKED_AT)
    window.controller.set_colormap("magma")
    window.heatmap.set_colour_scale("data")
    mine, twin, command = _twin(window, save_as, tmp_path, kind, **choices)
    assert read_view(mine) == read_view(twin), command
    assert np.array_equal(pixels(mine), pixels(twin)), f"{command} drew another picture"


@pytest.mark.parametrize("kind, suffix, choices", [
    ("heatmap", ".svg", {"theme": "dark", "title": "Who looks at whom"}),
    ("steps", ".pdf", {"theme": "transparent-light"}),
])
def test_a_vector_figure_and_its_command_line_twin_are_the_same_file(make_window, save_as, tmp_path, kind, suffix,
                                                                     choices):
    window = make_window("cat-ate-fish")
    window.controller.set_pinned(1, LOOKED_AT)
    window.controller.set_colormap("magma")
    mine, twin, command = _twin(window, save_as, tmp_path, kind, suffix, **choices)
    assert read_view(mine) == read_view(twin), command
    assert same_vector_file(mine, twin), f"{command} wrote another {suffix}"


def test_a_real_models_view_and_its_twins_are_the_same_picture_and_files(make_window, save_as, tmp_path):
    pytest.importorskip("tokenizers")
    window = make_window()
    window.controller.open_model(BERT, "the cat sat on the mat")
    window.controller.set_ablated({(1, 0)})
    for suffix in (".png", ".svg", ".pdf"):
        mine, twin, command = _twin(window, save_as, tmp_path, "model", suffix)
        assert read_view(mine) == read_view(twin), command
        if suffix == ".png":
            assert np.array_equal(pixels(mine), pixels(twin)), f"{command} drew another picture"
        else:
            assert same_vector_file(mine, twin), f"{command} wrote another {suffix}"


def test_a_real_models_figure_and_its_twin_are_the_same_picture(make_window, save_as, tmp_path):
    pytest.importorskip("tokenizers")
    window = make_window()
    c = window.controller
    c.open_model(BERT, "the cat sat on the mat")
    c.set_layer(1)
    c.set_head(2)
    c.update_real_view(merge_words=True, hide_specials=True)
    c.set_ablated({(0, 1)})
    c.set_pinned(2)
    mine, twin, command = _twin(window, save_as, tmp_path, "heatmap")
    assert read_view(mine) == read_view(twin), command
    assert np.array_equal(pixels(mine), pixels(twin)), f"{command} drew another picture"


@pytest.mark.parametrize("part, kind", [("cross", "heatmap"), ("encoder", "arcs"), ("decoder", "grid-heads")])
def test_an_encoder_decoders_figure_and_its_twin_are_the_same_picture(make_window, save_as, tmp_path, part, kind):
    """The command the dialog shows names BART's target and the attention shown (--target, --part), and
    draws the same picture: a cross-attention heatmap cut to its cells, a source word pinned as looked at."""
    pytest.importorskip("tokenizers")
    window = make_window()
    c = window.controller
    c.open_model(BART, "The cat sat on mat")
    c.set_target("Le chat")
    c.set_part(part)
    c.set_layer(1)
    c.set_head(3)
    c.set_ablated({(0, 1)})
    c.set_pinned(3, LOOKED_AT)  # "cat" of the source, or of the target's tokens for the decoder
    mine, twin, command = _twin(window, save_as, tmp_path, kind)
    assert f"--target 'Le chat' --part {part}" in command
    state = read_view(twin)
    assert state == read_view(mine) and (state.target, state.part, state.layer, state.head) == ("Le chat", part, 1, 3)
    assert np.array_equal(pixels(mine), pixels(twin)), f"{command} drew another picture"


def test_copy_image_puts_the_figure_on_the_clipboard(make_window, save_as, tmp_path):
    window = make_window()
    window.copy_action.trigger()
    copied = QtWidgets.QApplication.clipboard().image().convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    save_as(tmp_path / "same.png")
    use_dialog(window, "heatmap", scale="2")
    exported = pixels(tmp_path / "same.png")
    assert (copied.width(), copied.height()) == (exported.shape[1], exported.shape[0])
    back = np.frombuffer(copied.constBits(), dtype=np.uint8).reshape(copied.height(), copied.bytesPerLine())
    back = back[:, :copied.width() * 4].reshape(copied.height(), copied.width(), 4).astype(np.int16)
    assert np.abs(back - exported).max() <= 1  # premultiplied on the clipboard, straight in the file


def test_a_dark_export_leaves_the_window_as_it_was(make_window, save_as, tmp_path):
    window = make_window()
    views = (window.splitter, window.steps_dock)  # not the status bar ("Exported …") nor the blinking caret
    before = [view.grab().toImage() for view in views]
    save_as(tmp_path / "dark.png")
    use_dialog(window, "arcs", theme="dark")
    use_dialog(window, "heatmap", theme="transparent-dark")
    QtWidgets.QApplication.processEvents()
    after = [view.grab().toImage() for view in views]
    for old, new, name in zip(before, after, ("heatmap, bars and arcs", "steps"), strict=True):
        if old != new:
            old.save(str(tmp_path / "before.png"))
            new.save(str(tmp_path / "after.png"))
            pytest.fail(f"the window's {name} changed after a dark export: see {tmp_path}")


def test_transparent_png_has_transparent_corners(make_window, tmp_path):
    window = make_window()
    target = tmp_path / "t.png"
    assert window.export_to("heatmap", str(target), 1, transparent=True)
    assert pixels(target)[2, 2, 3] == 0
    assert window.heatmap.graphics.backgroundBrush().color().alpha() == 255  # the window is as it was


def test_the_dialog_exports_csv_and_json(make_window, save_as, tmp_path):
    window = make_window("cats-chase-mice")
    save_as(tmp_path / "m")
    use_dialog(window, "csv")
    rows = list(csv.reader((tmp_path / "m.csv").open()))
    assert rows[0][1:] == ["cats", "chase", "mice"]
    save_as(tmp_path / "t.json")
    use_dialog(window, "json")
    assert json.loads((tmp_path / "t.json").read_text())["tokens"] == ["cats", "chase", "mice"]


def test_the_dialog_shows_no_command_for_data_and_none_for_the_part_on_screen(make_window):
    window = make_window()
    dialog = QtExportDialog(window, "csv", command_for=window._exports().command_for, visible_part="rows 1–3")
    assert dialog.command.text() == ""
    dialog.kind.setCurrentIndex(dialog.kind.findData("heatmap"))
    assert dialog.command.text().startswith("attention-explorer export --model cat-sat-on-mat")
    dialog.visible_only.setChecked(True)
    assert dialog.command.text() == ""
    dialog.deleteLater()


def test_unwritable_path_shows_a_message_and_leaves_no_file(make_window, save_as, tmp_path, monkeypatch):
    window = make_window()
    messages = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: messages.append(a[2]))
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("keep me")
    save_as(not_a_folder / "heat.png")  # a path no user (not even root) can write
    use_dialog(window, "heatmap")
    assert messages and "cannot write" in messages[0] and "Nothing was written" in messages[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert not_a_folder.read_text() == "keep me"


def test_failed_export_keeps_the_previous_file(make_window, tmp_path, monkeypatch):
    window = make_window()
    target = tmp_path / "heat.png"
    target.write_bytes(b"old")
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: None)

    def fail(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("attention_explorer.engine.atomic_write.os.replace", fail)
    assert not window.export_to("heatmap", str(target))
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heat.png"]


def test_context_menu_offers_export_and_copy(make_window):
    window = make_window()
    texts = [a.text() for a in window.view_context_menu("arcs").actions()]
    assert texts == ["Export image…", "Copy image", "Export shown matrix as CSV…"]
    texts = [a.text() for a in window.view_context_menu("heatmap").actions()]
    assert "Export every head side by side…" in texts and "Export as an interactive web page…" in texts


def test_a_context_menu_is_gone_once_it_closes(make_window, qtbot):
    window = make_window()
    menus_before = len(window.findChildren(QtWidgets.QMenu))
    steps = window.views["steps"].export_widget()
    shown = []

    def close_the_menu():
        menu = QtWidgets.QApplication.activePopupWidget()
        shown.append([a.text() for a in menu.actions()])
        menu.close()

    for _ in range(3):
        QtCore.QTimer.singleShot(50, close_the_menu)
        steps.customContextMenuRequested.emit(QtCore.QPoint(10, 10))  # what a right-click on it sends
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    assert len(shown) == 3 and "Export image…" in shown[0]
    assert len(window.findChildren(QtWidgets.QMenu)) == menus_before


def test_settings_survive_a_restart(qtbot, settings):
    controller = Controller()
    window = MainWindow(controller, settings)
    qtbot.addWidget(window)
    controller.open_model("it-was-tired")
    controller.set_sentence("the dog was tired")
    controller.update_options(causal=True, positional=True)
    controller.set_matrix("scaled")
    controller.set_colormap("magma")
    window.resize(701, 503)  # within the offscreen screen (800 × 600), which clamps geometry
    window.close()

    again = Controller()
    window2 = MainWindow(again, settings)
    qtbot.addWidget(window2)
    assert again.model.name == "it-was-tired"
    assert again.sentence == "the dog was tired"
    assert again.options.causal and again.options.positional and again.options.scale
    assert again.matrix == "scaled" and again.colormap == "magma"
    assert (window2.width(), window2.height()) == (701, 503)
    assert window2.sentence_box.toPlainText() == "the dog was tired"


def test_a_pinned_word_keeps_its_role_while_another_is_hovered(make_window, tmp_path):
    window = make_window()
    window.controller.set_pinned(3, LOOKED_AT)
    hover_cell(window.heatmap, 1, 1)  # a word looking, hovered on the way to the menu
    assert window.controller.focus_role != LOOKED_AT
    assert window.export_to("heatmap", str(tmp_path / "f.png"))
    focus = read_view(tmp_path / "f.png").focus
    assert (focus.index, focus.role) == (3, "looked_at")
