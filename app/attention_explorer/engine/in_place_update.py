"""Giving a file that has other hard links its new content, so that killing the app cannot tear it.

A file with several names (hard links) cannot be replaced by a rename: the other names would keep
the old content. Its content has to be copied into the file itself, and a copy takes time: a kill
in the middle used to leave the front of the new content on the tail of the old. So the copy is
done by a small process of its own, forked once the new content is complete on disk:

- it starts a session of its own and blocks the signals a user or a terminal sends, so killing the
  app (kill -9 included), closing its terminal or pressing Ctrl+C lets the copy finish;
- it holds an exclusive lock (flock) on the file until the copy is done, so two saves never mix
  and a reader that takes a shared lock sees the old or the new content whole;
- it removes the temporary file that held the new content when it is done.

What it cannot survive is the machine stopping (power cut, kernel panic) or a kill aimed at that
process itself. Where fork is missing (Windows) or fails (no memory), the app copies in place
itself, as before.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; saves from one app there are one at a time anyway
    fcntl = None

CHUNK_BYTES = 1 << 20
# the signals a user, a terminal or a session manager sends; SIGKILL and SIGSTOP cannot be blocked
_SIGNALS_TO_OUTLIVE = {getattr(signal, name) for name in
                       ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGTSTP", "SIGPIPE", "SIGUSR1", "SIGUSR2")
                       if hasattr(signal, name)}


def update_in_place(source: str, target: Path, expected: os.stat_result) -> None:
    """Copy the complete file `source` into `target` (whose inode, mode and links stay), then
    remove `source`. `expected` is what stat said of `target` when it was checked: the file is
    refused if something else stands at its name now."""
    target_fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0)
                        | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(target_fd)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino):
            raise OSError(errno.EAGAIN, "the file was changed by something else while saving; save again",
                          str(target))
        source_fd = os.open(source, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            if fcntl is not None:
                fcntl.flock(target_fd, fcntl.LOCK_EX)  # waits for a copy still running from an earlier save
            if not _copy_in_a_process_of_its_own(source_fd, target_fd, source):
                _copy(source_fd, target_fd)
        finally:
            os.close(source_fd)
    finally:
        os.close(target_fd)  # the copying process keeps its own descriptor, and with it the lock
    with contextlib.suppress(FileNotFoundError):
        os.unlink(source)


def _copy_in_a_process_of_its_own(source_fd: int, target_fd: int, source: str) -> bool:
    """Fork a process that copies and exits; wait for it. False if no process could be made."""
    if not hasattr(os, "fork"):
        return False
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:  # the copying process: plain system calls only, then out without any clean-up
        code = 1
        try:
            os.setsid()  # out of the app's process group: a kill of the group or the terminal misses it
            signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS_TO_OUTLIVE)
            _copy(source_fd, target_fd)
            with contextlib.suppress(OSError):
                os.unlink(source)
            code = 0
        except OSError as exc:
            code = exc.errno or 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        reason = os.strerror(code) if code > 0 else f"the copying process was stopped by signal {-code}"
        raise OSError(code if code > 0 else errno.EINTR, f"the file could not be updated in place ({reason})")
    return True


def _copy(source_fd: int, target_fd: int) -> None:
    """The whole of `source_fd` over the start of `target_fd`, which is then cut to the same length."""
    size = os.fstat(source_fd).st_size
    os.lseek(source_fd, 0, os.SEEK_SET)
    os.lseek(target_fd, 0, os.SEEK_SET)
    done = 0
    while done < size:
        chunk = os.read(source_fd, min(CHUNK_BYTES, size - done))
        if not chunk:
            raise OSError(errno.EIO, "the new content could not be read back")
        view = memoryview(chunk)
        while view:
            view = view[os.write(target_fd, view):]
        done += len(chunk)
    os.ftruncate(target_fd, size)
    os.fsync(target_fd)
