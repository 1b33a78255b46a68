"""Opening a web address or a folder with the desktop's own program (browser, file manager).

Qt's QDesktopServices does it everywhere but in the standalone app on Linux: there the program
PyInstaller starts has LD_LIBRARY_PATH pointing into the bundle, and xdg-open and the file manager it
starts would inherit that and load the bundle's copies of Qt and other libraries instead of their own,
and fail or crash. So there xdg-open is started with the library path the user had (PyInstaller keeps
it as LD_LIBRARY_PATH_ORIG), as PyInstaller's own notes on launching external programs advise.
"""

from __future__ import annotations

import sys

from PySide6 import QtCore, QtGui

from ..engine.pretrained.model_folders import running_frozen

BUNDLE_LIBRARY_PATH = "LD_LIBRARY_PATH"
USERS_LIBRARY_PATH = "LD_LIBRARY_PATH_ORIG"


def environment_for_desktop_programs(environment: QtCore.QProcessEnvironment) -> QtCore.QProcessEnvironment:
    """`environment` with the library path the user had before the standalone app changed it."""
    cleaned = QtCore.QProcessEnvironment(environment)
    if cleaned.contains(USERS_LIBRARY_PATH):
        cleaned.insert(BUNDLE_LIBRARY_PATH, cleaned.value(USERS_LIBRARY_PATH))
        cleaned.remove(USERS_LIBRARY_PATH)
    else:
        cleaned.remove(BUNDLE_LIBRARY_PATH)
    return cleaned


def open_with_desktop(url: QtCore.QUrl) -> bool:
    """Open `url` (a web address, or a folder as QUrl.fromLocalFile) in the desktop's program for it;
    False when none could be started, so the caller can show the address instead."""
    if running_frozen() and sys.platform.startswith("linux"):
        process = QtCore.QProcess()
        process.setProgram("xdg-open")
        process.setArguments([url.toString() if not url.isLocalFile() else url.toLocalFile()])
        process.setProcessEnvironment(environment_for_desktop_programs(QtCore.QProcessEnvironment.systemEnvironment()))
        started = process.startDetached()  # (ok, pid) in some PySide6 versions, ok alone in others
        return bool(started[0] if isinstance(started, tuple) else started)
    return QtGui.QDesktopServices.openUrl(url)
