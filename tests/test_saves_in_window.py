"""Saves made from the window, as a user makes them, into a file with a second hard link: every name
sees the new content (the copy runs in a process of its own, forked from the running window), and
what a killed save left beside the file goes."""

import json
import os
import subprocess
import sys

import pytest
from PySide6 import QtWidgets

from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.settings_store import SettingsStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="hard links and process numbers as on POSIX")


@pytest.fixture
def window(qtbot, tmp_path):
    settings = SettingsStore(tmp_path / "settings.json")
    settings.setValue("tour/seen", True)
    win = MainWindow(Controller(background=True), settings)  # worker threads running, as in the app
    qtbot.addWidget(win)
    win.show()
    return win


def hard_linked(tmp_path, name: str, content: bytes):
    first, second = tmp_path / name, tmp_path / f"second-name-{name}"
    first.write_bytes(content)
    os.link(first, second)
    return first, second


def dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


def test_save_model_as_into_a_hard_linked_file_reaches_both_names(window, tmp_path, monkeypatch):
    first, second = hard_linked(tmp_path, "mine.json", b"old content " * 1000)
    stale = tmp_path / f".mine.json.k3j4h5g6.{dead_pid()}.tmp"
    stale.write_text("left by a save that was killed")
    window.controller.open_model("cats-chase-mice")
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(first), ""))
    window.model_editor.save_as_action.trigger()
    saved = json.loads(second.read_text())
    assert saved["name"] == "cats-chase-mice" and first.read_bytes() == second.read_bytes()
    assert first.stat().st_ino == second.stat().st_ino and first.stat().st_nlink == 2
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert window.controller.model_source == str(first)


def test_a_gif_export_into_a_hard_linked_file_reaches_both_names(window, tmp_path):
    first, second = hard_linked(tmp_path, "steps.gif", b"x" * 50)
    window.controller.set_sentence("the cat sat")
    assert window.export_to("steps", str(first))
    assert second.read_bytes()[:6] == b"GIF89a" and first.read_bytes() == second.read_bytes()
