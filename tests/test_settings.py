"""Saved settings that are stale or damaged: each bad key falls back to its default, with a note, and
the window always starts with the rest of what was saved."""

import json
import os
import sys

import pytest
from PySide6 import QtCore

from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.engine import MAX_SENTENCE_CHARS
from attention_explorer.settings import restore_settings

NOTE = "Some saved settings could not be used and were reset: "


def _settings(tmp_path, values: dict) -> QtCore.QSettings:
    """An INI file written by hand, as a damaged file on disk would be (QSettings would quote values)."""
    lines = []
    for section in sorted({key.split("/")[0] for key in values}):
        lines.append(f"[{section}]")
        lines += [f"{key.split('/')[1]}={value}" for key, value in values.items() if key.startswith(section + "/")]
    path = tmp_path / "settings.ini"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat)


def _start(qtbot, settings) -> MainWindow:
    window = MainWindow(Controller(), settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.wait(1)  # the note on reset settings comes once the window is on screen
    return window


GOOD = {"model/source": "it-was-tired", "model/sentence": "the dog was tired", "options/causal": "true",
        "view/matrix": "scaled", "view/colormap": "magma"}


def _assert_the_good_keys_came_back(controller: Controller) -> None:
    assert controller.model.name == "it-was-tired"
    assert controller.sentence == "the dog was tired"
    assert controller.options.causal
    assert controller.matrix == "scaled"
    assert controller.colormap == "magma"


@pytest.mark.parametrize(("key", "value"), [
    ("view/head", "abc"),
    ("view/head", "7"),
    ("window/geometry", "garbage"),
    ("window/geometry", "@ByteArray(garbage)"),
    ("window/state", "@ByteArray(\\0\\0\\xff)"),
    ("options/heads", "3"),
    ("options/heads", "many"),
    ("options/positional", "maybe"),
    ("view/colormap", "rainbow"),
])
def test_a_damaged_value_is_reset_and_the_rest_comes_back(qtbot, tmp_path, key, value):
    settings = _settings(tmp_path, {**GOOD, key: value})
    window = _start(qtbot, settings)
    if key != "view/colormap":
        _assert_the_good_keys_came_back(window.controller)
    assert window.statusBar().currentMessage() == NOTE + key
    assert not window.status_line.isVisible(), "the note stands in the usual line's place, not over it"
    assert settings.value(key) is None, "the damaged value is dropped from the file"


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


@pytest.mark.parametrize("make_source", [
    pytest.param(lambda tmp: _deep_json(tmp / "deep.json"), id="1500-deep JSON"),
    pytest.param(lambda tmp: tmp / "gone.json", id="missing file"),
    pytest.param(lambda tmp: tmp, id="a folder"),
    pytest.param(lambda tmp: "/dev/zero", id="/dev/zero",
                 marks=pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")),
    pytest.param(lambda tmp: _fifo(tmp / "pipe.json"), id="FIFO",
                 marks=pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs")),
    pytest.param(lambda tmp: "x" * 5000, id="a 5,000-character name"),
])
def test_a_remembered_model_that_cannot_be_read_falls_back_to_the_default(qtbot, tmp_path, make_source):
    source = make_source(tmp_path)
    window = _start(qtbot, _settings(tmp_path, {"model/source": str(source), "view/colormap": "magma"}))
    assert window.controller.model.name == "cat-sat-on-mat"
    assert window.controller.trace is not None and window.controller.colormap == "magma"
    assert window.statusBar().currentMessage() == NOTE + "model/source"


def test_a_remembered_model_file_opens_again(qtbot, tmp_path):
    from attention_explorer import engine

    path = tmp_path / "mine.json"
    path.write_text(json.dumps(engine.model_to_dict(engine.load_builtin("cats-chase-mice"))))
    window = _start(qtbot, _settings(tmp_path, {"model/source": str(path)}))
    assert window.controller.model_source == str(path)
    assert window.statusBar().currentMessage() == ""


def test_a_remembered_sentence_of_a_megabyte_is_not_restored(qtbot, tmp_path):
    huge = "the cat " * (2**20 // 8)
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    settings.setValue("model/sentence", huge)
    settings.sync()
    window = _start(qtbot, settings)
    assert window.controller.sentence == "the cat sat on the mat"
    assert window.statusBar().currentMessage() == NOTE + "model/sentence"
    assert len(huge) > MAX_SENTENCE_CHARS


def test_a_sentence_that_is_not_text_is_reset(qtbot, tmp_path):
    window = _start(qtbot, _settings(tmp_path, {"model/sentence": "the, cat, sat"}))  # INI reads a list
    assert window.controller.sentence == "the cat sat on the mat"
    assert window.statusBar().currentMessage() == NOTE + "model/sentence"


def test_restore_returns_nothing_for_settings_it_saved_itself(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    first = _start(qtbot, settings)
    first.controller.open_model("cats-chase-mice")
    first.controller.update_options(heads=1, positional=True)
    first.close()
    again = Controller()
    window = MainWindow(again, None)
    qtbot.addWidget(window)
    assert restore_settings(settings, again, window) == []
    assert again.model.name == "cats-chase-mice" and again.options.heads == 1 and again.options.positional


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
