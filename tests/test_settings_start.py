"""The installed `attention-explorer` starts, shows its window and quits with exit status 0 whatever
stands where its settings are kept, and afterwards the settings file is a good regular file.

Each run is the installed command in a fresh process with its own home and config folders. A
`sitecustomize` module put on PYTHONPATH (Python imports it at start) waits for the window, prints
the status bar's message and closes the window the way a user would, so the settings are saved.
Before the app had its own settings file, the first case aborted every start (exit 134) and the
FIFO cases never got to the window.
"""

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, sockets and XDG folders as on Linux")

RUNS = 3 if os.environ.get("CI") == "true" else 1
BAD_ALLOC = "@Variant(\\0\\0\\0\\v\\x7f\\xff\\xff\\xff)"

QUIT_WHEN_SHOWN = textwrap.dedent("""
    import os
    import sys
    from PySide6 import QtCore, QtWidgets
    import attention_explorer.application as application

    def shown_window():
        return next((w for w in QtWidgets.QApplication.topLevelWidgets()
                     if type(w).__name__ == "MainWindow" and w.isVisible()), None)

    def quit_when_shown():
        window = shown_window()
        if window is None:
            QtCore.QTimer.singleShot(50, quit_when_shown)
            return
        def report_and_close():
            if window.controller.busy:  # a remembered real model still loading: how it ends is the point
                QtCore.QTimer.singleShot(50, report_and_close)
                return
            print("note:", window.statusBar().currentMessage(), flush=True)
            for box in QtWidgets.QApplication.topLevelWidgets():  # a failed load's message, waiting for OK
                if isinstance(box, QtWidgets.QMessageBox) and box.isVisible():
                    print("message:", " ".join(box.text().split()), flush=True)
                    box.accept()
            if not os.environ.get("OPEN_A_FILE_DIALOG"):
                QtCore.QTimer.singleShot(0, window.close)
                return
            link_at = os.environ.get("LINK_AT")
            if link_at:  # what stands at the dialog's settings file changes while the app runs
                os.symlink(os.environ["LINK_TO"], link_at + ".new")
                os.replace(link_at + ".new", link_at)
            dialog = QtWidgets.QFileDialog(window, "Open model")  # Qt reads its own settings here
            dialog.open()
            def close_both():
                dialog.reject()
                dialog.deleteLater()  # and saves them as the dialog goes
                QtCore.QTimer.singleShot(100, window.close)
            QtCore.QTimer.singleShot(300, close_both)
        QtCore.QTimer.singleShot(700, report_and_close)

    real_create = application.create_application

    def create(*args):
        app = real_create(*args)
        QtCore.QTimer.singleShot(0, quit_when_shown)
        QtCore.QTimer.singleShot(40000, lambda: sys.exit(3))  # never hang the test
        return app

    application.create_application = create
""")


def program() -> list[str]:
    script = shutil.which("attention-explorer")
    return [script] if script else [sys.executable, "-m", "attention_explorer"]


def folders(tmp_path):
    config = tmp_path / "config"
    new = config / "attention-explorer" / "Attention Explorer"
    new.mkdir(parents=True)
    return config, new / "settings.json", config / "attention-explorer" / "Attention Explorer.conf"


def start_and_quit(tmp_path, open_a_file_dialog: bool = False, **env) -> str:
    """Run the program once (opening a file dialog before quitting, if asked; `env` for the hook);
    return the status bar's message."""
    note, _messages = start_and_quit_with_messages(tmp_path, open_a_file_dialog, **env)
    return note


def start_and_quit_with_messages(tmp_path, open_a_file_dialog: bool = False, **env) -> tuple[str, list[str]]:
    """start_and_quit, with the texts of the message boxes that were open before quitting."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(QUIT_WHEN_SHOWN)
    hook_env = env
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "PYTHONPATH": str(hook),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    if open_a_file_dialog:
        env["OPEN_A_FILE_DIALOG"] = "1"
    result = subprocess.run(program(), env=env | hook_env, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, f"exit {result.returncode} (134 is an abort)\n{result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    [note] = [line for line in result.stdout.splitlines() if line.startswith("note:")]
    messages = [line.removeprefix("message:").strip() for line in result.stdout.splitlines()
                if line.startswith("message:")]
    return note.removeprefix("note:").strip(), messages


def assert_a_good_settings_file(path) -> dict:
    assert stat.S_ISREG(path.lstat().st_mode), "the settings were saved as a regular file"
    saved = json.loads(path.read_text())
    assert set(saved["window/geometry"]) == {"base64", "sha256"} and saved["model/source"] == "cat-sat-on-mat"
    return saved


def damaged_copies(path) -> list:
    return sorted(p for p in path.parent.iterdir() if ".damaged-" in p.name)


def test_an_earlier_versions_value_that_aborted_every_start_is_reset_and_named(tmp_path):
    _config, path, legacy = folders(tmp_path)
    legacy.write_text(f"[view]\ncolormap={BAD_ALLOC}\nmatrix=scaled\n[tour]\nseen=true\n")
    before = legacy.read_bytes()
    assert start_and_quit(tmp_path) == "Some saved settings could not be used and were reset: view/colormap"
    for _ in range(RUNS):
        assert start_and_quit(tmp_path) == "", "later starts read the app's own file"
    assert legacy.read_bytes() == before, "the old file is never written"
    assert assert_a_good_settings_file(path)["view/matrix"] == "scaled"


def _fifo(path):
    os.mkfifo(path)
    return path


def _socket(path):
    """A socket file made at a short name (a socket's path is limited to about 100 bytes), then moved in place."""
    short = path.parents[3] / "s"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(short))
    server.close()
    short.rename(path)
    return path


def _link_to_fifo(path):
    path.symlink_to(_fifo(path.parent.parent / "pipe-elsewhere"))
    return path


def _damaged_json(path):
    path.write_bytes(b'{"view/colormap": "magma", ')
    return path


@pytest.mark.parametrize(("make", "reason"), [
    (_fifo, "it is a named pipe (FIFO), not a regular file"),
    (_socket, "it is a socket, not a regular file"),
    (_link_to_fifo, "it is a named pipe (FIFO), not a regular file"),
    (_damaged_json, "settings.json: not valid JSON (line 1, column 28: Expecting property name enclosed in double "
                    "quotes)"),
])
def test_a_settings_file_that_cannot_be_used_is_moved_aside_named_and_replaced(tmp_path, make, reason):
    _config, path, _legacy = folders(tmp_path)
    for run in range(RUNS):
        make(path)
        kind = stat.S_IFMT(os.lstat(path).st_mode)
        note = start_and_quit(tmp_path)
        aside = damaged_copies(path)[-1]
        shown = f"~/{aside.relative_to(tmp_path)}"  # the home folder (tmp_path here) as ~
        assert note == f"Settings unreadable ({reason}): moved to {shown}; the defaults are used."
        assert stat.S_IFMT(aside.lstat().st_mode) == kind, "moved as it was: not opened, read or replaced"
        assert_a_good_settings_file(path)
        assert start_and_quit(tmp_path) == "", "the next start reads the good file"
        assert len(damaged_copies(path)) == run + 1
        if make is _link_to_fifo:
            assert stat.S_ISFIFO(os.lstat(os.readlink(aside)).st_mode), "the FIFO it pointed at is untouched"
            os.unlink(os.readlink(aside))
        path.unlink()


def test_qt_settings_shared_by_every_qt_program_are_not_read_by_the_file_dialog(tmp_path):
    config, path, _legacy = folders(tmp_path)
    shared = config / "QtProject.conf"  # where Qt's file dialog keeps its history for every Qt program
    shared.write_text(f"[FileDialog]\nviewMode={BAD_ALLOC}\n")
    before = shared.read_bytes()
    for _ in range(RUNS):
        assert start_and_quit(tmp_path, open_a_file_dialog=True) == ""
    assert shared.read_bytes() == before, "another program's file is neither read nor written"
    own = path.parent / "qt" / "QtProject.conf"
    assert "[FileDialog]" in own.read_text(), "the dialog keeps its history beside the app's settings"


def test_a_damaged_file_dialog_settings_file_is_moved_aside_before_qt_reads_it(tmp_path):
    _config, path, _legacy = folders(tmp_path)
    own = path.parent / "qt" / "QtProject.conf"
    own.parent.mkdir()
    own.write_text(f"[FileDialog]\nviewMode={BAD_ALLOC}\nhistory=file:///tmp\n")
    note = start_and_quit(tmp_path, open_a_file_dialog=True)
    [aside] = damaged_copies(own)
    assert note == ("File dialog settings unreadable (it holds values Qt would decode blindly: "
                    f"FileDialog/viewMode): moved to ~/{aside.relative_to(tmp_path)}.")
    assert BAD_ALLOC in aside.read_text() and "@Variant" not in own.read_text()
    assert start_and_quit(tmp_path, open_a_file_dialog=True) == ""


def test_a_link_put_at_the_file_dialog_settings_while_the_app_runs_is_never_opened(tmp_path):
    """Qt reads and writes a private copy of its settings made at the start; a link to a FIFO put where
    they are kept while the app runs is neither read (a FIFO would block the dialog) nor written
    through when the app saves them back."""
    _config, path, _legacy = folders(tmp_path)
    own = path.parent / "qt" / "QtProject.conf"
    own.parent.mkdir()
    own.write_text("[FileDialog]\nhistory=file:///tmp\n")
    pipe = _fifo(tmp_path / "pipe")
    assert start_and_quit(tmp_path, open_a_file_dialog=True, LINK_AT=str(own), LINK_TO=str(pipe)) == ""
    assert os.readlink(own) == str(pipe) and stat.S_ISFIFO(pipe.lstat().st_mode), "both left as they were"


# A window layout damaged in a way that made Qt's restoreState crash (segmentation fault) at every
# start, found by mutating a real saveState(): the dock counts became 0x7fffffff.
CRASHING_LAYOUT = bytes.fromhex(
    "000000ff00000000fd0000007fffffff010000000000000000fc0200000002fb0000001e006d006f00640065006c0045"
    "006400690074006f00720044006f0063006b0000000000ffffffff0000001000fffffffb0000001a006d006f0064"
    "0065006c00560069006500770044006f0063006b0000000000ffffffff000000a0007fffffff0000030000000000"
    "000000fc0100000001fb00000012007300740065007000730044006f0063006b01f8000000ffffffff0000032a00"
    "ffffff000000000000000000000004000000040000000800000008")


def test_a_damaged_window_layout_is_reset_not_handed_to_qt(tmp_path):
    import base64
    import hashlib

    _config, path, _legacy = folders(tmp_path)
    intact = CRASHING_LAYOUT.replace(bytes.fromhex("7fffffff"), bytes(4))  # what was saved, before the damage
    path.write_text(json.dumps({"tour/seen": True, "view/colormap": "magma", "window/state": {
        "base64": base64.b64encode(CRASHING_LAYOUT).decode(), "sha256": hashlib.sha256(intact).hexdigest()}}))
    assert start_and_quit(tmp_path) == "Some saved settings could not be used and were reset: window/state"
    saved = assert_a_good_settings_file(path)
    assert saved["view/colormap"] == "magma" and base64.b64decode(saved["window/state"]["base64"]) != CRASHING_LAYOUT


def test_a_remembered_real_model_whose_weights_are_a_fifo_starts_and_is_named(tmp_path):
    """The model opens on the worker, which looks at each file before opening it: the window comes up,
    says which file cannot be read, and quits with exit 0 (it used to hang at quit); the FIFO is never
    opened."""
    _config, path, _legacy = folders(tmp_path)
    model = tmp_path / "tiny-bert"
    shutil.copytree(Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-bert", model)
    weights = model / "model.safetensors"
    weights.unlink()
    os.mkfifo(weights)
    path.write_text(json.dumps({"tour/seen": True, "model/source": str(model)}))
    for _ in range(RUNS):
        note, messages = start_and_quit_with_messages(tmp_path)
        assert note == ""
        [message] = messages
        assert message.startswith(f"{weights}: is not a regular file") and message.endswith("model is unchanged.")
        assert stat.S_ISFIFO(weights.lstat().st_mode)
        path.write_text(json.dumps({"tour/seen": True, "model/source": str(model)}))
