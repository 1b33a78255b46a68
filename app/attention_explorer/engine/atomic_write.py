"""Writing files so that a failure never leaves a half-written file or destroys what was there.

Every file the app writes goes through `atomic_file`: the bytes go to a temporary file beside the
target, which is renamed over it only once complete. Around that rename the target is treated with care:

- only a regular file (or a new name) is written: a folder, device, named pipe or socket at the path is
  refused, so `-o /dev/null` run as root can never replace the system's device with a file;
- a symbolic link is followed and its target replaced, so the link keeps pointing at the new content;
- an existing file keeps its permission bits (600 stays 600) and, where allowed, its owner;
- a file without write permission (444) is refused, not silently replaced, even for root;
- a file with other hard links is updated in place once the new content is complete, so every name
  sees it (a rename would leave the other names on the old content). Only that last copy is not
  atomic: the content is fully written beforehand, so a failure while rendering never touches it.

`check_writable_target` runs the same checks alone, so a caller can refuse a bad path before
spending time on rendering anything.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_NOT_REGULAR = (
    (stat.S_ISDIR, errno.EISDIR, "it is a folder, not a file"),
    (stat.S_ISFIFO, errno.EINVAL, "it is a named pipe (FIFO), not a regular file"),
    (stat.S_ISCHR, errno.EINVAL, "it is a device, not a regular file"),
    (stat.S_ISBLK, errno.EINVAL, "it is a device, not a regular file"),
    (stat.S_ISSOCK, errno.EINVAL, "it is a socket, not a regular file"),
)


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
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if old is not None and old.st_nlink > 1:
            _copy_into(tmp_name, target)
            os.unlink(tmp_name)
            return
        _take_over_metadata(tmp_name, old)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _copy_into(source: str, target: Path) -> None:
    """Overwrite `target`'s content in place (its inode, mode and links stay)."""
    with open(source, "rb") as src, open(target, "r+b") as dst:
        shutil.copyfileobj(src, dst)
        dst.truncate()
        dst.flush()
        os.fsync(dst.fileno())


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
