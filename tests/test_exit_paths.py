"""Quitting the real program with the Lessons window, the model editor or a dialog open exits 0.

Each case runs the `attention-explorer` entry point in a fresh process (offscreen, with its own home
folder) and a timer that opens things and then quits, the way a user would, so a crash while Qt and
Python shut down shows up as a non-zero exit status.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPEATS = 3 if os.environ.get("CI") == "true" else 1

DRIVER = textwrap.dedent("""
    import sys
    from PySide6 import QtCore, QtWidgets
    from attention_explorer import application, cli

    def find_window():
        from attention_explorer.app import MainWindow
        return next(w for w in QtWidgets.QApplication.topLevelWidgets() if isinstance(w, MainWindow))

    def shown_window():
        return next((w for w in QtWidgets.QApplication.topLevelWidgets()
                     if type(w).__name__ == "MainWindow" and w.isVisible()), None)

    def start_when_shown():
        # the scenario's times count from the window on screen: a busy machine takes a second or
        # more to import and build it, and an action due before it exists would test nothing
        if shown_window() is None:
            QtCore.QTimer.singleShot(50, start_when_shown)
            return
        for ms, action in SCENARIO:
            after(ms, action)
        QtCore.QTimer.singleShot(SHOW_AT, report_open_windows_then_quit)

    def after(ms, action):
        QtCore.QTimer.singleShot(ms, lambda: action(find_window()))

    def report_open_windows_then_quit():
        # the quit is chained after the report, not timed beside it: Qt lets coarse timers due within
        # 5% of each other fire in either order
        shown = {type(w).__name__ for w in QtWidgets.QApplication.topLevelWidgets() if w.isVisible()}
        if find_window().model_editor_dock.isVisible():
            shown.add("model editor")
        print("open:", ", ".join(sorted(shown)), flush=True)
        print("collecting:", __import__("gc").isenabled(), flush=True)
        after(100, QUIT)

    real_create = application.create_application

    def create(*args):
        app = real_create(*args)
        QtCore.QTimer.singleShot(0, start_when_shown)
        QtCore.QTimer.singleShot(30000, lambda: sys.exit(3))  # never hang the test
        return app

    application.create_application = create
    SCENARIO = {scenario}
    QUIT = {quit}
    sys.exit(cli.main(ARGS))
""")

# scenario: (timed actions, when to list the open windows, what must be open then, how to quit after)
SCENARIOS = {
    "every lesson visited": ("[(300 + 150 * i, lambda w, k=k: w.show_lesson(k)) for i, (k, _) in "
                             "enumerate(__import__('attention_explorer.labs.lesson_list', fromlist=['x']).LESSONS)]",
                             2100, ["QtLessonsWindow"], "lambda w: w.quit_action.trigger()"),
    "model editor and a message open": ("[(300, lambda w: w.model_editor_dock.show()),"
                                        " (400, lambda w: w.show_about())]",
                                        800, ["model editor", "QMessageBox"],
                                        "lambda w: QtWidgets.QApplication.quit()"),
    "export dialog open": ("[(300, lambda w: w.export_dialog('heatmap'))]", 700, ["QtExportDialog"],
                           "lambda w: w.close()"),
    "after a GIF export": ("[(300, lambda w: w.export_to('steps', ARGS_DIR + '/s.gif'))]", 1100, ["MainWindow"],
                           "lambda w: w.close()"),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_quitting_with_windows_open_exits_0(tmp_path, scenario):
    actions, show_at, expected_open, quit_action = SCENARIOS[scenario]
    script = DRIVER.replace("{scenario}", actions).replace("{quit}", quit_action).replace("SHOW_AT", str(show_at))
    script = script.replace("ARGS_DIR", repr(str(tmp_path))).replace("ARGS", repr(["--sentence", "the cat sat"]))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    for run in range(REPEATS):
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"run {run + 1}: exit {result.returncode}\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        for name in expected_open:
            assert name in result.stdout, f"{name} was not open before quitting: {result.stdout}"
        if show_at >= 2000:  # the cycle collector, paused while the window started, is back on
            assert "collecting: True" in result.stdout, result.stdout
    if scenario == "after a GIF export":
        assert (tmp_path / "s.gif").read_bytes()[:6] == b"GIF89a"


def _catches_sigterm(pid: int) -> bool:
    """Whether process `pid` has a handler for SIGTERM yet (its SigCgt mask, from /proc)."""
    with open(f"/proc/{pid}/status") as status:
        caught = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt"))
    return bool(caught >> (signal.SIGTERM - 1) & 1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads a process's signal mask from /proc")
def test_a_real_model_is_remembered_once_open_and_sigterm_closes_the_window_exiting_0(tmp_path):
    """`kill` (a logout) closes the window as Quit does, saving the settings, and exits 0; the model opened
    from the command line is in the settings file as soon as it is open, before any quit."""
    model = Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-bert"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    settings = tmp_path / "config" / "attention-explorer" / "Attention Explorer" / "settings.json"
    app = subprocess.Popen([sys.executable, "-m", "attention_explorer", "--model", str(model)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60  # a bound on a hang, not a timing
        while not (settings.exists() and json.loads(settings.read_text()).get("model/source") == str(model)):
            assert app.poll() is None and time.monotonic() < deadline, "the model never reached the settings"
            time.sleep(0.05)
        assert _catches_sigterm(app.pid)
        app.send_signal(signal.SIGTERM)
        _out, err = app.communicate(timeout=30)
    finally:
        app.kill()
    assert app.returncode == 0, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert json.loads(settings.read_text())["model/sentence"] == "the cat sat on the mat"
