"""Reading a file the user named, so that no file can hang, exhaust or crash the app.

Whatever the path points at — a FIFO that never gets a writer, /dev/zero, a folder, a socket, a
gigabyte of text, JSON nested thousands of levels deep, bytes that are not UTF-8 — the reader either
returns the text or raises one error whose message names the file and says what to do. Every file
the app reads on the user's behalf (model files, including the one remembered from the last run)
goes through here, so the limits of engine.limits hold everywhere.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .errors import EngineError
from .limits import MAX_FILE_BYTES, MAX_JSON_DEPTH

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET_STEP = np.zeros(256, dtype=np.int8)  # +1 for a byte that opens a level, −1 for one that closes it
_BRACKET_STEP[list(b"[{")] = 1
_BRACKET_STEP[list(b"]}")] = -1


def read_user_text(path: str | os.PathLike, kind: str = "model file", *, max_bytes: int = MAX_FILE_BYTES,
                   error: type[EngineError] = EngineError, advice: str | None = None) -> str:
    """The UTF-8 text of a regular file of at most `max_bytes` (a leading BOM is dropped).

    Anything else raises `error` with one line naming the file (`advice` says what to do instead of
    "choose a {kind}"). The file is opened through open_regular_file, so a FIFO or a device is
    refused, never read.
    """
    path = Path(path)
    data = read_user_bytes(path, kind, max_bytes=max_bytes, error=error, advice=advice)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path.name}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start:,}); "
                    f"save the {kind} as UTF-8") from None


def read_user_bytes(path: str | os.PathLike, kind: str = "file", *, max_bytes: int = MAX_FILE_BYTES,
                    error: type[EngineError] = EngineError, advice: str | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, with the same checks as read_user_text."""
    path = Path(path)
    with open_regular_file(path, kind, max_bytes=max_bytes, error=error, advice=advice) as (handle, _size):
        try:
            data = _read_at_most(handle.fileno(), max_bytes + 1)
        except OSError as exc:
            raise error(_unreadable(path, exc)) from None
    if len(data) > max_bytes:
        raise error(_too_large(path, len(data), kind, max_bytes))
    return data


@contextmanager
def open_regular_file(path: str | os.PathLike, kind: str, *, max_bytes: int | None = None,
                      error: type[EngineError] = EngineError,
                      advice: str | None = None) -> Iterator[tuple[io.FileIO, int]]:
    """The open file (unbuffered, binary) and its size, for a regular file only; closed on leaving.

    The one door every file the app reads on the user's behalf comes through: the path is looked at
    with stat before it is opened, and opened without blocking, so a FIFO that never gets a writer,
    a device, a socket, a folder or a loop of links is refused with one line naming it, never read.
    The open file is looked at again (it may have been swapped meanwhile).
    """
    path = Path(path)
    advice = advice or f"choose a {kind}"
    if "\0" in str(path):  # no file system accepts the null character, and os.stat would raise ValueError
        raise error(f"{str(path)!r}: not a usable file name; {advice}")
    try:
        _check_regular(path, os.stat(path), kind, max_bytes, error, advice)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise error(_unreadable(path, exc)) from None
    handle = io.FileIO(fd, "rb", closefd=True)
    with handle:
        try:
            info = os.fstat(fd)
        except OSError as exc:
            raise error(_unreadable(path, exc)) from None
        _check_regular(path, info, kind, max_bytes, error, advice)
        yield handle, info.st_size


def json_values_at_most(text: str) -> int:
    """How many values (keys included) a JSON text can hold, counted without parsing it: each is the
    first of its array or object or follows a comma, and an object's item is two. Commas and brackets
    inside strings count too, so the bound errs only high.

    Parsed, a value costs 16 to 60 bytes where the text spends 2 to 3 on it ("[]," is a 56-byte list):
    16 MB of empty lists took 440 MB. Counting first lets a reader refuse a text before it is parsed.
    """
    return 1 + text.count("[") + 2 * (text.count("{") + text.count(","))


def parse_json(text: str, name: str, kind: str = "model file", *, max_depth: int = MAX_JSON_DEPTH,
               max_values: int | None = None, error: type[EngineError] = EngineError) -> object:
    """Standard JSON, strictly: nesting at most `max_depth` deep, at most `max_values` values (see
    json_values_at_most; None: as many as the text holds) and no key twice in one object.

    NaN and Infinity (which Python's parser accepts) come back as floats; the caller decides where a
    number may stand. Every problem raises `error` with one line naming `name` and the place.
    """
    if max_values is not None and (count := json_values_at_most(text)) > max_values:
        raise error(f"{name}: room for {count:,} values, more than the {max_values:,} a {kind} may hold; the file "
                    f"is damaged or not a {kind}")
    _check_depth(text, name, kind, max_depth, error)
    duplicated = []

    def build_object(pairs: list[tuple[str, object]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs) and not duplicated:
            seen = set()
            duplicated.append(next(k for k, _ in pairs if k in seen or seen.add(k)))
            obj = _Duplicated(obj)  # marked, so the walk below can say where it is
        return obj

    try:
        data = json.loads(text, object_pairs_hook=build_object)
    except json.JSONDecodeError as exc:
        raise error(f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:  # a second guard behind the depth check
        raise error(f"{name}: nested too deeply to read; at most {max_depth} levels are allowed") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise error(f"{name}: not usable JSON ({exc})") from None
    if duplicated:
        place = _find_duplicated(data, "")
        raise error(f"{name}: {place or 'the top level'}: the key {duplicated[0]!r} appears twice; keep one")
    return data


def json_place(parent: str, key: str | int) -> str:
    """How a message names a value: w_q[0][1], defaults.heads, notes['a b']."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if key.isidentifier():
        return f"{parent}.{key}" if parent else key
    return f"{parent}[{key!r}]"


class _Duplicated(dict):
    """An object of the file in which some key appeared twice."""


def _find_duplicated(value: object, place: str) -> str | None:
    """The place of the object marked _Duplicated (depth is bounded, so recursion is safe)."""
    if isinstance(value, _Duplicated):
        return place
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        found = _find_duplicated(child, json_place(place, key))
        if found is not None:
            return found
    return None


def _check_regular(path: Path, info: os.stat_result, kind: str, max_bytes: int | None,
                   error: type[EngineError], advice: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{path}: is a folder; {advice}" + (" inside it" if advice.startswith("choose") else ""))
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{path}: is not a regular file (a device, pipe or socket); {advice}")
    if max_bytes is not None and info.st_size > max_bytes:
        raise error(_too_large(path, info.st_size, kind, max_bytes))


def _unreadable(path: Path, exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file"
    if exc.errno == errno.ELOOP:
        return f"{path}: is a symbolic link that leads round in a loop; point it at the file itself"
    return f"{path}: cannot be read ({exc.strerror or exc}); check the path and its permissions"


def _too_large(path: Path, size: int, kind: str, max_bytes: int) -> str:
    return (f"{path.name}: is {_megabytes(size)}; a {kind} may be at most {_megabytes(max_bytes)}, "
            "so this is not one")


def _megabytes(size: int) -> str:
    return f"{size / 2 ** 20:,.1f} MB".replace(".0 MB", " MB")


def _read_at_most(fd: int, count: int) -> bytes:
    chunks, remaining = [], count
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _check_depth(text: str, name: str, kind: str, max_depth: int, error: type[EngineError]) -> None:
    """Refuse nesting deeper than `max_depth` before parsing: brackets counted outside strings,
    vectorised, so a 16 MB file of '[' is refused in milliseconds instead of overflowing the stack."""
    blanked = _STRING.sub(lambda m: " " * len(m.group()), text)  # same length: positions still match
    codes = np.frombuffer(blanked.encode("utf-8", "replace"), dtype=np.uint8)
    where = np.flatnonzero(_BRACKET_STEP[codes])           # positions of the brackets only
    depth = np.cumsum(_BRACKET_STEP[codes[where]], dtype=np.int64)
    if depth.size and depth.max() > max_depth:
        first = int(where[np.argmax(depth > max_depth)])
        line = codes[:first].tobytes().count(b"\n") + 1
        raise error(f"{name}: nested more than {max_depth} levels deep (line {line}); "
                    f"a {kind} needs only a few levels")
