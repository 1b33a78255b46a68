"""Files dropped on the window, File ▸ Open recent, Save view…: an exported figure opens the view it
was made from; a model folder, a .gguf or a model .json opens that model; anything else gets one
message and the window keeps what it showed."""

import os
from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attention_explorer.controller import LOOKED_AT

DATA = Path("tests/engine/pretrained/data").resolve()


def drop(window, path) -> bool:
    """Drag `path` over the window and drop it, as a file manager would."""
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(path))])
    point = QtCore.QPointF(window.rect().center())
    actions = QtCore.Qt.DropAction.CopyAction
    enter = QtGui.QDragEnterEvent(point.toPoint(), actions, mime, QtCore.Qt.MouseButton.LeftButton,
                                  QtCore.Qt.KeyboardModifier.NoModifier)
    QtWidgets.QApplication.sendEvent(window, enter)
    if not enter.isAccepted():
        return False
    event = QtGui.QDropEvent(point, actions, mime, QtCore.Qt.MouseButton.LeftButton,
                             QtCore.Qt.KeyboardModifier.NoModifier)
    QtWidgets.QApplication.sendEvent(window, event)
    return event.isAccepted()


def seen(controller) -> tuple:
    return (controller.model.name if not controller.is_real else controller.real_model.name, controller.sentence,
            controller.options, controller.head, controller.matrix, controller.colormap, controller.pinned,
            controller.focus_role, controller.layer, controller.real_view, controller.ablated)


@pytest.fixture
def messages(monkeypatch):
    said = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: said.append(a[2]))
    return said


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_dropping_an_exported_figure_opens_the_view_it_shows(make_window, tmp_path, suffix):
    window = make_window("cat-ate-fish")
    c = window.controller
    c.set_sentence("my cat ate its fish")
    c.update_options(causal=False, positional=True)
    c.set_head(1)
    c.set_matrix("scaled")
    c.set_colormap("plasma")
    c.set_pinned(3, LOOKED_AT)
    window.heatmap.set_colour_scale("data")
    made = seen(c)
    target = tmp_path / f"figure{suffix}"
    assert window.export_to("heatmap", str(target))
    c.open_model("cats-chase-mice")
    window.heatmap.set_colour_scale("fixed")
    assert seen(c) != made
    assert drop(window, target)
    assert seen(c) == made and window.heatmap.colour_scale() == "data"
    c.set_hovered(None)  # a mouse an earlier test left over the heatmap
    assert window.heatmap.focus() == (None, 3)  # the pinned word's column framed again


def test_an_edited_toy_model_comes_back_with_its_edits(make_window, tmp_path):
    window = make_window("cats-chase-mice")
    model = window.controller.model
    model.w_q[0, 0] = 7.5
    window.controller.notify_model_edited()
    assert window.export_to("heatmap", str(tmp_path / "edited.png"))
    window.controller.open_model("cats-chase-mice")
    assert window.controller.model.w_q[0, 0] != 7.5
    assert drop(window, tmp_path / "edited.png")
    assert window.controller.model.w_q[0, 0] == 7.5


def test_dropping_a_real_models_figure_opens_its_layer_reading_and_heads_off(make_window, tmp_path):
    pytest.importorskip("tokenizers")
    window = make_window()
    c = window.controller
    c.open_model(str(DATA / "tiny-bert"), "the cat sat on the mat")
    c.set_layer(1)
    c.set_head(3)
    c.update_real_view(merge_words=True, hide_first=True)
    c.set_ablated({(0, 2)})
    c.set_pinned(1)
    made = seen(c)
    assert window.export_to("arcs", str(tmp_path / "arcs.png"))
    c.open_model("cat-sat-on-mat")
    assert drop(window, tmp_path / "arcs.png")
    assert seen(c) == made


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-llama.gguf"])
def test_dropping_a_model_folder_or_a_gguf_opens_that_model(make_window, name):
    pytest.importorskip("tokenizers")
    window = make_window()
    assert drop(window, DATA / name)
    assert window.controller.is_real and window.controller.model_source == str(DATA / name)


def test_dropping_a_model_json_opens_it_and_a_view_file_opens_its_view(make_window, tmp_path):
    window = make_window()
    from attention_explorer.engine import load_builtin, save_model

    model = load_builtin("it-was-tired")
    save_model(model, tmp_path / "mine.json")
    assert drop(window, tmp_path / "mine.json")
    assert window.controller.model.name == "it-was-tired"
    window.controller.set_pinned(2)
    assert window.files.save_view(str(tmp_path / "v.aeview"))
    window.controller.open_model("cat-ate-fish")
    assert drop(window, tmp_path / "v.aeview")
    assert window.controller.model.name == "it-was-tired" and window.controller.pinned == 2


@pytest.mark.parametrize("make, message", [
    (lambda tmp: (tmp / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\nnot ours") and tmp / "photo.png",
     "carries no Attention Explorer view"),
    (lambda tmp: os.mkfifo(tmp / "pipe.png") or tmp / "pipe.png", "not a regular file"),
    (lambda tmp: (tmp / "notes.txt").write_text("hi") and tmp / "notes.txt", "not a file this app opens"),
    (lambda tmp: (tmp / "v.aeview").write_text('{"format": "attention-explorer-view", "version": 1}')
     and tmp / "v.aeview", "a damaged view: model: must be an object"),
])
def test_anything_else_dropped_is_one_message_and_the_window_keeps_its_view(make_window, messages, tmp_path,
                                                                            make, message):
    window = make_window()
    before = seen(window.controller)
    drop(window, make(tmp_path))
    assert len(messages) == 1 and message in messages[0] and "unchanged" in messages[0]
    assert seen(window.controller) == before


def test_open_recent_lists_what_was_opened_and_opens_it_again(make_window, tmp_path):
    window = make_window()
    assert window.export_to("heatmap", str(tmp_path / "a.png"))
    window.controller.set_pinned(4)
    assert window.export_to("heatmap", str(tmp_path / "b.png"))
    assert drop(window, tmp_path / "a.png") and drop(window, tmp_path / "b.png")
    menu = window.files.recent_menu
    menu.aboutToShow.emit()
    names = [action.text() for action in menu.actions() if action.text()]
    assert names[0].startswith("b.png") and names[1].startswith("a.png") and names[-1] == "Clear the list"
    window.controller.set_pinned(None)
    next(a for a in menu.actions() if a.text().startswith("b.png")).trigger()
    assert window.controller.pinned == 4
    next(a for a in menu.actions() if a.text() == "Clear the list").trigger()
    menu.aboutToShow.emit()
    assert [a.text() for a in menu.actions()] == ["(nothing yet)"]


def test_open_view_starts_in_the_folder_it_last_opened_from(make_window, tmp_path, monkeypatch):
    window = make_window()
    folder = tmp_path / "figures"
    folder.mkdir()
    assert window.export_to("heatmap", str(folder / "h.png"))
    starts = []

    def answer(_parent, _title, start, _filters):
        starts.append(start)
        return str(folder / "h.png"), ""

    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", answer)
    window.files.open_view_action.trigger()
    window.files.open_view_action.trigger()
    assert Path(starts[1]) == folder and Path(starts[0]) != folder
