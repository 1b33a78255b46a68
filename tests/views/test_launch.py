"""`attention-explorer` with no subcommand opens the window; --model and --sentence preset it."""

from PySide6 import QtCore, QtWidgets

from attention_explorer import settings as app_settings
from attention_explorer.app import MainWindow
from attention_explorer.cli import main


def _launch(qtbot, monkeypatch, tmp_path, *argv) -> MainWindow:
    temp = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    monkeypatch.setattr(app_settings, "open_settings", lambda: temp)
    monkeypatch.setattr(QtWidgets.QApplication, "exec", lambda self: 0)  # return instead of running
    assert main(list(argv)) == 0
    windows = [w for w in QtWidgets.QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    for window in windows:
        qtbot.addWidget(window)  # closed after the test
    assert len(windows) == 1
    splashes = [w for w in QtWidgets.QApplication.topLevelWidgets()
                if w.windowType() == QtCore.Qt.WindowType.SplashScreen and w.isVisible()]
    assert splashes == [], "the splash closes once the window is there"
    return windows[0]


def test_launch_opens_the_default_model_and_sentence(qtbot, monkeypatch, tmp_path):
    window = _launch(qtbot, monkeypatch, tmp_path)
    assert window.controller.model.name == "cat-sat-on-mat"
    assert window.sentence_box.toPlainText() == "the cat sat on the mat"


def test_launch_with_model_and_sentence(qtbot, monkeypatch, tmp_path):
    window = _launch(qtbot, monkeypatch, tmp_path, "--model", "it-was-tired", "--sentence", "the dog was tired")
    assert window.controller.model.name == "it-was-tired"
    assert window.controller.trace.tokens == ["the", "dog", "was", "tired"]
