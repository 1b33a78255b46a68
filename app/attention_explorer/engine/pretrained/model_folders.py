"""Where the app looks for real models' files besides the Python packages that ship them.

A user of the standalone app has no pip, so the two catalog models are also found when their files
are put in a models folder: the app's data folder + `models` (where the log folder is too), and, for
the standalone app, a `models` folder beside the program (a copy of the app carried on a USB stick
brings its models along). The data folder is computed here the way Qt's
QStandardPaths.AppLocalDataLocation computes it for the window (a test checks that the two agree),
because the engine may not import Qt.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The names the window gives Qt (application.py): the data folder is <base>/<organisation>/<application>.
ORGANIZATION = "attention-explorer"
APPLICATION = "Attention Explorer"
MODELS = "models"


def running_frozen() -> bool:
    """True in the standalone app (PyInstaller sets sys.frozen), where no pip is at hand."""
    return bool(getattr(sys, "frozen", False))


def app_data_folder() -> Path:
    """The app's local data folder: ~/.local/share/attention-explorer/Attention Explorer on Linux
    (or under $XDG_DATA_HOME), ~/Library/Application Support/... on macOS, %LOCALAPPDATA%\\... on Windows."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"  # relative: ignored, as Qt does
    return base / ORGANIZATION / APPLICATION


def user_models_folder() -> Path:
    """The models folder every form of the app reads, and the one the help tells people to use."""
    return app_data_folder() / MODELS


def program_models_folder() -> Path | None:
    """The standalone app's `models` folder beside the program; None when running from Python, where
    the program is the interpreter."""
    return models_folder_beside(Path(sys.executable)) if running_frozen() else None


def models_folder_beside(program: Path) -> Path:
    """The `models` folder beside the standalone `program` (beside "Attention Explorer.app" on macOS,
    not inside it); links to the program are followed to where it really is."""
    folder = Path(program).resolve().parent
    bundle = next((parent for parent in (folder, *folder.parents) if parent.suffix == ".app"), None)
    return (bundle.parent if bundle else folder) / MODELS


def models_folders() -> list[Path]:
    """Every folder looked in, in order: the user's first, then the one beside the program."""
    beside_program = program_models_folder()
    return [user_models_folder(), *([beside_program] if beside_program else [])]
