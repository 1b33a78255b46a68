"""What the app remembers between runs: window geometry, model, sentence (and an encoder–decoder's target and
attention shown), options, colours.

Saved settings come from a file anyone (or a crash, or an older version) may have changed, so each
key is read on its own: a value that cannot be used falls back to its default, the key is dropped
from the file, and the window's status bar says which ones. Nothing in the file can stop the app
from starting: the file is the app's own (settings_store), never read by QSettings, and a file
that cannot be used at all is moved aside, which the status bar says too.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from .controller import Controller
from .engine import EngineError, ModelError, catalog
from .engine.atomic_write import write_bytes_atomically
from .engine.limits import max_text_chars
from .engine.safe_read import read_user_text
from .figure_state import PARTS
from .legacy_settings import unusable_qt_ini
from .settings_store import DAMAGED_MARK, MAX_SETTINGS_BYTES, SettingsStore, move_aside, say_not_saved, shown_path
from .views import theme

OPTION_FLAGS = ("scale", "causal", "positional")
RESET_NOTE_MS = 20_000  # long enough to read the list of what was reset
SETTINGS_FILE_NAME = "settings.json"
QT_SETTINGS_FOLDER = "qt"  # Qt's own settings (the file dialog's), beside ours
QT_SETTINGS_SUFFIXES = (".conf", ".ini")  # the files QSettings reads there
ORGANIZATION, APPLICATION = "attention-explorer", "Attention Explorer"


class BadSetting(ValueError):
    """A saved value that cannot be used; the message says why, for the status note."""


def open_settings() -> SettingsStore:
    """The user's settings: settings.json in the app's config folder (on Linux
    ~/.config/attention-explorer/Attention Explorer/), started from an earlier version's values
    the first time. Qt's own settings are kept beside it, checked (see keep_qt_settings_in)."""
    path = settings_path()
    store = SettingsStore(path, legacy_settings_path())
    qt_note = keep_qt_settings_in(path.parent / QT_SETTINGS_FOLDER)
    store.note = " ".join(note for note in (store.note, qt_note) if note)
    return store


class QtSettingsCopy:
    """Qt's own settings (the file dialog's history and layout) for this run: a private copy, in a
    fresh folder, of what is usable in the app's folder for them; written back by `save`."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._private = tempfile.TemporaryDirectory(prefix="attention-explorer-qt-")  # removed at exit
        self.private = Path(self._private.name)
        self._copied: dict[str, bytes] = {}

    def take(self, path: Path) -> None:
        """Copy the checked file `path` in, through the bounded reader."""
        text = read_user_text(path, "settings file", max_bytes=MAX_SETTINGS_BYTES)
        self._copied[path.name] = text.encode("utf-8")
        (self.private / path.name).write_bytes(self._copied[path.name])

    def save(self) -> None:
        """What Qt changed goes back to the app's folder through the checked writer, which never
        writes into a device, FIFO or socket, whatever stands there now."""
        for copy in sorted(p for p in self.private.iterdir() if p.suffix in QT_SETTINGS_SUFFIXES):
            data = copy.read_bytes()
            if self._copied.get(copy.name) == data:
                continue
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                write_bytes_atomically(self.folder / copy.name, data)
            except OSError as exc:
                say_not_saved("the file dialog's settings", self.folder / copy.name, exc)
                continue
            self._copied[copy.name] = data


_qt_settings: QtSettingsCopy | None = None  # as process-wide as the QSettings paths it stands for


def keep_qt_settings_in(folder: Path) -> str:
    """Let Qt keep the settings it keeps for itself in `folder`, through a private copy.

    Qt's file dialog reads and writes its history with QSettings (QtProject.conf, shared by every
    Qt program in the user's config folder), and a damaged typed value there aborted the app as
    soon as a dialog opened, as our own file once did at every start; QSettings also opens whatever
    stands at its path (a FIFO blocks it) and writes through links. So each file in `folder` is
    checked here, one QSettings must not read is moved aside, and the usable ones are copied into a
    fresh folder of this run, the only one Qt reads and writes; save_settings writes them back
    through the checked writer. A link or a FIFO put in `folder` later is never opened by Qt. The
    system-wide fallbacks (/etc/xdg) are not read at all. Returns a note for the status bar, or ""
    when all is well.
    """
    global _qt_settings
    try:
        _qt_settings = QtSettingsCopy(folder)
    except OSError:  # no temporary folder to be had: Qt uses the checked folder itself
        _qt_settings = None
    _point_qt_settings_at(folder if _qt_settings is None else _qt_settings.private)
    try:
        entries = sorted(folder.iterdir())
    except OSError:  # no folder yet: made when Qt's settings are first saved
        return ""
    notes = []
    for path in entries:
        if path.suffix not in QT_SETTINGS_SUFFIXES or DAMAGED_MARK in path.name:
            continue
        reason = unusable_qt_ini(path, MAX_SETTINGS_BYTES)
        if reason is None:
            try:
                if _qt_settings is not None:
                    _qt_settings.take(path)
            except EngineError as exc:  # changed since it was checked
                notes.append(f"File dialog settings unreadable ({exc}): the file dialogs start afresh.")
            continue
        try:
            notes.append(f"File dialog settings unreadable ({reason}): moved to {shown_path(move_aside(path))}.")
        except OSError as exc:
            notes.append(f"File dialog settings unreadable ({reason}) and not movable from {shown_path(path)} "
                         f"({exc.strerror or exc}): the file dialogs start afresh.")
    return " ".join(notes)


def settings_path() -> Path:
    folder = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.AppConfigLocation)
    return Path(folder or Path.home() / ".attention-explorer") / SETTINGS_FILE_NAME


def legacy_settings_path() -> Path | None:
    """Where QSettings kept an earlier version's settings, when that was an INI file (Linux and
    other Unix systems; macOS and Windows kept them in a property list or the registry, which are
    not brought over)."""
    if sys.platform in ("darwin", "win32"):
        return None
    folder = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.GenericConfigLocation)
    return Path(folder) / ORGANIZATION / f"{APPLICATION}.conf" if folder else None


def _point_qt_settings_at(folder: Path) -> None:
    for file_format in (QtCore.QSettings.Format.NativeFormat, QtCore.QSettings.Format.IniFormat):
        QtCore.QSettings.setPath(file_format, QtCore.QSettings.Scope.UserScope, str(folder))
        QtCore.QSettings.setPath(file_format, QtCore.QSettings.Scope.SystemScope, str(folder / "none"))


def save_settings(settings: SettingsStore, controller: Controller, window: QtWidgets.QMainWindow) -> None:
    settings.setValue("window/geometry", window.saveGeometry().data())
    settings.setValue("window/state", window.saveState().data())
    settings.setValue("model/source", controller.model_source)
    settings.setValue("model/sentence", controller.sentence)
    for key, value in (("model/target", controller.target), ("model/part", controller.part)):
        if controller.is_encoder_decoder:
            settings.setValue(key, value)
        else:  # (a one-text model's session has none: an old one must not come back with it)
            settings.remove(key)
    for name, value in controller.options.to_dict().items():
        if controller.is_real:  # a real model's options are its own and its head may not exist in a toy model
            settings.remove(f"options/{name}")
        else:
            settings.setValue(f"options/{name}", value)
    settings.setValue("view/matrix", controller.matrix)
    if controller.is_real:
        settings.remove("view/head")
    else:
        settings.setValue("view/head", controller.head)
    settings.setValue("view/colormap", controller.colormap)
    settings.sync()
    if _qt_settings is not None:
        _qt_settings.save()


def restore_settings(settings: SettingsStore, controller: Controller, window: QtWidgets.QMainWindow) -> list[str]:
    """Bring back the last session, key by key; return the keys that were reset (also noted in the
    window's status bar, with what happened to a settings file that could not be used). The model
    comes first: the sentence, options and head are read against it; an encoder–decoder's target and
    the attention shown are read before it, to open it with them."""
    pair: dict[str, str] = {}
    readers: list[tuple[str, Callable[[object], None]]] = [
        ("window/geometry", lambda v: _restore_bytes(window.restoreGeometry, v)),
        ("window/state", lambda v: _restore_bytes(window.restoreState, v)),
        ("model/target", lambda v: pair.update(target=_sentence(v, True))),
        ("model/part", lambda v: pair.update(part=_part(v))),
        ("model/source", lambda v: controller.open_model(_text(v), **pair)),
        ("model/sentence", lambda v: controller.set_sentence(_sentence(v, _remembers_a_real_model(settings)))),
    ]
    readers += [(f"options/{name}", lambda v, n=name: controller.update_options(**{n: _bool(v)}))
                for name in OPTION_FLAGS]
    readers += [
        ("options/heads", lambda v: controller.update_options(heads=_int(v))),
        ("view/matrix", lambda v: controller.set_matrix(_text(v))),
        ("view/head", lambda v: _set_head(controller, _int(v))),
        ("view/colormap", lambda v: _set_colormap(controller, _text(v))),
    ]
    store_note = settings.note if isinstance(settings, SettingsStore) else ""  # a QSettings (tests) has none
    reset = list(settings.refused_keys) if isinstance(settings, SettingsStore) else []
    for key, restore in readers:
        try:
            value = settings.value(key)
            if value is None:
                continue
            restore(value)
        except (BadSetting, EngineError, ModelError, OSError, RecursionError, ValueError, TypeError,
                MemoryError, UnicodeError):
            # each key alone: a damaged one is dropped and the rest still come back
            settings.remove(key)
            reset.append(key)
    notes = [store_note] if store_note else []
    if reset:
        notes.append(f"Some saved settings could not be used and were reset: {', '.join(reset)}")
    if notes:
        note = " ".join(notes)
        # shown once the window is on screen: a status bar hides its usual line under a message only if
        # that line is visible when the message comes, else the two are drawn over each other
        QtCore.QTimer.singleShot(0, window, lambda: window.statusBar().showMessage(note, RESET_NOTE_MS))
    return reset


def _restore_bytes(restore: Callable[[QtCore.QByteArray], bool], value: object) -> None:
    if not isinstance(value, QtCore.QByteArray | bytes) or not restore(value):
        raise BadSetting("not a saved window layout")


def _text(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise BadSetting(f"expected a text, found {type(value).__name__}")
    return value


def _sentence(value: object, real: bool) -> str:
    if not isinstance(value, str):
        raise BadSetting(f"expected a text, found {type(value).__name__}")
    if len(value) > max_text_chars(real):  # longer than the model computes: not restored
        raise BadSetting(f"{len(value):,} characters, more than {max_text_chars(real):,}")
    return value


def _part(value: object) -> str:
    if value not in PARTS:
        raise BadSetting(f"not one of an encoder–decoder's attentions ({', '.join(PARTS)}): {value!r}")
    return value


def _remembers_a_real_model(settings: SettingsStore) -> bool:
    """The saved model is a real one (it may still be loading, so the controller cannot say yet)."""
    source = settings.value("model/source")
    return isinstance(source, str) and bool(source) and catalog.is_pretrained_source(source)


def _bool(value: object) -> bool:
    """QSettings gives back "true"/"false" strings from INI files; anything else is damage."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "1", "0"):
        raise BadSetting(f"not true or false: {value!r}")
    return text in ("true", "1")


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadSetting(f"not a whole number: {value!r}")
    return int(value)


def _set_head(controller: Controller, head: int) -> None:
    if not 0 <= head < controller.options.heads:
        raise BadSetting(f"no head {head} with {controller.options.heads} heads")
    controller.set_head(head)


def _set_colormap(controller: Controller, name: str) -> None:
    if name not in theme.COLORMAPS:
        raise BadSetting(f"no colour map called {name!r}")
    controller.set_colormap(name)
