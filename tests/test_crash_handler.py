"""The crash handler: an uncaught error is logged in full, shown in one dialog, and the app goes on.

pytest-qt captures exceptions raised inside Qt during a test, so the handler is called directly here
with a real exception, as sys.excepthook and threading.excepthook would call it.
"""

import faulthandler
import os
import sys
import threading

import pytest
import shiboken6
from PySide6 import QtCore, QtWidgets

from attention_explorer.crash_handler import LOG_FILE_NAME, NATIVE_CRASH_FILE_NAME, CrashHandler, default_log_dir
from attention_explorer.views.crash_dialog import QtCrashDialog, show_crash_dialog


def _raised(exc: BaseException):
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 - we want the traceback of any kind
        return type(caught), caught, caught.__traceback__


@pytest.fixture(autouse=True)
def fault_handler(monkeypatch):
    """faulthandler as the app finds it at start (off), standing in for the real one: the test runner's
    own stays on stderr, where a segfault in any later test is reported."""
    files = []
    monkeypatch.setattr(faulthandler, "is_enabled", lambda: bool(files))
    monkeypatch.setattr(faulthandler, "enable", lambda file, **_: files.append(file))
    monkeypatch.setattr(faulthandler, "disable", files.clear)
    return files


@pytest.fixture
def handler(qtbot, tmp_path):
    shown = []

    def show(summary, details, log_path):
        dialog = show_crash_dialog(summary, details, log_path)
        shown.append(dialog)
        return dialog

    crash = CrashHandler(tmp_path / "log", show).install()
    crash.shown = shown
    yield crash
    crash.uninstall()
    for dialog in shown:
        if shiboken6.isValid(dialog):  # closed ones delete themselves
            dialog.close()


def test_install_takes_both_hooks_and_uninstall_gives_them_back(tmp_path, fault_handler):
    before = (sys.excepthook, threading.excepthook)
    crash = CrashHandler(tmp_path / "log").install()
    assert sys.excepthook == crash.handle
    assert threading.excepthook == crash._handle_thread
    assert len(fault_handler) == 1 and os.path.samestat(os.fstat(fault_handler[0].fileno()),
                                                        os.stat(tmp_path / "log" / NATIVE_CRASH_FILE_NAME)), \
        "faulthandler writes into the log folder"
    crash.uninstall()
    assert (sys.excepthook, threading.excepthook) == before and not fault_handler


def test_a_fault_handler_already_reporting_is_left_to_report(tmp_path, fault_handler):
    """Under `python -X faulthandler` or a test runner, a segfault's stack goes where it was asked to."""
    faulthandler.enable(sys.__stderr__)
    crash = CrashHandler(tmp_path / "log").install()
    assert fault_handler == [sys.__stderr__] and not (tmp_path / "log" / NATIVE_CRASH_FILE_NAME).exists()
    crash.uninstall()
    assert fault_handler == [sys.__stderr__]


def test_an_error_is_logged_with_its_traceback_and_shown_in_a_dialog(handler, qtbot):
    handler.handle(*_raised(ZeroDivisionError("division by zero")))
    qtbot.waitUntil(lambda: len(handler.shown) == 1)
    log = (handler.log_dir / LOG_FILE_NAME).read_text()
    assert "Traceback (most recent call last)" in log and "ZeroDivisionError: division by zero" in log
    assert "_raised" in log, "the log names the function that raised"
    dialog = handler.shown[0]
    assert dialog.isVisible() and not dialog.isModal()
    assert dialog.message.text() == "ZeroDivisionError: division by zero"
    assert str(handler.log_dir / LOG_FILE_NAME) in dialog.log_line.text()


def test_copy_details_puts_the_traceback_on_the_clipboard(handler, qtbot):
    handler.handle(*_raised(KeyError("head")))
    qtbot.waitUntil(lambda: len(handler.shown) == 1)
    handler.shown[0].copy_button.click()
    copied = QtWidgets.QApplication.clipboard().text()
    assert copied.startswith("Attention Explorer ") and "KeyError: 'head'" in copied
    assert "Traceback (most recent call last)" in copied


def test_an_error_storm_gives_one_dialog_with_a_count(handler, qtbot):
    for number in range(50):
        handler.handle(*_raised(RuntimeError(f"paint failed {number}")))
    qtbot.waitUntil(lambda: bool(handler.shown) and handler.shown[0].repeats == 49)
    assert len(handler.shown) == 1
    dialog = handler.shown[0]
    assert dialog.repeat_line.text() == "49 more errors since, the last: RuntimeError: paint failed 49"
    assert dialog.details.count("Traceback") == 2, "the first and the latest report, not all fifty"
    assert (handler.log_dir / LOG_FILE_NAME).read_text().count("RuntimeError: paint failed") == 50


def test_after_the_dialog_is_closed_the_next_error_opens_a_new_one(handler, qtbot):
    handler.handle(*_raised(ValueError("first")))
    qtbot.waitUntil(lambda: len(handler.shown) == 1)
    handler.shown[0].close()
    handler.handle(*_raised(ValueError("second")))
    qtbot.waitUntil(lambda: len(handler.shown) == 2)
    assert handler.shown[1].message.text() == "ValueError: second"


def test_an_error_in_a_worker_thread_reaches_the_same_dialog(handler, qtbot):
    def work():
        raise OSError("disk gone")

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: len(handler.shown) == 1)
    assert handler.shown[0].message.text() == "OSError: disk gone"
    assert "in work" in (handler.log_dir / LOG_FILE_NAME).read_text()


def test_the_window_keeps_its_state_after_an_error(handler, qtbot, make_window_for_crash):
    window = make_window_for_crash
    window.controller.set_sentence("the cat sat")
    handler.handle(*_raised(RuntimeError("boom")))
    qtbot.waitUntil(lambda: len(handler.shown) == 1)
    assert window.controller.sentence == "the cat sat"
    assert window.sentence_box.toPlainText() == "the cat sat"
    assert window.controller.trace.tokens == ["the", "cat", "sat"]
    assert handler.shown[0].parentWidget() is window, "over the main window, not a passing message box"


def test_an_unwritable_log_folder_still_shows_the_dialog(qtbot, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    shown = []
    crash = CrashHandler(blocker / "log", lambda *a: shown.append(a) or QtCrashDialog(*a)).install()
    try:
        assert "cannot write the log" in capsys.readouterr().err
        crash.handle(*_raised(ValueError("no log")))
        qtbot.waitUntil(lambda: len(shown) == 1)
        assert shown[0][0] == "ValueError: no log"
    finally:
        crash.uninstall()


def test_the_default_log_folder_is_the_apps_local_data_folder():
    assert default_log_dir().name == "log"


@pytest.fixture
def make_window_for_crash(qtbot, tmp_path):
    from attention_explorer.app import MainWindow
    from attention_explorer.controller import Controller

    window = MainWindow(Controller(), QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    return window


def test_errors_in_a_real_timer_slot_and_paint_event_reach_the_handler(handler, qtbot):
    class BrokenPaint(QtWidgets.QWidget):
        def paintEvent(self, event):  # noqa: N802 - Qt API
            raise RuntimeError("paint went wrong")

    def broken_slot():
        raise LookupError("slot went wrong")

    QtCore.QTimer.singleShot(0, broken_slot)
    widget = BrokenPaint()
    qtbot.addWidget(widget)
    widget.show()
    widget.repaint()
    qtbot.waitUntil(lambda: handler.count >= 2)
    log = (handler.log_dir / LOG_FILE_NAME).read_text()
    assert "LookupError: slot went wrong" in log and "RuntimeError: paint went wrong" in log
    qtbot.waitUntil(lambda: len(handler.shown) == 1)
    assert handler.shown[0].repeats >= 1, "the second error counted in the open dialog"


def _fifo(path):
    import os

    os.mkfifo(path)
    return path


def _link_to_fifo(path):
    target = _fifo(path.with_name("pipe-elsewhere"))
    path.symlink_to(target)
    return path


def _socket(path):
    import socket

    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and sockets as on POSIX")
@pytest.mark.parametrize("name", [LOG_FILE_NAME, NATIVE_CRASH_FILE_NAME])
@pytest.mark.parametrize("make", [_fifo, _link_to_fifo, _socket], ids=["FIFO", "link to a FIFO", "socket"])
def test_a_log_that_is_not_a_regular_file_is_never_opened_and_errors_are_still_shown(qtbot, tmp_path, capsys,
                                                                                      name, make):
    import stat
    import threading as threads

    folder = tmp_path / "log"
    folder.mkdir()
    special = make(folder / name)
    shown = []
    crash = CrashHandler(folder, lambda *a: shown.append(a) or QtCrashDialog(*a))
    # opening a FIFO for writing would block until a reader came: install on a thread, with a limit
    thread = threads.Thread(target=crash.install, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), f"installing the log blocked on {make.__name__}"
    try:
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"attention-explorer: cannot write the log in {folder}: it is a")
        crash.handle(*_raised(ValueError("still shown")))
        qtbot.waitUntil(lambda: len(shown) == 1)
        assert shown[0][0] == "ValueError: still shown"
    finally:
        crash.uninstall()
    mode = os.lstat(os.path.realpath(special)).st_mode
    assert stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode), "left as it was"


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs as on POSIX")
def test_a_fifo_put_where_the_log_reopens_after_rotation_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    import stat

    from attention_explorer import crash_handler

    monkeypatch.setattr(crash_handler, "LOG_MAX_BYTES", 200)
    folder = tmp_path / "log"
    crash = CrashHandler(folder).install()

    def rotate_then_plant_a_fifo(source, dest):  # something puts a FIFO at the name as the log rotates
        os.rename(source, dest)
        os.mkfifo(source)

    crash._file_handler.rotator = rotate_then_plant_a_fifo
    try:
        crash_handler.logger.info("x" * 150)
        crash_handler.logger.info("y" * 150)  # rotates: the new log would be opened at the FIFO
        err = capsys.readouterr().err
    finally:
        crash.uninstall()
    assert "Traceback" not in err and "--- Logging error ---" not in err
    assert err.strip() == (f"attention-explorer: cannot write the log {folder / LOG_FILE_NAME}: "
                           "it is a named pipe (FIFO), not a regular file")
    assert stat.S_ISFIFO((folder / LOG_FILE_NAME).lstat().st_mode)
    assert "x" * 150 in (folder / f"{LOG_FILE_NAME}.1").read_text()


def test_the_log_rotates_into_numbered_files(tmp_path, monkeypatch):
    from attention_explorer import crash_handler

    monkeypatch.setattr(crash_handler, "LOG_MAX_BYTES", 300)
    crash = CrashHandler(tmp_path).install()
    try:
        for number in range(12):
            crash_handler.logger.info("record %d %s", number, "x" * 100)
    finally:
        crash.uninstall()
    names = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(LOG_FILE_NAME))
    assert names == [LOG_FILE_NAME] + [f"{LOG_FILE_NAME}.{n}" for n in (1, 2, 3)]
    assert "record 11" in (tmp_path / LOG_FILE_NAME).read_text()
