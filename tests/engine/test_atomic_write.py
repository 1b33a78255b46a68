"""Safe writes: only regular files are replaced, links and permissions are respected, and a failure
leaves what was there untouched."""

import os
import stat
import sys

import pytest

from attention_explorer.engine.atomic_write import atomic_file, check_writable_target, write_text_atomically

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


@posix_only
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_node_is_refused_even_for_root(tmp_path):
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null
    with pytest.raises(OSError, match="it is a device"):
        write_text_atomically(node, "x")
    assert stat.S_ISCHR(node.lstat().st_mode)


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
def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "later.txt")
    write_text_atomically(link, "new")
    assert link.is_symlink() and (tmp_path / "later.txt").read_text() == "new"


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
