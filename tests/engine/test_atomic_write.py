"""Safe writes: only regular files are replaced, links and permissions are respected, and a failure
leaves what was there untouched."""

import os
import stat
import sys

import pytest

from attention_explorer.engine import atomic_write
from attention_explorer.engine.atomic_write import (
    atomic_file,
    check_writable_target,
    open_for_append,
    remove_stale_temporaries,
    write_text_atomically,
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, modes and links as on POSIX")


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_new_file_gets_the_usual_mode_and_its_content(tmp_path):
    target = tmp_path / "new.txt"
    write_text_atomically(target, "héllo\n")
    assert target.read_bytes() == "héllo\n".encode()
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert leftovers(tmp_path) == []


def test_a_failure_while_writing_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_file(target) as handle:
        handle.write(b"half")
        raise RuntimeError("rendering failed")
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


@posix_only
def test_an_existing_files_mode_is_kept(tmp_path):
    target = tmp_path / "private.txt"
    target.write_text("old")
    target.chmod(0o600)
    write_text_atomically(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


@posix_only
def test_a_read_only_file_is_refused_not_replaced(tmp_path):
    target = tmp_path / "locked.txt"
    target.write_text("old")
    target.chmod(0o444)
    with pytest.raises(OSError, match="the file is read-only"):
        write_text_atomically(target, "new")
    assert target.read_text() == "old"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


@posix_only
def test_a_fifo_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="named pipe"):  # opening it would hang: the check must not
        write_text_atomically(fifo, "x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_folder_is_refused(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(OSError, match="it is a folder"):
        write_text_atomically(folder, "x")
    assert folder.is_dir() and list(folder.iterdir()) == []


@posix_only
def test_a_socket_is_refused(tmp_path):
    import socket

    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(OSError, match="socket"):
            write_text_atomically(path, "x")
        assert stat.S_ISSOCK(path.lstat().st_mode)
    finally:
        server.close()


def _as_device(monkeypatch, path):
    """Make stat report `path` (a regular file of the test's own) as a character device: the checks
    are tested without any real device, which a writer gone wrong could damage."""
    real_stat = atomic_write._stat_or_none

    def stat_or_none(target):
        info = real_stat(target)
        if info is not None and os.path.samefile(target, path):
            return os.stat_result((stat.S_IFCHR | 0o666, *info[1:]))
        return info

    monkeypatch.setattr(atomic_write, "_stat_or_none", stat_or_none)


def test_a_device_is_refused_even_for_root(tmp_path, monkeypatch):
    node = tmp_path / "device"
    node.write_text("stands for a device")
    _as_device(monkeypatch, node)
    with pytest.raises(OSError, match="it is a device"):
        write_text_atomically(node, "x")
    with pytest.raises(OSError, match="it is a device"):
        open_for_append(node)
    assert node.read_text() == "stands for a device"


@posix_only
@pytest.mark.parametrize("make", ["fifo", "socket"])
def test_a_link_to_a_fifo_or_socket_is_refused_and_left_alone(tmp_path, make):
    import socket

    special = tmp_path / "special"
    server = None
    if make == "fifo":
        os.mkfifo(special)
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(special))
    link = tmp_path / "settings.json"
    link.symlink_to(special)
    try:
        with pytest.raises(OSError, match="named pipe|socket"):
            write_text_atomically(link, "x")
        with pytest.raises(OSError, match="named pipe|socket"):
            open_for_append(link)  # opening a FIFO for writing would block: the check comes first
    finally:
        if server is not None:
            server.close()
    assert link.is_symlink() and os.readlink(link) == str(special)
    assert (stat.S_ISFIFO if make == "fifo" else stat.S_ISSOCK)(special.lstat().st_mode)
    assert leftovers(tmp_path) == []


@posix_only
def test_a_symlink_is_followed_and_its_target_replaced(tmp_path):
    real = tmp_path / "data" / "real.csv"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text_atomically(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert leftovers(tmp_path) == [] and leftovers(real.parent) == []


@posix_only
def test_a_link_to_nothing_is_refused_and_nothing_is_created(tmp_path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "later.txt")
    with pytest.raises(OSError, match="which does not exist"):
        write_text_atomically(link, "new")
    with pytest.raises(OSError, match="which does not exist"):
        open_for_append(link)
    assert link.is_symlink() and not (tmp_path / "later.txt").exists()


@posix_only
def test_a_hard_linked_file_is_updated_in_place_so_every_name_sees_it(tmp_path):
    first = tmp_path / "a.txt"
    first.write_text("old content, longer than the new")
    second = tmp_path / "b.txt"
    os.link(first, second)
    inode = first.stat().st_ino
    write_text_atomically(first, "new")
    assert first.read_text() == second.read_text() == "new"
    assert first.stat().st_ino == inode and first.stat().st_nlink == 2
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "missing" / "x.csv", "there is no folder"),
    (lambda tmp: tmp / "file.txt" / "x.csv", "is not a folder"),
])
def test_the_folder_is_checked_before_anything_is_written(tmp_path, make, message):
    (tmp_path / "file.txt").write_text("a file, not a folder")
    with pytest.raises(OSError, match=message):
        check_writable_target(make(tmp_path))


@posix_only
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write into any folder")
def test_a_folder_without_write_permission_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(OSError, match="is not writable"):
            check_writable_target(folder / "x.csv")
    finally:
        folder.chmod(0o755)


def test_check_names_the_file_that_will_be_replaced(tmp_path):
    assert check_writable_target(tmp_path / "new.json") == (tmp_path / "new.json").resolve()


def test_appending_adds_to_the_end_and_creates_a_new_file(tmp_path):
    log = tmp_path / "app.log"
    for line in (b"first\n", b"second\n"):
        fd = open_for_append(log)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    assert log.read_bytes() == b"first\nsecond\n"


def _dead_pid() -> int:
    """The number of a process that has exited (and been waited for)."""
    import subprocess

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


@posix_only
def test_a_temporary_left_by_a_killed_save_is_removed_by_the_next_save(tmp_path):
    target = tmp_path / "model.json"
    target.write_text("old")
    stale = tmp_path / f".model.json.abcd_123.{_dead_pid()}.tmp"
    stale.write_text("half a file")
    running = tmp_path / f".model.json.zzzz9999.{os.getppid()}.tmp"  # its writer still runs
    running.write_text("being written")
    other_file = tmp_path / f".other.json.abcd_123.{_dead_pid()}.tmp"  # another file's: its own save clears it
    other_file.write_text("another file's")
    mine = tmp_path / ".model.json.notes.tmp"  # not names the app makes
    also_mine = tmp_path / ".model.json.abcd_123.draft.tmp"
    for path in (mine, also_mine):
        path.write_text("the user's")
        os.utime(path, (0, 0))  # however old
    write_text_atomically(target, "new")
    assert target.read_text() == "new"
    assert not stale.exists()
    assert running.exists() and other_file.exists() and mine.exists() and also_mine.exists()


def test_an_unnumbered_temporary_of_an_earlier_version_goes_once_it_is_an_hour_old(tmp_path):
    import time

    target = tmp_path / "model.json"
    old = tmp_path / ".model.json.k3j4h5g6.tmp"
    recent = tmp_path / ".model.json.a1b2c3d4.tmp"
    for path in (old, recent):
        path.write_text("left by a crash")
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    assert remove_stale_temporaries(target) == [old.name]
    assert recent.exists()


def test_a_folder_that_cannot_be_listed_does_not_stop_a_check(tmp_path):
    assert remove_stale_temporaries(tmp_path / "missing" / "x.json") == []
