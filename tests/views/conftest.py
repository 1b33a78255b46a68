"""Fixtures for widget tests: a controller on a chosen model and a main window with throwaway settings."""

import pytest
from PySide6 import QtCore, QtWidgets

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller


@pytest.fixture
def settings(tmp_path):
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, settings):
    def make(model: str = "cat-sat-on-mat", sentence: str | None = None) -> MainWindow:
        controller = Controller(engine.load_builtin(model), sentence)
        window = MainWindow(controller, settings)
        qtbot.addWidget(window)
        window.resize(1280, 820)
        window.show()
        qtbot.waitExposed(window)
        QtWidgets.QApplication.processEvents()
        return window
    return make


