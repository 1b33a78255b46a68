"""The app's own settings file: a small JSON file read and written like every other file of the app.

QSettings could not be made safe: it deserialises typed values from the file (a damaged one aborted
every start), opens whatever stands at its path (a named pipe there blocked the start) and writes
through links (running as root, a settings file linked to /dev/zero replaced the device). This store
keeps the handful of methods the window uses — value, setValue, contains, allKeys, remove, sync —
over a file that is:

- read only through engine.safe_read: looked at with stat before it is opened, never waited on,
  at most MAX_SETTINGS_BYTES, strict UTF-8 JSON; values are plain JSON (window layouts as base64);
- holding bytes (window layouts) only with their SHA-256: Qt's restoreState crashes the app
  (segmentation fault) on some damaged layouts, so bytes that are not exactly what was saved are
  never given back as bytes, and the key is reset like any other unusable value;
- moved aside when it cannot be used — damaged, or not a file at all (a named pipe, device, socket,
  folder or link to nothing stands at its path) — so the next save starts a good one; `note` then
  says where it went, for the status bar;
- written only through engine.atomic_write: whole or not at all, never into anything but a regular file.

When there is no file yet, the values an earlier version kept with QSettings are brought over from its
INI file where they can be read safely (legacy_settings); that file itself is left as it was.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import sys
import time
from pathlib import Path

from .engine.atomic_write import not_regular_reason, write_text_atomically
from .engine.errors import EngineError
from .engine.safe_read import parse_json, read_user_text
from .legacy_settings import read_qt_ini

# A window layout is a few kilobytes and a sentence at most tens; a file far larger is not ours.
MAX_SETTINGS_BYTES = 4 * 1024 * 1024
MAX_SETTINGS_DEPTH = 8   # the object, a value, a value's {"base64": ...}: a few levels at most
_BYTES_KEY, _DIGEST_KEY = "base64", "sha256"  # how bytes are written: {"base64": "...", "sha256": "..."}
DAMAGED_MARK = ".damaged-"  # in the name of a file moved aside: settings.damaged-20251201-204300.json

logger = logging.getLogger("attention_explorer")


class UnusableSettings(EngineError):
    """The settings file cannot be used; the message says why."""


class SettingsStore:
    """Settings by key ("view/colormap"), kept in memory and written to `path` by sync()."""

    def __init__(self, path: str | os.PathLike, legacy_ini: str | os.PathLike | None = None):
        self.path = Path(path)
        self.note = ""                  # for the status bar: what happened to a file that could not be used
        self.refused_keys: list[str] = []  # values of an earlier version not brought over, for the reset note
        self._values: dict[str, object] = {}
        self._dirty = False
        self._writable = True
        self._load(Path(legacy_ini) if legacy_ini is not None else None)

    # --- what the window uses (the names QSettings gives them) -----------------------------------
    def value(self, key: str, default: object = None) -> object:
        return self._values.get(key, default)

    def setValue(self, key: str, value: object) -> None:  # noqa: N802 - the QSettings name the window uses
        value = _storable(key, value)
        if self._values.get(key, _MISSING) != value:
            self._values[key] = value
            self._dirty = True

    def contains(self, key: str) -> bool:
        return key in self._values

    def allKeys(self) -> list[str]:  # noqa: N802 - the QSettings name the window uses
        return sorted(self._values)

    def remove(self, key: str) -> None:
        """Remove `key` and, as QSettings does, every key under it ("view" removes "view/head")."""
        gone = [k for k in self._values if k == key or k.startswith(key + "/")]
        for k in gone:
            del self._values[k]
        self._dirty = self._dirty or bool(gone)

    def sync(self) -> bool:
        """Write the settings if they changed; never raises. False if they could not be written
        (the reason is one line on stderr and in the log)."""
        if not self._dirty:
            return True
        if not self._writable:
            return False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomically(self.path, self._to_json())
        except OSError as exc:
            say_not_saved("the settings", self.path, exc)
            return False
        self._dirty = False
        return True

    # --- reading ---------------------------------------------------------------------------------
    def _load(self, legacy_ini: Path | None) -> None:
        try:
            values = _read_settings_file(self.path)
        except UnusableSettings as exc:
            self._move_aside(str(exc))
            return
        if values is not None:
            self._values = values
        elif legacy_ini is not None:
            self._bring_over(legacy_ini)

    def _move_aside(self, reason: str) -> None:
        try:
            aside = move_aside(self.path)
        except OSError as exc:
            self._writable = False  # what is there stays as it is, and is not written over either
            self.note = (f"Settings unreadable ({reason}) and not movable from {shown_path(self.path)} "
                         f"({exc.strerror or exc}): the defaults are used and not saved.")
            return
        self.note = f"Settings unreadable ({reason}): moved to {shown_path(aside)}; the defaults are used."

    def _bring_over(self, legacy_ini: Path) -> None:
        try:
            if not os.path.lexists(legacy_ini):
                return
            values, self.refused_keys = read_qt_ini(
                read_user_text(legacy_ini, "settings file", max_bytes=MAX_SETTINGS_BYTES, error=UnusableSettings))
        except (UnusableSettings, OSError, ValueError) as exc:
            self.note = f"Settings of an earlier version unreadable ({exc}); the defaults are used."
            return
        # A window layout of Qt's own format is given to restoreState, which may crash on damaged
        # bytes; an earlier version's carries no digest to tell, so the docks start as they are.
        values.pop("window/state", None)
        self._values = values
        self._dirty = bool(values)

    def _to_json(self) -> str:
        encoded = {key: _encoded_bytes(value) if isinstance(value, bytes) else value
                   for key, value in sorted(self._values.items())}
        # ASCII: a text holding a lone surrogate (which UTF-8 cannot encode) is written as \udXXXX
        return json.dumps(encoded, indent=1, allow_nan=False) + "\n"


_MISSING = object()


def _read_settings_file(path: Path) -> dict[str, object] | None:
    """The values in `path`, or None if there is no file. UnusableSettings for anything else."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise UnusableSettings(f"it is a link to {os.path.realpath(path)}, which does not exist") from None
        return None
    except OSError as exc:
        raise UnusableSettings(exc.strerror or str(exc)) from None
    reason = not_regular_reason(info.st_mode)
    if reason is not None:
        raise UnusableSettings(reason)
    text = read_user_text(path, "settings file", max_bytes=MAX_SETTINGS_BYTES, error=UnusableSettings)
    data = parse_json(text, path.name, "settings file", max_depth=MAX_SETTINGS_DEPTH, error=UnusableSettings)
    if not isinstance(data, dict):
        raise UnusableSettings(f"{path.name}: holds {type(data).__name__}, not settings by name")
    return {key: _decoded(value) for key, value in data.items() if _finite(value)}


def _encoded_bytes(value: bytes) -> dict[str, str]:
    return {_BYTES_KEY: base64.b64encode(value).decode("ascii"), _DIGEST_KEY: hashlib.sha256(value).hexdigest()}


def _decoded(value: object) -> object:
    """Bytes come back from {"base64": ..., "sha256": ...} when the digest matches; anything else
    as JSON gave it (each key is checked by the one who reads it, so a wrong type or damaged bytes
    reset that key alone)."""
    if isinstance(value, dict) and set(value) == {_BYTES_KEY, _DIGEST_KEY} and all(
            isinstance(part, str) for part in value.values()):
        with contextlib.suppress(binascii.Error, ValueError):
            data = base64.b64decode(value[_BYTES_KEY], validate=True)
            if hashlib.sha256(data).hexdigest() == value[_DIGEST_KEY]:
                return data
    return value


def _finite(value: object) -> bool:
    """False for a value holding NaN or Infinity (which Python's JSON reader lets through): such a
    key is dropped, as it could be neither used nor written back as standard JSON."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _storable(key: str, value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise TypeError(f"setting {key}: {value} cannot be saved")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(item, bool | int | float | str) for item in value):
        return [_storable(key, item) for item in value]  # a list of texts or numbers (recent files)
    raise TypeError(f"setting {key}: a {type(value).__name__} cannot be saved; give text, a number, bytes "
                    f"or a list of texts and numbers")


def say_not_saved(what: str, path: Path, exc: OSError) -> None:
    """One line on stderr and in the log: settings are saved when the app closes, with no window to tell."""
    message = f"attention-explorer: cannot save {what} in {path}: {exc.strerror or exc}"
    print(message, file=sys.stderr)
    logger.warning(message)


def shown_path(path: Path) -> str:
    """A path as the status bar shows it: the home folder as ~, so that the file's own name fits."""
    home = Path.home()
    return f"~{os.sep}{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def move_aside(path: Path) -> Path:
    """Rename what stands at `path` to a free name beside it, and return that name. A link or a
    pipe is renamed itself: nothing is opened or followed. OSError if it cannot be renamed."""
    aside = _free_name(path)
    os.rename(path, aside)
    return aside


def _free_name(path: Path) -> Path:
    """settings.damaged-20251201-204300.json beside `path`, with -2, -3... if that is taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for number in itertools.count(1):
        suffix = "" if number == 1 else f"-{number}"
        aside = path.with_name(f"{path.stem}{DAMAGED_MARK}{stamp}{suffix}{path.suffix}")
        if not os.path.lexists(aside):
            return aside
