"""Loading a real model in the window: cancel, a missing dependency, and what the app remembers."""

from pathlib import Path

import pytest
from PySide6 import QtWidgets

pytest.importorskip("tokenizers")

from attention_explorer import engine  # noqa: E402
from attention_explorer.app import MainWindow  # noqa: E402
from attention_explorer.controller import Controller  # noqa: E402
from attention_explorer.engine import ModelError  # noqa: E402
from attention_explorer.engine.pretrained import dependencies  # noqa: E402
from attention_explorer.settings import restore_settings, save_settings  # noqa: E402

BERT = str(Path(__file__).parents[1] / "engine" / "pretrained" / "data" / "tiny-bert")


@pytest.fixture
def window(qtbot, settings, monkeypatch):
    controller = Controller(engine.load_builtin("cat-sat-on-mat"), background=True)
    win = MainWindow(controller, settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.messages = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda _p, _t, text: win.messages.append(text))
    yield win
    controller.cancel()
    controller.wait_idle()


def test_a_cancelled_load_keeps_the_toy_model_and_says_so(window, qtbot):
    c = window.controller
    trace = c.trace
    c.open_model(BERT)
    assert window.pretrained.cancel_button.isVisibleTo(window)
    window.pretrained.cancel_button.click()
    qtbot.waitUntil(lambda: bool(window.messages))
    assert "cancelled" in window.messages[0] and "tiny-bert was not opened" in window.messages[0]
    assert not c.is_real and c.trace is trace and c.model.name == "cat-sat-on-mat"
    qtbot.waitUntil(lambda: not window.pretrained.cancel_button.isVisibleTo(window))


def test_without_tokenizers_the_message_says_what_to_install(window, qtbot, monkeypatch):
    def missing(module, needed_for):
        raise ModelError(f"{needed_for} needs the '{module}' package, which is not installed; install it with: "
                         f"{dependencies.INSTALL_REAL}")

    monkeypatch.setattr("attention_explorer.engine.pretrained.model.require", missing)
    window.controller.open_model(BERT)
    qtbot.waitUntil(lambda: bool(window.messages))
    assert "pip install 'attention-explorer[real]'" in window.messages[0]
    assert not window.controller.is_real


def test_a_real_model_is_remembered_without_its_options(window, qtbot, settings):
    c = window.controller
    c.open_model(BERT)
    qtbot.waitUntil(lambda: c.is_real and not c.busy)
    c.set_head(3)
    save_settings(settings, c, window)
    assert settings.value("model/source") == BERT
    assert settings.value("options/heads") is None and settings.value("view/head") is None
    fresh = Controller(engine.load_builtin("cat-sat-on-mat"))  # at once, as the command line does
    assert restore_settings(settings, fresh, window) == []
    assert fresh.is_real and fresh.real_model.name == "tiny-bert" and fresh.sentence == c.sentence


def test_a_truncated_gguf_names_the_file_and_keeps_the_model(window, qtbot, tmp_path):
    source = Path(BERT).parent / "tiny-llama.gguf"
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(source.read_bytes()[: source.stat().st_size // 2])
    window.open_model(str(cut))
    qtbot.waitUntil(lambda: bool(window.messages))
    assert "cut.gguf" in window.messages[0] and "unchanged" in window.messages[0]
    assert not window.controller.is_real and window.controller.trace is not None


def test_the_model_view_of_a_toy_model_is_not_exported(window, tmp_path):
    assert not window.export_to("model", str(tmp_path / "model.png"))
    assert "open one first" in window.messages[0] and not (tmp_path / "model.png").exists()
