"""Census results kept between runs, one JSON file per model, texts and settings.

The key is a hash of the model's weights (its files' content for a real model, its numbers and
options for a toy one), of the texts (the battery's own, or a user's file's content and split) and
of the settings: change any and the census runs again. Files are written through the engine's
checked writer (atomic: a failed write leaves no half file) into a folder the caller gives, the
app's data folder; one that cannot be read back (damaged, another version) is ignored, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from ..atomic_write import write_text_atomically
from ..errors import EngineError
from ..safe_read import read_user_text
from .measures import CensusSettings
from .result import CensusResult

CACHE_VERSION = 1
# The names application.create_application gives Qt, which makes its data folder of them.
ORGANISATION, APPLICATION = "attention-explorer", "Attention Explorer"


def app_data_folder() -> Path:
    """The app's local data folder, where Qt's QStandardPaths.AppLocalDataLocation puts it (Linux
    ~/.local/share/attention-explorer/Attention Explorer, or under $XDG_DATA_HOME; macOS ~/Library/
    Application Support/…; Windows %LOCALAPPDATA%\\…), found without loading Qt, so the command line
    and the window share one cache."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / ORGANISATION / APPLICATION


def default_cache_folder() -> Path:
    return app_data_folder() / "census"


def cache_key(fingerprint: str, source_digest: str, settings: CensusSettings) -> str:
    text = json.dumps([CACHE_VERSION, fingerprint, source_digest, settings.to_dict()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class CensusCache:
    """A folder of cached census results (made when the first result is stored)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    def path(self, key: str) -> Path:
        return self.folder / f"census-{key[:40]}.json"

    def load(self, key: str) -> CensusResult | None:
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            data = json.loads(read_user_text(path, "census cache file"))
            if data.get("key") != key:
                return None
            return CensusResult.from_dict(data["result"])
        except (EngineError, ValueError, KeyError, TypeError, IndexError):
            return None

    def store(self, key: str, result: CensusResult) -> None:
        """Write `result` under `key`; OSError if the folder cannot be made or written."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.path(key), json.dumps({"key": key, "result": result.to_dict()}))
