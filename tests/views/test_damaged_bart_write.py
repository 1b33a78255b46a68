"""Damaged copies of tiny-bart (tests/damaged_models/bart.py) opened in the window as a user does (File ▸
Open model folder) over tiny-bart as it ships, with a target typed; then Write pressed with the mouse.

Each ends un-busy with one message (a dialog, or the line the views show in their place) naming the
model or its file and the typed target kept, or with the copy open and its target written. Never a
traceback, an error nothing foresaw, a second message, or Write left off.

One window serves the module (a window each would be most of the time taken); before each case it
holds tiny-bart again, the source and the typed target.
"""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from damaged_models.bart import bart_cases

pytest.importorskip("tokenizers")

from attention_explorer import engine  # noqa: E402
from attention_explorer.app import MainWindow  # noqa: E402
from attention_explorer.controller import Controller  # noqa: E402
from attention_explorer.pretrained_worker import UNFORESEEN  # noqa: E402
from bart_window import BART, SOURCE, type_target  # noqa: E402

CASES = bart_cases()
TYPED = "the dog sat"
LIMIT_MS = 30_000  # a bound on a hang, not a timing measurement


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    folder = tmp_path_factory.mktemp("settings")
    settings = QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    settings.setValue("tour/seen", True)
    window = MainWindow(Controller(engine.load_builtin("cat-sat-on-mat"), SOURCE, background=True), settings)
    window.resize(1280, 820)
    window.show()
    yield window
    window.controller.cancel()
    window.controller.wait_idle()
    window.close()
    window.deleteLater()


@pytest.fixture
def said(monkeypatch) -> list[str]:
    """The texts of the message boxes shown; each answers at once."""
    shown: list[str] = []
    for name in ("warning", "critical", "information"):
        monkeypatch.setattr(QtWidgets.QMessageBox, name,
                            lambda _parent, _title, text, *rest: shown.append(text)
                            or QtWidgets.QMessageBox.StandardButton.Ok)
    return shown


def _wait(qtbot, c) -> None:
    qtbot.waitUntil(lambda: not c.busy, timeout=LIMIT_MS)
    QtWidgets.QApplication.processEvents()


def _open_folder(qtbot, window, path, monkeypatch) -> None:
    """File ▸ Open model folder…, the dialog answering `path`."""
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(path))
    window.pretrained.open_folder_action.trigger()
    _wait(qtbot, window.controller)


def _start_from_tiny_bart(qtbot, window, monkeypatch) -> None:
    c = window.controller
    if c.model_source != BART:
        _open_folder(qtbot, window, BART, monkeypatch)
    if c.sentence != SOURCE:
        window.sentence_box.setPlainText(SOURCE)
        _wait(qtbot, c)
    if c.target != TYPED:
        type_target(qtbot, window, TYPED)
    assert c.is_encoder_decoder and c.model_source == BART and c.target == TYPED and c.trace is not None


def _unclear(message: str, case) -> str | None:
    if "Traceback" in message:
        return "a traceback"
    if UNFORESEEN in message or "unexpected error" in message:
        return "an error nothing foresaw"
    if not any(name in message for name in case.names):
        return "a message naming neither the model nor its files"
    return None


def _press_write(window) -> None:
    button = window.pretrained.target_box.write_button
    assert button.isVisible() and button.isEnabled(), "Write is not there to press"
    QTest.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_a_damaged_bart_opened_then_write_pressed(case, window, said, qtbot, monkeypatch, tmp_path):
    c, box = window.controller, window.pretrained.target_box
    _start_from_tiny_bart(qtbot, window, monkeypatch)
    before = c.real_model
    said.clear()
    _open_folder(qtbot, window, case.build(tmp_path), monkeypatch)
    if said:  # refused: one dialog, and what was open stays open, reading the typed target
        assert len(said) == 1, f"{len(said)} messages: {said}"
        assert _unclear(said[0], case) is None, f"{_unclear(said[0], case)}: {said[0]}"
        assert c.real_model is before and c.target == TYPED == box.edit.text() and c.trace is not None
        return
    assert c.is_encoder_decoder and c.model_source == str(tmp_path / "tiny-bart"), "neither refused nor opened"
    assert c.target == TYPED == box.edit.text(), "opening another encoder–decoder lost the typed target"
    shown_before = c.error  # the views may say already that this model's numbers overflow on the target
    _press_write(window)
    _wait(qtbot, c)
    messages = said + [m for m in (c.error if c.error != shown_before else "", c.write_error) if m]
    assert box.write_button.isEnabled(), "Write stayed off after it came back"
    assert box.edit.text() == c.target, "the Target box does not hold the target the views read"
    assert len(messages) <= 1, f"{len(messages)} messages: {messages}"
    if c.target_written is None:
        assert messages or c.error, "Write wrote nothing and said nothing"
        assert c.target == TYPED, "a failed Write lost the typed target"
    for message in messages:
        assert _unclear(message, case) is None, f"{_unclear(message, case)}: {message}"


def _overflow_while_writing(window, qtbot, monkeypatch, tmp_path):
    """tiny-bart with its decoder positions past the tenth overflowing: opened, the typed target read
    (it stays within them), then Write pressed (32 tokens reach them)."""
    case = next(c for c in CASES if c.kind.endswith("decoder positions past 10 all 1e38"))
    _start_from_tiny_bart(qtbot, window, monkeypatch)
    _open_folder(qtbot, window, case.build(tmp_path), monkeypatch)
    c = window.controller
    assert c.model_source == str(tmp_path / "tiny-bart") and c.trace is not None and not c.error
    _press_write(window)
    _wait(qtbot, c)
    return c


def test_an_overflow_while_writing_is_said_once_and_the_typed_target_stays(window, said, qtbot, monkeypatch,
                                                                            tmp_path):
    """The damage only writing reaches: the window must say the numbers overflowed, once, and keep the target."""
    c = _overflow_while_writing(window, qtbot, monkeypatch, tmp_path)
    messages = said + [m for m in (c.error, c.write_error) if m]
    assert len(messages) == 1 and "overflow" in messages[0], messages
    assert c.target_written is None and c.target == TYPED == window.pretrained.target_box.edit.text()


def test_a_failed_write_leaves_the_run_of_the_kept_target_shown(window, said, qtbot, monkeypatch, tmp_path):
    """Nothing changed but a Write that failed: the views still show the typed target's run (the walk's
    check that the run shown is the engine's run of the texts held then holds), and the failure is said once
    beside them, under the Target box, not in their place."""
    from walk_checks import check_state

    c = _overflow_while_writing(window, qtbot, monkeypatch, tmp_path)
    assert c.pretrained_trace is not None and c.pretrained_trace.target == c.target == TYPED
    assert c.trace is not None and not c.error, f"the views show {c.error!r} in place of the run"
    box = window.pretrained.target_box
    assert not said and "overflow" in c.write_error and box.position.isVisible()
    assert box.position.text() == f"Nothing was written: {c.write_error}"
    check_state(window)
