"""Exports from the menu (dialogs patched) and from the command line, and settings across restarts."""

import csv
import json
import struct

import pytest
from PySide6 import QtWidgets

from attention_explorer.app import MainWindow
from attention_explorer.cli import main
from attention_explorer.controller import Controller
from attention_explorer.views.export_dialog import QtExportDialog


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def choose(monkeypatch):
    """Patch the Export dialog and the file dialog to answer like a user would."""
    def answer(kind: str, path, scale: int = 1, transparent: bool = False):
        monkeypatch.setattr(QtExportDialog, "exec", lambda self: QtWidgets.QDialog.DialogCode.Accepted)
        monkeypatch.setattr(QtExportDialog, "chosen", lambda self: (kind, scale, transparent))
        monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    return answer


@pytest.mark.parametrize("scale", [1, 2, 4])
def test_menu_export_writes_a_png_of_the_requested_size(make_window, choose, tmp_path, scale):
    window = make_window()
    target = tmp_path / "heat.png"
    choose("heatmap", target, scale)
    window.export_action.trigger()
    widget = window.heatmap.export_widget()
    assert png_size(target) == (widget.width() * scale, widget.height() * scale)


def test_menu_export_writes_an_svg_with_the_token_labels(make_window, choose, tmp_path):
    window = make_window()
    for view in ("heatmap", "arcs"):
        target = tmp_path / f"{view}.svg"
        choose(view, target)
        window.export_action.trigger()
        svg = target.read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        for label in ("the₁", "cat", "sat", "mat"):
            assert f">{label}</text>" in svg or f">{label}<" in svg, f"{label} missing from the {view} SVG"


def test_transparent_png_has_transparent_corners(make_window, tmp_path):
    window = make_window()
    target = tmp_path / "t.png"
    assert window.export_to("heatmap", str(target), 1, transparent=True)
    from PySide6 import QtGui

    image = QtGui.QImage(str(target))
    assert image.pixelColor(2, 2).alpha() == 0
    assert window.heatmap.graphics.backgroundBrush().color().alpha() == 255  # the view is back to normal


def test_menu_exports_csv_and_json(make_window, choose, tmp_path):
    window = make_window("cats-chase-mice")
    choose("csv", tmp_path / "m.csv")
    window.export_action.trigger()
    rows = list(csv.reader((tmp_path / "m.csv").open()))
    assert rows[0][1:] == ["cats", "chase", "mice"]
    choose("json", tmp_path / "t.json")
    window.export_action.trigger()
    assert json.loads((tmp_path / "t.json").read_text())["tokens"] == ["cats", "chase", "mice"]


def test_unwritable_path_shows_a_message_and_leaves_no_file(make_window, choose, tmp_path, monkeypatch):
    window = make_window()
    messages = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: messages.append(a[2]))
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("keep me")
    choose("heatmap", not_a_folder / "heat.png", 2)  # a path no user (not even root) can write
    window.export_action.trigger()
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


def test_copy_image_puts_an_image_on_the_clipboard(make_window):
    window = make_window()
    window.copy_action.trigger()
    image = QtWidgets.QApplication.clipboard().image()
    assert not image.isNull() and image.width() >= window.heatmap.export_widget().width()


def test_context_menu_offers_export_and_copy(make_window):
    window = make_window()
    texts = [a.text() for a in window.view_context_menu("arcs").actions()]
    assert texts == ["Export image…", "Copy image", "Export shown matrix as CSV…"]


def test_cli_exports_png_and_svg_headless(tmp_path, capsys):
    png, svg = tmp_path / "h.png", tmp_path / "a.svg"
    assert main(["export", "--view", "heatmap", "--image-scale", "2", "-o", str(png)]) == 0
    width, height = png_size(png)
    assert width >= 1000 and height >= 1000
    assert main(["export", "--view", "arcs", "--model", "cat-ate-fish", "-o", str(svg)]) == 0
    assert ">fish</text>" in svg.read_text() or ">fish<" in svg.read_text()
    assert main(["export", "--view", "heatmap", "--matrix", "q", "-o", str(tmp_path / "q.png")]) == 2
    assert "write q as .csv" in capsys.readouterr().err


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
