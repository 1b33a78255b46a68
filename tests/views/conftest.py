"""Fixtures for widget tests: a controller on a chosen model and a main window with throwaway settings."""

from pathlib import Path

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
def sentence_box(qtbot):
    """The sentence box alone, 600 px wide and focused, on an empty sentence of the cat-sat-on-mat model."""
    from attention_explorer.views.sentence_box import QtSentenceBox

    widget = QtSentenceBox(Controller(engine.load_builtin("cat-sat-on-mat"), ""))
    qtbot.addWidget(widget)
    widget.resize(600, widget.height())
    widget.show()
    qtbot.waitExposed(widget)
    widget.setFocus()
    return widget


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


@pytest.fixture
def own_data_folder(tmp_path, monkeypatch):
    """The census cache goes under tmp_path, never into the real home."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "data"))


TINY_GPT2 = str(Path(__file__).parents[1] / "engine" / "pretrained" / "data" / "tiny-gpt2")


@pytest.fixture
def census_window(qtbot, settings):
    """The main window on `source` and its census window opened from the View menu."""
    made = []

    def make(source: str | None = TINY_GPT2):
        controller = Controller(engine.load_builtin("cat-sat-on-mat"), background=True)
        window = MainWindow(controller, settings)
        qtbot.addWidget(window)
        window.setGeometry(0, 0, 900, 820)  # (it keeps its least width, 983) and the census window beside it:
        window.show()                       # offscreen, the mouse reaches the first window under it
        qtbot.waitExposed(window)
        if source is not None:
            controller.open_model(source, "the cat sat on the mat")
            qtbot.waitUntil(lambda: controller.is_real and controller.trace is not None and not controller.busy)
        view_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View")
        entry = next(a for a in view_menu.actions() if a.text().replace("&", "") == "Head census…")
        entry.trigger()
        census = window.pretrained.census.window
        census.setGeometry(window.frameGeometry().right() + 10, 0, 900, 700)
        qtbot.waitExposed(census)
        made.append((window, census))
        return window, census

    yield make
    for window, census in made:
        census.census.cancel()
        census.census.wait_idle()
        window.controller.cancel()
        window.controller.wait_idle()


@pytest.fixture(scope="module")
def bart():
    """The tiny BART checkpoint, opened once per module (its runs are the tests' expectations)."""
    from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder
    from bart_window import BART

    return open_encoder_decoder(BART)


@pytest.fixture
def bart_window(qtbot, settings):
    """The window as the app starts it (a background controller on a toy model), then the BART folder
    opened as File ▸ Open model folder… opens the folder chosen."""
    from bart_window import BART, SOURCE

    controller = Controller(engine.load_builtin("cat-sat-on-mat"), SOURCE, background=True)
    window = MainWindow(controller, settings)
    qtbot.addWidget(window)
    window.resize(1280, 820)
    window.show()
    qtbot.waitExposed(window)
    window.open_model(BART)
    qtbot.waitUntil(lambda: controller.is_encoder_decoder and controller.trace is not None and not controller.busy)
    yield window
    controller.cancel()
    controller.wait_idle()
