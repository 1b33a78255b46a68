"""The window paints on its own thread; the command line's exports fill large images on Qt's pool.

Qt's raster engine hands large fills to a pool of threads and waits for them. For the window's many
small fills (scroll bars, chips, table cells) the hand-over cost more than the fill, so the window
turns the pool off before Qt first reads the setting; a figure's large PNG fills faster with it."""

import os
import subprocess
import sys

SHOW_SETTING = "import os; print(os.environ.get('QT_NO_GUI_THREADPOOL', 'unset'))"


def _run(code: str) -> str:
    env = {key: value for key, value in os.environ.items() if key != "QT_NO_GUI_THREADPOOL"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_window_turns_qts_fill_threads_off_before_its_application_starts():
    code = ("from attention_explorer.application import create_application\n"
            "from PySide6 import QtGui\n"
            "app = create_application()\n"
            "image = QtGui.QImage(400, 400, QtGui.QImage.Format.Format_ARGB32)\n"
            "image.fill(0)\n"  # Qt's first fill: the setting is read here, so it must be set before
            + SHOW_SETTING)
    assert _run(code) == "1"


def test_the_command_lines_exports_keep_qts_fill_threads():
    code = "from attention_explorer.headless import ensure_application\nensure_application()\n" + SHOW_SETTING
    assert _run(code) == "unset"
