"""Fixtures for widget tests: a controller on a chosen model and a main window with throwaway settings."""

import pytest
from PySide6 import QtCore, QtWidgets

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller


@pytest.fixture
def settings(tmp_path_factory):
    """Throwaway settings of a returning user (the tour seen), so no tour covers the views under test;
    in a folder of their own, so tests that list tmp_path see only what they wrote."""
    folder = tmp_path_factory.mktemp("settings")
    settings = QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    settings.setValue("tour/seen", True)
    return settings


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


@pytest.fixture
def real_window(qtbot, settings):
    """The window with a background controller, as the app starts it, opened on `source`."""
    windows = []

    def make(source: str, sentence: str = "the cat sat on the mat") -> MainWindow:
        controller = Controller(engine.load_builtin("cat-sat-on-mat"), background=True)
        window = MainWindow(controller, settings)
        qtbot.addWidget(window)
        window.resize(1280, 820)
        window.show()
        qtbot.waitExposed(window)
        controller.open_model(source, sentence)
        qtbot.waitUntil(lambda: controller.is_real and controller.trace is not None and not controller.busy)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.controller.cancel()
        window.controller.wait_idle()
