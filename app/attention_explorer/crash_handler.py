"""One place every uncaught error ends up: logged in full, shown once, and the app carries on.

Qt calls Python slots, paint events and timers from its event loop; an exception there is passed to
`sys.excepthook` and the loop goes on. This module installs that hook (and `threading.excepthook` for
worker threads) so such an error is written, with its whole traceback, to a rotating log file in the
user's log folder and shown in one dialog, instead of only scrolling past on a terminal nobody sees.
`faulthandler` writes native crashes (a segfault inside Qt) to the same folder.

Both files are opened through the app's checked writer (engine.atomic_write.open_for_append): a
link, named pipe, device or socket put where a log belongs is refused with one line on stderr, never
opened for writing, and the app goes on without a log.
"""

from __future__ import annotations

import faulthandler
import logging
import logging.handlers
import platform
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from PySide6 import QtCore

from . import __version__
from .engine.atomic_write import open_for_append

LOG_FILE_NAME = "attention-explorer.log"
NATIVE_CRASH_FILE_NAME = "native-crashes.log"
LOG_MAX_BYTES = 1_000_000
LOG_BACKUPS = 3

logger = logging.getLogger("attention_explorer")


def default_log_dir() -> Path:
    """The app's local data folder + "/log" (e.g. ~/.local/share/attention-explorer/Attention Explorer/log
    on Linux): kept between runs, unlike a cache folder, and the same call on every platform."""
    base = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.AppLocalDataLocation)
    return Path(base or Path.home() / ".attention-explorer") / "log"


def summary_of(exc: BaseException) -> str:
    """One line for people: the error's kind and its message."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def details_of(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> str:
    """What "Copy details" gives and the log holds: versions and the full traceback."""
    from PySide6 import __version__ as pyside_version

    header = (f"Attention Explorer {__version__}, Python {platform.python_version()}, "
              f"PySide6 {pyside_version}, {platform.platform()}\n")
    return header + "".join(traceback.format_exception(exc_type, exc, tb))


class CheckedRotatingLog(logging.handlers.RotatingFileHandler):
    """The log file, kept to LOG_BACKUPS + 1 files of LOG_MAX_BYTES, opened (at the start and after
    each rotation) only through the checked writer; a problem while logging is one line on stderr."""

    def __init__(self, path: Path):
        super().__init__(path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))

    def _open(self):  # the one place logging opens the file
        return open(open_for_append(self.baseFilename), "a", encoding=self.encoding,  # noqa: SIM115
                    errors=self.errors)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging API
        """logging would print a traceback of its own; one line says the same."""
        exc = sys.exc_info()[1]
        reason = getattr(exc, "strerror", None) or exc
        print(f"attention-explorer: cannot write the log {self.baseFilename}: {reason}", file=sys.stderr)


class CrashHandler(QtCore.QObject):
    """Receives every uncaught exception; logs it and asks `show` (on the GUI thread) to tell the user.

    `show(summary, details, log_path)` is called for the first error; while its dialog is still open,
    later errors call `repeat()` on what `show` returned, so an error repeated on every paint gives one
    dialog with a count, not hundreds of windows.
    """

    _reported = QtCore.Signal(str, str)  # summary, details: from any thread to the GUI thread

    def __init__(self, log_dir: Path, show: Callable[[str, str, Path], object] | None = None,
                 parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.log_dir = Path(log_dir)
        self.log_path = self.log_dir / LOG_FILE_NAME
        self._show = show
        self._dialog = None
        self._native_file = None
        self._file_handler: logging.Handler | None = None
        self._previous_hooks = None
        self.count = 0  # uncaught exceptions seen since start
        self._reported.connect(self._tell_user, QtCore.Qt.ConnectionType.QueuedConnection)

    # --- set-up ---------------------------------------------------------------------------------
    def install(self) -> CrashHandler:
        """Open the log, take over sys.excepthook and threading.excepthook, and start faulthandler
        unless something already reports native crashes (`python -X faulthandler`, a test runner):
        that report reaches whoever asked for it, and taking it over would hide it in a file."""
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self._file_handler = CheckedRotatingLog(self.log_path)
            logger.addHandler(self._file_handler)
            logger.setLevel(logging.INFO)
            if not faulthandler.is_enabled():
                self._native_file = open(open_for_append(self.log_dir / NATIVE_CRASH_FILE_NAME), "a",  # noqa: SIM115
                                         encoding="utf-8")
                faulthandler.enable(self._native_file)
        except OSError as exc:  # no writable log folder: errors are still shown, only not kept
            print(f"attention-explorer: cannot write the log in {self.log_dir}: {exc.strerror or exc}",
                  file=sys.stderr)
        self._previous_hooks = (sys.excepthook, threading.excepthook)
        sys.excepthook = self.handle
        threading.excepthook = self._handle_thread
        return self

    def uninstall(self) -> None:
        """Give the hooks back and close the log files (at exit, or after a test)."""
        if self._previous_hooks is not None:
            sys.excepthook, threading.excepthook = self._previous_hooks
            self._previous_hooks = None
        if self._file_handler is not None:
            logger.removeHandler(self._file_handler)
            self._file_handler.close()
            self._file_handler = None
        if self._native_file is not None:
            faulthandler.disable()
            self._native_file.close()
            self._native_file = None

    # --- the hooks ------------------------------------------------------------------------------
    def handle(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        """sys.excepthook: never raises, whatever goes wrong while reporting."""
        if issubclass(exc_type, KeyboardInterrupt):  # Ctrl+C in the terminal: quit as Python would
            sys.__excepthook__(exc_type, exc, tb)
            return
        try:
            self.count += 1
            details = details_of(exc_type, exc, tb)
            logger.error("uncaught exception\n%s", details)
            self._reported.emit(summary_of(exc), details)
        except Exception:  # noqa: BLE001 - the handler of last resort must not fail itself
            sys.__excepthook__(exc_type, exc, tb)

    def _handle_thread(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        self.handle(args.exc_type, args.exc_value, args.exc_traceback)

    def _tell_user(self, summary: str, details: str) -> None:
        if self._show is None:
            return
        if self._dialog is not None and self._dialog_open():
            self._dialog.repeat(summary, details)
            return
        self._dialog = self._show(summary, details, self.log_path)

    def _dialog_open(self) -> bool:
        try:
            return self._dialog.isVisible()
        except RuntimeError:  # the dialog's C++ object is gone
            return False
