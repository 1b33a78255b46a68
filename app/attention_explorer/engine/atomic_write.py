"""Writing files so that a failure never leaves a half-written file or destroys what was there.

Every file the app writes goes through here: exports, model files and settings through
`atomic_file`, the log through `open_for_append`. The bytes go to a temporary file beside the target,
which is renamed over it only once complete. Around that rename the target is treated with care:

- only a regular file (or a new name) is written: a folder, device, named pipe or socket at the path is
  refused, looked at with stat before anything is opened, so `-o /dev/null` run as root can never
  replace the system's device with a file;
- a symbolic link is followed only to a regular file, which is replaced, so the link keeps pointing
  at the new content; a link to nothing is refused (writing would create a file wherever it points);
- an existing file keeps its permission bits (600 stays 600) and, where allowed, its owner;
- a file without write permission (444) is refused, not silently replaced, even for root;
- a file with other hard links gets its new content copied into it once that content is complete,
  so every name sees it (a rename would leave the other names on the old content); the copy is
  made so that killing the app cannot tear it (see in_place_update).

A temporary file carries the number of the process writing it (`.name.RANDOM.PID.tmp`), so one
left by a process that was killed is recognised and removed by the next save of the same file.

`check_writable_target` runs the same checks alone, so a caller can refuse a bad path before
spending time on rendering anything.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .in_place_update import update_in_place

_NOT_REGULAR = (
    (stat.S_ISDIR, errno.EISDIR, "it is a folder, not a file"),
    (stat.S_ISFIFO, errno.EINVAL, "it is a named pipe (FIFO), not a regular file"),
    (stat.S_ISCHR, errno.EINVAL, "it is a device, not a regular file"),
    (stat.S_ISBLK, errno.EINVAL, "it is a device, not a regular file"),
    (stat.S_ISSOCK, errno.EINVAL, "it is a socket, not a regular file"),
)
# temporaries whose process cannot be asked about (written before they carried its number, or on
# Windows): removed once this old, when no save of the same file can still be running
_UNNUMBERED_STALE_SECONDS = 3600
_MKSTEMP_RANDOM = re.compile(r"[a-z0-9_]{8}")


def not_regular_reason(mode: int) -> str | None:
    """Why a file of this stat mode must not be written or read as a file, or None for a regular one."""
    for test, _code, reason in _NOT_REGULAR:
        if test(mode):
            return reason
    return None if stat.S_ISREG(mode) else "it is not a regular file"


def check_writable_target(path: str | os.PathLike) -> Path:
    """The file that writing `path` will replace (the end of any symbolic links), after checking
    that it can be written: a regular file with write permission, or a new name in a writable folder.

    Raises OSError whose strerror says, in plain words, what is wrong.
    """
    given = Path(path)
    if str(path) == "" or given.name in ("", ".", ".."):
        raise OSError(errno.EISDIR, "it names a folder, not a file", str(path))
    target = Path(os.path.realpath(given))
    info = _stat_or_none(target)
    if info is not None:
        for test, code, reason in _NOT_REGULAR:
            if test(info.st_mode):
                raise OSError(code, reason, str(path))
        if not info.st_mode & 0o222:  # refused even for root, who could write it anyway
            raise OSError(errno.EACCES, "the file is read-only", str(path))
        if not os.access(target, os.W_OK):
            raise OSError(errno.EACCES, "you have no permission to change this file", str(path))
    elif given.is_symlink():
        raise OSError(errno.ENOENT, f"it is a link to {target}, which does not exist", str(path))
    _check_folder(target.parent, str(path))
    return target


def _check_folder(folder: Path, given: str) -> None:
    if not folder.exists():
        raise OSError(errno.ENOENT, f"there is no folder {folder}", given)
    if not folder.is_dir():
        raise OSError(errno.ENOTDIR, f"{folder} is not a folder", given)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OSError(errno.EACCES, f"the folder {folder} is not writable", given)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to write `path`'s new content into; it replaces `path` when the block ends
    without an exception, and is thrown away otherwise."""
    target = check_writable_target(path)
    old = _stat_or_none(target)
    remove_stale_temporaries(target)
    fd, tmp_name = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix=f".{os.getpid()}.tmp",
                                    dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if old is not None and old.st_nlink > 1:
            update_in_place(tmp_name, target, old)
            return
        _take_over_metadata(tmp_name, old)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def open_for_append(path: str | os.PathLike) -> int:
    """A descriptor that appends to `path` (created if new), for a log: checked as `atomic_file`
    checks its target, before it is opened. A log is appended to in place, since it is read while
    it grows; a kill can cut only its last line."""
    target = check_writable_target(path)
    flags = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    fd = os.open(target, flags, 0o666)
    reason = not_regular_reason(os.fstat(fd).st_mode)  # something else may have been put there meanwhile
    if reason is not None:
        os.close(fd)
        raise OSError(errno.EINVAL, reason, str(path))
    return fd


def remove_stale_temporaries(target: Path) -> list[str]:
    """Remove the temporary files that saves of `target` left beside it when they were killed;
    return their names. A temporary of a save still running (its process alive) is left alone."""
    prefix = _temporary_prefix(target)
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and _is_stale(name[len(prefix):-len(".tmp")], entry):
                os.unlink(entry.path)
                removed.append(name)
    return removed


def _temporary_prefix(target: Path) -> str:
    return f".{target.name}."


def _is_stale(middle: str, entry: os.DirEntry) -> bool:
    """`middle` is RANDOM.PID for temporaries of this version, RANDOM alone for older ones."""
    random_part, _, pid = middle.rpartition(".")
    numbered = bool(_MKSTEMP_RANDOM.fullmatch(random_part)) and pid.isdigit()
    if numbered and sys.platform != "win32":  # on Windows, os.kill(pid, 0) would signal the process
        return not _process_alive(int(pid))
    if numbered or _MKSTEMP_RANDOM.fullmatch(middle):
        return time.time() - entry.stat(follow_symlinks=False).st_mtime > _UNNUMBERED_STALE_SECONDS
    return False


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another save of this app, on another thread
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, and belongs to someone else
    return True


def _take_over_metadata(tmp_name: str, old: os.stat_result | None) -> None:
    """Give the new file the old one's mode and owner, or for a new file the usual mode (mkstemp makes 600)."""
    if old is None:
        os.chmod(tmp_name, 0o666 & ~_current_umask())
        return
    os.chmod(tmp_name, stat.S_IMODE(old.st_mode))
    if hasattr(os, "chown") and (old.st_uid, old.st_gid) != _owner(tmp_name):
        with contextlib.suppress(OSError):  # only root may give a file away; others keep their own
            os.chown(tmp_name, old.st_uid, old.st_gid)


def _owner(name: str) -> tuple[int, int]:
    info = os.stat(name)
    return info.st_uid, info.st_gid


def _stat_or_none(target: Path) -> os.stat_result | None:
    try:
        return os.stat(target)
    except (FileNotFoundError, NotADirectoryError):  # a new name, or a folder part that is a file
        return None


def write_bytes_atomically(path: str | os.PathLike, data: bytes) -> None:
    with atomic_file(path) as handle:
        handle.write(data)


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    write_bytes_atomically(path, text.encode("utf-8"))


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
