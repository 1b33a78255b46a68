"""The settings file itself: read without ever blocking or deserialising, moved aside when it cannot
be used, and written only whole and only into a regular file. Every special file here (FIFO,
socket, link) is made by the test under tmp_path; no real device is ever involved."""

import json
import os
import socket
import stat
import sys
import threading

import pytest

from attention_explorer.settings_store import MAX_SETTINGS_BYTES, SettingsStore, shown_path

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, sockets and links as on POSIX")


def open_store(path, legacy=None) -> SettingsStore:
    """Open the store on a thread, so that a read that blocks fails the test instead of hanging it."""
    opened = []
    thread = threading.Thread(target=lambda: opened.append(SettingsStore(path, legacy)), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), f"reading the settings at {path} blocked"
    return opened[0]


def moved_aside(folder) -> list:
    return sorted(p for p in folder.iterdir() if ".damaged-" in p.name)


def hidden(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_no_file_means_no_settings_and_the_first_sync_writes_one(tmp_path):
    path = tmp_path / "config" / "settings.json"
    store = open_store(path)
    assert store.allKeys() == [] and store.note == ""
    store.setValue("view/colormap", "magma")
    store.setValue("window/geometry", b"\x01\xd9\xd0\xcb\x00\x03")
    store.setValue("tour/seen", True)
    assert store.sync()
    assert stat.S_ISREG(path.lstat().st_mode)
    again = open_store(path)
    assert again.allKeys() == ["tour/seen", "view/colormap", "window/geometry"]
    assert again.value("window/geometry") == b"\x01\xd9\xd0\xcb\x00\x03"
    assert again.value("tour/seen") is True and again.value("missing", "default") == "default"


def test_values_of_every_kind_come_back_as_they_were_set(tmp_path):
    values = {"a/text": "le chat — 猫 🐈", "a/surrogate": "lone \ud800 half", "a/int": -3, "a/float": 0.25,
              "a/bool": False, "a/empty": "", "a/bytes": bytes(range(256)), "a/none": None}
    store = open_store(tmp_path / "settings.json")
    for key, value in values.items():
        store.setValue(key, value)
    assert store.sync()
    again = open_store(store.path)
    assert {key: again.value(key) for key in values} == values
    assert again.note == ""


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1, [2]], [float("nan")], {"a": 1}, object()])
def test_a_value_that_cannot_be_saved_is_refused_when_set(tmp_path, value):
    store = open_store(tmp_path / "settings.json")
    with pytest.raises(TypeError, match="setting x/y"):
        store.setValue("x/y", value)
    assert not store.contains("x/y")


def test_a_list_of_texts_comes_back_as_it_was_set(tmp_path):
    store = open_store(tmp_path / "settings.json")
    store.setValue("recent/paths", ("/a/b.png", "c.gguf"))
    store.sync()
    assert open_store(store.path).value("recent/paths") == ["/a/b.png", "c.gguf"]


def test_remove_takes_a_key_and_everything_under_it(tmp_path):
    store = open_store(tmp_path / "settings.json")
    for key in ("view/head", "view/matrix", "viewer", "options/heads"):
        store.setValue(key, 1)
    store.remove("view")
    assert store.allKeys() == ["options/heads", "viewer"]
    store.remove("options/heads")
    assert store.allKeys() == ["viewer"]


def test_a_number_that_is_not_finite_in_the_file_drops_only_that_key(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"view/head": NaN, "deep/list": [1, Infinity], "view/colormap": "magma"}')
    store = open_store(path)
    assert store.allKeys() == ["view/colormap"] and store.note == ""


DAMAGED = {
    "not JSON": b'{"view/colormap": "magma"',
    "not UTF-8": b'{"view/colormap": "\xff\xfe"}',
    "a list, not settings by name": b'["view/colormap", "magma"]',
    "nested too deeply": b'{"a": ' + b"[" * 100 + b"]" * 100 + b"}",
    "a key twice": b'{"view/colormap": "magma", "view/colormap": "viridis"}',
    "empty": b"",
    "larger than any settings": b'{"a": "' + b"x" * (MAX_SETTINGS_BYTES + 1) + b'"}',
}


@pytest.mark.parametrize("content", list(DAMAGED.values()), ids=list(DAMAGED))
def test_a_damaged_file_is_moved_aside_named_and_replaced_by_a_good_one(tmp_path, content):
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    store = open_store(path)
    assert store.allKeys() == []
    [aside] = moved_aside(tmp_path)
    assert aside.read_bytes() == content, "the damaged file is kept as it was, for a look"
    assert aside.name.startswith("settings.damaged-") and aside.suffix == ".json"
    assert store.note.startswith("Settings unreadable (")
    assert store.note.endswith(f"): moved to {shown_path(aside)}; the defaults are used.")
    store.setValue("view/colormap", "magma")
    assert store.sync()
    assert json.loads(path.read_text()) == {"view/colormap": "magma"}
    assert open_store(path).note == ""


def _fifo(path):
    os.mkfifo(path)
    return path


def _socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return path


@posix_only
@pytest.mark.parametrize(("make", "reason"), [
    (_fifo, "it is a named pipe (FIFO), not a regular file"),
    (_socket, "it is a socket, not a regular file"),
    (lambda path: path.mkdir() or path, "it is a folder, not a file"),
])
def test_something_other_than_a_file_is_never_opened_only_moved_aside(tmp_path, make, reason):
    path = make(tmp_path / "settings.json")
    kind = stat.S_IFMT(path.lstat().st_mode)
    store = open_store(path)
    assert store.note.startswith(f"Settings unreadable ({reason}): moved to ")
    [aside] = moved_aside(tmp_path)
    assert stat.S_IFMT(aside.lstat().st_mode) == kind, "moved as it is, not read or replaced"
    store.setValue("view/colormap", "magma")
    assert store.sync() and stat.S_ISREG(path.lstat().st_mode)


@posix_only
@pytest.mark.parametrize("make", [_fifo, _socket], ids=["FIFO", "socket"])
def test_a_link_to_a_fifo_or_socket_is_moved_aside_and_what_it_points_at_is_left_alone(tmp_path, make):
    special = make(tmp_path / "special")
    path = tmp_path / "settings.json"
    path.symlink_to(special)
    store = open_store(path)
    [aside] = moved_aside(tmp_path)
    assert aside.is_symlink() and os.readlink(aside) == str(special), "the link itself was moved"
    store.setValue("view/colormap", "magma")
    assert store.sync()
    assert stat.S_ISREG(path.lstat().st_mode) and not path.is_symlink()
    assert (stat.S_ISFIFO if make is _fifo else stat.S_ISSOCK)(special.lstat().st_mode)


@posix_only
def test_a_link_to_nothing_is_moved_aside_and_creates_nothing(tmp_path):
    path = tmp_path / "settings.json"
    path.symlink_to(tmp_path / "elsewhere" / "new.json")
    store = open_store(path)
    assert "which does not exist" in store.note
    store.setValue("view/colormap", "magma")
    assert store.sync()
    assert not (tmp_path / "elsewhere").exists() and stat.S_ISREG(path.lstat().st_mode)


@posix_only
def test_a_link_to_a_good_file_is_read_and_the_file_it_points_at_is_saved(tmp_path):
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"view/colormap": "magma"}')
    path = tmp_path / "settings.json"
    path.symlink_to(real)
    store = open_store(path)
    assert store.value("view/colormap") == "magma"
    store.setValue("view/colormap", "viridis")
    assert store.sync()
    assert path.is_symlink() and json.loads(real.read_text()) == {"view/colormap": "viridis"}


@posix_only
def test_a_file_that_cannot_be_moved_aside_is_left_alone_and_never_written(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    path.write_bytes(b"{damaged")

    def refuse(*_):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "rename", refuse)
    store = open_store(path)
    assert store.note == (f"Settings unreadable (settings.json: not valid JSON (line 1, column 2: Expecting "
                          f"property name enclosed in double quotes)) and not movable from {shown_path(path)} "
                          "(Permission denied): the defaults are used and not saved.")
    store.setValue("view/colormap", "magma")
    assert store.sync() is False
    assert path.read_bytes() == b"{damaged"


@posix_only
def test_a_fifo_put_in_place_before_quitting_is_refused_at_the_save(tmp_path, capsys):
    path = tmp_path / "settings.json"
    store = open_store(path)
    store.setValue("view/colormap", "magma")
    pipe = _fifo(tmp_path / "pipe")
    path.symlink_to(pipe)  # swapped in while the app ran
    assert store.sync() is False
    err = capsys.readouterr().err.strip()
    assert err == (f"attention-explorer: cannot save the settings in {path}: "
                   "it is a named pipe (FIFO), not a regular file")
    assert stat.S_ISFIFO(pipe.lstat().st_mode) and hidden(tmp_path) == []


@posix_only
def test_a_hard_linked_settings_file_is_saved_in_place_for_both_names(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"view/colormap": "magma"}')
    other = tmp_path / "backup.json"
    os.link(path, other)
    store = open_store(path)
    store.setValue("view/colormap", "viridis")
    assert store.sync()
    assert json.loads(other.read_text()) == {"view/colormap": "viridis"}
    assert path.stat().st_ino == other.stat().st_ino and hidden(tmp_path) == []


def test_nothing_is_written_when_nothing_changed(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"view/colormap": "magma"}')
    before = path.stat().st_mtime_ns
    store = open_store(path)
    store.setValue("view/colormap", "magma")
    assert store.sync() and path.stat().st_mtime_ns == before
