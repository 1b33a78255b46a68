"""Test set-up shared by every test: Qt runs offscreen and never touches the user's settings."""

import os
from pathlib import Path

from PySide6.QtCore import QStandardPaths

# Offscreen, on a screen as large as a desktop's: the default 800 × 800 one would leave the right
# part of a full-size window off-screen, where simulated mouse events never arrive.
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    screen = Path(__file__).with_name("offscreen-screen.json")
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screen}"

# Paths the app writes to (the crash log's folder) go to Qt's test locations, not the user's.
QStandardPaths.setTestModeEnabled(True)
