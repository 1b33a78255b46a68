"""An earlier version's QSettings INI file is read without Qt: plain values as Qt itself reads them,
typed `@Variant(...)` values refused and named, and the file never written."""

import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6 import QtCore

from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.legacy_settings import read_qt_ini
from attention_explorer.settings_store import SettingsStore

# the value that made Qt throw std::bad_alloc and abort every start
BAD_ALLOC = "@Variant(\\0\\0\\0\\v\\x7f\\xff\\xff\\xff)"
NOTE = "Some saved settings could not be used and were reset: "

TEXT = st.text(st.characters(blacklist_categories=("Cs",), max_codepoint=0x1FFFF), max_size=40)
# bytes as a window layout is saved: a QByteArray (Python bytes would be pickled into a @Variant)
VALUES = st.one_of(TEXT, st.binary(max_size=40).map(QtCore.QByteArray), st.lists(TEXT, min_size=2, max_size=4),
                   st.integers(-(2**62), 2**62), st.booleans())  # larger integers would be pickled too
KEYS = st.lists(st.text("abcXYZ09_ -.%é/", min_size=1, max_size=12).filter(
    lambda k: not k.startswith("/") and not k.endswith("/") and "//" not in k), min_size=1, max_size=5, unique=True)


def written_by_qsettings(path, values: dict) -> None:
    qt = QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat)
    for key, value in values.items():
        qt.setValue(key, value)
    qt.sync()
    assert qt.status() == QtCore.QSettings.Status.NoError


def read_by_qsettings(path) -> dict:
    """What QSettings gives back for a file it wrote itself (never for a file with typed values),
    read from a copy: QSettings would answer from its cache of the values it wrote, not from the file."""
    copy = path.with_name("copy.conf")
    copy.write_bytes(path.read_bytes())
    qt = QtCore.QSettings(str(copy), QtCore.QSettings.Format.IniFormat)
    values = {}
    for key in qt.allKeys():
        value = qt.value(key)
        values[key] = bytes(value.data()) if isinstance(value, QtCore.QByteArray) else value
    return values


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=KEYS, data=st.data())
def test_plain_values_read_as_qsettings_reads_them(tmp_path_factory, keys, data):
    path = tmp_path_factory.mktemp("ini") / "Attention Explorer.conf"
    written_by_qsettings(path, {key: data.draw(VALUES) for key in keys})
    values, refused = read_qt_ini(path.read_text(encoding="utf-8"))
    assert refused == []
    assert values == read_by_qsettings(path)


def test_hand_written_lines_quotes_comments_and_escapes_read_as_qsettings_reads_them(tmp_path):
    text = ("\ufeff; a comment\r\n[General]\r\ntop=1\r\n[view]\r\ncolormap = magma ; said Qt\r\n"
            'sentence="the, cat; sat" \r\nlist=a , "b " ,c\r\noctal=\\0123\r\nhex=\\x41\\x42C\r\n'
            "spaces=  kept\\ \r\nescapes=x\\ y\\t\\q\r\nat=@@at\r\n# no equals sign, skipped\r\n"
            "[window]\r\ngeometry=@ByteArray(\\x1\\xd9\\0\\0)\r\n[%General]\r\nx=y\r\n")
    path = tmp_path / "hand.conf"
    path.write_bytes(text.encode("utf-8"))
    values, refused = read_qt_ini(text)
    assert refused == []
    assert values == read_by_qsettings(path)
    # what Qt's rules give, spelled out: octal and hex escapes take every digit that follows, an
    # unknown escape drops the character, spaces around unquoted items go
    assert values["view/octal"] == "S" and values["view/hex"] == "A\u042c" and values["view/spaces"] == "kept"
    assert values["view/list"] == ["a", "b ", "c"] and values["window/geometry"] == b"\x01\xd9\x00\x00"
    assert values["view/sentence"] == "the, cat; sat" and values["General/x"] == "y"


def test_an_invalid_value_is_as_good_as_absent():
    assert read_qt_ini("[view]\nhead=@Invalid()\n") == ({}, [])


@pytest.mark.parametrize("typed", [BAD_ALLOC, "@DateTime(\\0\\0\\0\\x10\\0)", "@Rect(0 0 10 10)", "@Size(1 2)"])
def test_typed_values_are_refused_never_decoded(typed):
    values, refused = read_qt_ini(f"[view]\ncolormap={typed}\nmatrix=scaled\n")
    assert values == {"view/matrix": "scaled"} and refused == ["view/colormap"]


def _legacy(tmp_path, text: str):
    path = tmp_path / "Attention Explorer.conf"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_earlier_versions_settings_are_brought_over_once_and_its_file_is_left_alone(tmp_path):
    legacy = tmp_path / "old.conf"
    written_by_qsettings(legacy, {"model/source": "it-was-tired", "model/sentence": "the dog was tired",
                                  "options/causal": True, "options/heads": 1,
                                  "window/geometry": QtCore.QByteArray(b"\x01\xd9\xd0\xcb"),
                                  "window/state": QtCore.QByteArray(b"\0\0\0\xff")})
    before = legacy.read_bytes()
    store = SettingsStore(tmp_path / "new" / "settings.json", legacy)
    assert store.value("model/source") == "it-was-tired" and store.value("options/causal") == "true"
    assert store.value("window/geometry") == b"\x01\xd9\xd0\xcb" and store.note == ""
    assert not store.contains("window/state"), "a dock layout without a digest is never handed to Qt"
    assert store.sync(), "brought-over values are saved in the new file at once"
    assert legacy.read_bytes() == before
    again = SettingsStore(store.path, _legacy(tmp_path, "[view]\ncolormap=viridis\n"))
    assert again.value("view/colormap") is None, "with a file of its own, the store ignores the old one"


def test_the_value_that_aborted_every_start_is_reset_and_named(qtbot, tmp_path):
    legacy = _legacy(tmp_path, f"[model]\nsentence=the dog was tired\n[view]\ncolormap={BAD_ALLOC}\nmatrix=scaled\n")
    before = legacy.read_bytes()
    store = SettingsStore(tmp_path / "settings.json", legacy)
    window = MainWindow(Controller(), store)
    qtbot.addWidget(window)
    window.show()
    qtbot.wait(1)
    assert window.controller.sentence == "the dog was tired" and window.controller.matrix == "scaled"
    assert window.statusBar().currentMessage() == NOTE + "view/colormap"
    window.close()
    assert legacy.read_bytes() == before and store.path.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs as on POSIX")
def test_a_fifo_in_place_of_the_old_file_is_not_waited_on(tmp_path):
    legacy = tmp_path / "Attention Explorer.conf"
    os.mkfifo(legacy)
    store = SettingsStore(tmp_path / "settings.json", legacy)  # the read would block forever if it opened it
    assert store.allKeys() == []
    assert store.note.startswith("Settings of an earlier version unreadable (")
    assert os.path.exists(legacy), "the old file is never moved or written"


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from('[]=;,"\\@%Ux0179abAF \t\r\n()éV'), max_size=80))
def test_any_text_at_all_gives_values_and_never_an_error(text):
    values, refused = read_qt_ini(text)
    assert all(isinstance(key, str) for key in [*values, *refused])


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and links as on POSIX")
def test_what_qt_must_not_read_is_named(tmp_path):
    from attention_explorer.legacy_settings import unusable_qt_ini

    good = _legacy(tmp_path, "[FileDialog]\nhistory=file:///tmp\ntreeViewHeader=@ByteArray(\\0\\xff)\n")
    assert unusable_qt_ini(good, 1 << 20) is None
    assert unusable_qt_ini(tmp_path / "none.conf", 1 << 20) is None
    typed = tmp_path / "typed.conf"
    typed.write_text(f"[FileDialog]\nviewMode={BAD_ALLOC}\n")
    assert unusable_qt_ini(typed, 1 << 20) == "it holds values Qt would decode blindly: FileDialog/viewMode"
    link = tmp_path / "link.conf"
    link.symlink_to(good)
    assert unusable_qt_ini(link, 1 << 20) == "it is a link, which Qt would write through"
    pipe = tmp_path / "pipe.conf"
    os.mkfifo(pipe)
    assert unusable_qt_ini(pipe, 1 << 20) == "it is a named pipe (FIFO), not a regular file"
    assert "a settings file may be at most" in unusable_qt_ini(good, 10)
