"""Saved settings that are stale or damaged: each bad key falls back to its default, with a note, and
the window always starts with the rest of what was saved. The settings are the app's own file
(settings_store), written here by hand as a damaged file on disk would be."""

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.engine import MAX_SENTENCE_CHARS
from attention_explorer.settings import restore_settings
from attention_explorer.settings_store import SettingsStore, shown_path

NOTE = "Some saved settings could not be used and were reset: "
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and sockets as on POSIX")


def _settings(tmp_path, values: dict) -> SettingsStore:
    """A settings file written by hand; bytes as the store writes them ({"base64": ...})."""
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(values), encoding="utf-8")
    return SettingsStore(path)


def _start(qtbot, settings) -> MainWindow:
    window = MainWindow(Controller(), settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.wait(1)  # the note on reset settings comes once the window is on screen
    return window


GOOD = {"model/source": "it-was-tired", "model/sentence": "the dog was tired", "options/causal": True,
        "view/matrix": "scaled", "view/colormap": "magma", "tour/seen": True}


def _assert_the_good_keys_came_back(controller: Controller) -> None:
    assert controller.model.name == "it-was-tired"
    assert controller.sentence == "the dog was tired"
    assert controller.options.causal
    assert controller.matrix == "scaled"
    assert controller.colormap == "magma"


@pytest.mark.parametrize(("key", "value"), [
    ("view/head", "abc"),
    ("view/head", 7),
    ("view/head", 0.5),
    ("window/geometry", "garbage"),
    ("window/geometry", {"base64": "Z2FyYmFnZQ=="}),
    ("window/state", {"base64": "AAD/"}),
    ("window/state", {"base64": "not base64!"}),
    ("window/state", {"base64": "AAAA/w==", "sha256": "0" * 64}),  # bytes that are not what was saved
    ("options/heads", 3),
    ("options/heads", "many"),
    ("options/heads", [1]),
    ("options/positional", "maybe"),
    ("options/positional", None),
    ("view/colormap", "rainbow"),
    ("view/colormap", {"name": "magma"}),
    ("model/part", "both"),  # an encoder–decoder's attention shown
    ("model/target", ["le chat"]),
])
def test_a_damaged_value_is_reset_and_the_rest_comes_back(qtbot, tmp_path, key, value):
    settings = _settings(tmp_path, {**GOOD, key: value})
    window = _start(qtbot, settings)
    if key != "view/colormap":
        _assert_the_good_keys_came_back(window.controller)
    if value is None:  # a key saved as nothing is as good as absent
        assert window.statusBar().currentMessage() == ""
        return
    assert window.statusBar().currentMessage() == NOTE + key
    assert not window.status_line.isVisible(), "the note stands in the usual line's place, not over it"
    assert settings.value(key) is None, "the damaged value is dropped"
    window.close()
    assert json.loads(settings.path.read_text()).get(key) != value, "the file holds what the window had instead"


def test_an_unknown_matrix_is_reset(qtbot, tmp_path):
    window = _start(qtbot, _settings(tmp_path, {"view/matrix": "nonsense", "view/colormap": "magma"}))
    assert window.controller.matrix == "weights" and window.controller.colormap == "magma"
    assert window.statusBar().currentMessage() == NOTE + "view/matrix"


def test_several_damaged_values_are_all_named(qtbot, tmp_path):
    window = _start(qtbot, _settings(tmp_path, {"view/head": "abc", "window/geometry": "garbage",
                                                "view/colormap": "magma"}))
    assert window.statusBar().currentMessage() == NOTE + "window/geometry, view/head"
    assert window.controller.colormap == "magma"


def _deep_json(path):
    path.write_text("[" * 1500 + "]" * 1500)
    return path


def _fifo(path):
    os.mkfifo(path)
    return path


def _socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays
    return path


def _link_to_fifo(tmp):
    link = tmp / "link.json"
    link.symlink_to(_fifo(tmp / "pipe-behind.json"))
    return link


@pytest.mark.parametrize("make_source", [
    pytest.param(lambda tmp: _deep_json(tmp / "deep.json"), id="1500-deep JSON"),
    pytest.param(lambda tmp: tmp / "gone.json", id="missing file"),
    pytest.param(lambda tmp: tmp, id="a folder"),
    pytest.param(lambda tmp: _fifo(tmp / "pipe.json"), id="FIFO", marks=posix_only),
    pytest.param(lambda tmp: _socket(tmp / "socket.json"), id="socket", marks=posix_only),
    pytest.param(_link_to_fifo, id="a link to a FIFO", marks=posix_only),
    pytest.param(lambda tmp: "x" * 5000, id="a 5,000-character name"),
])
def test_a_remembered_model_that_cannot_be_read_falls_back_to_the_default(qtbot, tmp_path, make_source):
    source = make_source(tmp_path)
    window = _start(qtbot, _settings(tmp_path, {"model/source": str(source), "view/colormap": "magma"}))
    assert window.controller.model.name == "cat-sat-on-mat"
    assert window.controller.trace is not None and window.controller.colormap == "magma"
    assert window.statusBar().currentMessage() == NOTE + "model/source"


def test_a_remembered_model_file_opens_again(qtbot, tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(engine.model_to_dict(engine.load_builtin("cats-chase-mice"))))
    window = _start(qtbot, _settings(tmp_path, {"model/source": str(path)}))
    assert window.controller.model_source == str(path)
    assert window.statusBar().currentMessage() == ""


def test_a_remembered_sentence_of_a_megabyte_is_not_restored(qtbot, tmp_path):
    huge = "the cat " * (2**20 // 8)
    settings = _settings(tmp_path, {"model/sentence": huge})
    window = _start(qtbot, settings)
    assert window.controller.sentence == "the cat sat on the mat"
    assert window.statusBar().currentMessage() == NOTE + "model/sentence"
    assert len(huge) > MAX_SENTENCE_CHARS


def test_a_remembered_real_models_long_text_comes_back(qtbot, tmp_path):
    """A real model takes texts of up to 64,000 characters, a toy model 32,000: the saved text is read
    against the saved model, which may still be loading."""
    model = Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-bert"
    text = "the cat sat. " * 4000  # 52,000 characters
    window = _start(qtbot, _settings(tmp_path, {"model/source": str(model), "model/sentence": text}))
    assert window.controller.sentence == text
    assert window.statusBar().currentMessage() == ""


@pytest.mark.parametrize("value", [["the", "cat", "sat"], 3, True])
def test_a_sentence_that_is_not_text_is_reset(qtbot, tmp_path, value):
    window = _start(qtbot, _settings(tmp_path, {"model/sentence": value}))
    assert window.controller.sentence == "the cat sat on the mat"
    assert window.statusBar().currentMessage() == NOTE + "model/sentence"


def test_restore_returns_nothing_for_settings_it_saved_itself(qtbot, tmp_path):
    settings = SettingsStore(tmp_path / "settings.json")
    first = _start(qtbot, settings)
    first.controller.open_model("cats-chase-mice")
    first.controller.update_options(heads=1, positional=True)
    first.close()
    again = Controller()
    window = MainWindow(again, None)
    qtbot.addWidget(window)
    assert restore_settings(SettingsStore(settings.path), again, window) == []
    assert again.model.name == "cats-chase-mice" and again.options.heads == 1 and again.options.positional


def test_everything_comes_back_after_a_restart_from_the_file(qtbot, tmp_path):
    path = tmp_path / "settings.json"
    window = _start(qtbot, SettingsStore(path))
    assert window._tour_pending is False and window.tour is not None, "a first start opens the tour"
    window.tour.stop()
    controller = window.controller
    controller.open_model("it-was-tired")
    controller.set_sentence("the dog was tired")
    controller.update_options(causal=True, positional=True)
    controller.set_matrix("scaled")
    controller.set_colormap("magma")
    window.resize(1203, 801)
    window.close()

    saved = json.loads(path.read_text())
    assert set(saved["window/geometry"]) == {"base64", "sha256"}, "the layout is kept as base64 text, with its digest"
    again = _start(qtbot, SettingsStore(path))
    assert again.tour is None, "the tour was seen"
    _assert_the_good_keys_came_back(again.controller)
    assert again.controller.options.positional
    assert (again.width(), again.height()) == (1203, 801)
    assert again.statusBar().currentMessage() == ""


def test_the_program_starts_from_a_damaged_settings_file(qtbot, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    from attention_explorer import settings as app_settings
    from attention_explorer.cli import main

    damaged = _settings(tmp_path, {"view/head": "abc", "window/geometry": "garbage", "options/heads": "[1",
                                   "model/source": str(_deep_json(tmp_path / "deep.json")),
                                   "model/sentence": "the dog was tired"})
    monkeypatch.setattr(app_settings, "open_settings", lambda: damaged)
    monkeypatch.setattr(QtWidgets.QApplication, "exec", lambda self: 0)  # return instead of running
    assert main([]) == 0
    windows = [w for w in QtWidgets.QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    for window in windows:
        qtbot.addWidget(window)
    assert len(windows) == 1
    qtbot.wait(1)
    assert windows[0].controller.sentence == "the dog was tired"
    assert windows[0].statusBar().currentMessage() == NOTE + "window/geometry, model/source, options/heads, view/head"


@posix_only
def test_a_settings_file_that_is_a_fifo_is_moved_aside_and_the_status_bar_says_where(qtbot, tmp_path):
    path = _fifo(tmp_path / "settings.json")
    window = _start(qtbot, SettingsStore(path))
    [aside] = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert window.statusBar().currentMessage() == (
        "Settings unreadable (it is a named pipe (FIFO), not a regular file): "
        f"moved to {shown_path(aside)}; the defaults are used.")
    assert window.controller.model.name == "cat-sat-on-mat"
    window.close()
    assert json.loads(path.read_text())["model/source"] == "cat-sat-on-mat"
