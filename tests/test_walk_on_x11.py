"""The random walk on a real X server (Xvfb) with Qt's xcb platform, the pointer moved by xdotool as
a user moves it (walk_x11.py): the screen oracles then compare what the X server holds, after real
expose events and the pointer's real motion, with what a full repaint draws.

Skipped, saying why, where Xvfb, xdotool or the libraries of Qt's xcb platform are missing
(`.ci/run` installs them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WALK = Path(__file__).with_name("test_random_walk.py")
SCREEN = "2700x1000x24"  # room for the lessons window beside the main window
ACTIONS = 200 if os.environ.get("CI") == "true" else 40
WALK_TIMEOUT_S = 280  # inside the 300 s a test may take


@pytest.fixture
def x_server(tmp_path):
    missing = [tool for tool in ("Xvfb", "xdotool") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install xvfb xdotool)")
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", SCREEN, "-nolisten", "tcp"],
                              pass_fds=(write,), stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as display_fd:
        display = display_fd.readline().strip()
    env = dict(os.environ, DISPLAY=f":{display}", QT_QPA_PLATFORM="xcb", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    probe = subprocess.run([sys.executable, "-c", "from PySide6 import QtWidgets; QtWidgets.QApplication([])"],
                           env=env, capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        server.terminate()
        pytest.skip(f"Qt's xcb platform does not start here: {probe.stderr.strip().splitlines()[-1:]}")
    yield env
    server.terminate()
    server.wait(10)


def test_a_walk_with_the_real_pointer_on_x11_raises_nothing_and_the_screen_tells_the_truth(x_server):
    run = subprocess.run([sys.executable, str(WALK), "--actions", str(ACTIONS), "--seed", "11", "--pointer", "x11"],
                         env=x_server, capture_output=True, text=True, timeout=WALK_TIMEOUT_S)
    assert run.returncode == 0, run.stderr[-4000:]
    assert f'"actions": {ACTIONS}' in run.stdout
