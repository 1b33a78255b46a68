"""Test set-up shared by every test: Qt runs offscreen and never touches the user's settings."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from PySide6.QtCore import QStandardPaths

from attention_explorer.application import paint_on_one_thread

# Offscreen, on a screen as large as a desktop's: the default 800 × 800 one would leave the right
# part of a full-size window off-screen, where simulated mouse events never arrive.
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    screen = Path(__file__).with_name("offscreen-screen.json")
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screen}"

# The window paints without Qt's pool of fill threads: so do the tests.
paint_on_one_thread()

# Paths the app writes to (the crash log's folder) go to Qt's test locations, not the user's.
QStandardPaths.setTestModeEnabled(True)
# The real-model catalog looks in the user's models folder (under the data home) before the installed
# packages: tests see only what they put there, in a data home of their own.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="attention-explorer-tests-")
atexit.register(shutil.rmtree, os.environ["XDG_DATA_HOME"], ignore_errors=True)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium for the tests that draw files in it (tests/chromium.py); skipped without it."""
    from chromium import Chromium, chromium_path

    if chromium_path() is None:
        pytest.skip("chromium is not installed")
    with Chromium(tmp_path_factory.mktemp("chromium-profile")) as running:
        yield running
