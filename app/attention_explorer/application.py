"""Starting the window: the Qt application first, a splash at once, then the window.

Importing pyqtgraph and building the views takes most of a second; the splash is painted before
any of that, so the app answers a launch as fast as a bare Qt window does.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from . import __version__
from .resources_path import resource_path

APP_NAME = "Attention Explorer"
QUITTING_SWITCH_S = 1e-4  # how often Python hands the interpreter lock between threads once the window is closed
QUIT_GRACE_MS = 2000  # how long a quit waits for a real model's step under way to end
RESUME_COLLECTION_MS = 1000  # cycle collection comes back on this long after the window is shown: painted by then


def create_application(argv: list[str] | None = None) -> QtWidgets.QApplication:
    app = QtWidgets.QApplication.instance()
    if app is None:
        paint_on_one_thread()
        # fractional scale factors (150 %) as they are, for crisp text and lines on high-DPI screens
        QtWidgets.QApplication.setHighDpiScaleFactorRoundingPolicy(
            QtCore.Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QtWidgets.QApplication(argv or sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("attention-explorer")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("attention-explorer")  # Wayland matches the window to the .desktop entry
    return app


def paint_on_one_thread() -> None:
    """The window paints without Qt's thread pool for fills. Qt's raster engine splits a large fill into
    bands, paints them on pooled threads and waits for them. The window's fills are many and small (a
    scroll bar, a chip, a table's cells), and the hand-over cost more than it saved: a Fusion scroll bar
    took 0.85 ms to paint with the pool and 0.12 ms without, and every interaction of a real model was
    1 to 3 ms faster without it (bench/bench_real_window.py). Only a large image, as a figure's PNG,
    fills faster in bands (5 to 8 % here): the command line's exports keep the pool. Qt reads the
    setting once, at its first fill."""
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def show_splash() -> QtWidgets.QLabel:
    """The app's icon on a frameless card, painted immediately.

    Only an image: the first text drawn makes Qt load its font database, which the window has to
    pay for anyway. A plain label rather than QSplashScreen, whose show() can wait up to a second
    for the window system to confirm the window is visible.
    """
    splash = QtWidgets.QLabel()
    splash.setWindowFlags(QtCore.Qt.WindowType.SplashScreen | QtCore.Qt.WindowType.FramelessWindowHint)
    splash.setWindowTitle(APP_NAME)
    splash.setPixmap(QtGui.QPixmap(str(resource_path("icons", "attention-explorer-256.png"))))
    splash.adjustSize()
    screen = QtGui.QGuiApplication.primaryScreen()
    if screen is not None:
        splash.move(screen.availableGeometry().center() - splash.rect().center())
    splash.show()
    splash.repaint()
    return splash


def run_window(model: str | None = None, sentence: str | None = None, ends_process: bool = False) -> int:
    """Open the window as it was left; a `model` (name or file) or `sentence` given here wins. With
    `ends_process` (the program run from its own command line, not called in a process of a caller's,
    such as a test's) the process ends here once the window has closed, without PySide's teardown
    (end_without_qt_teardown); otherwise the exit status is returned."""
    app = create_application()
    splash = show_splash()
    from .app import MainWindow  # pyqtgraph and the views: the slow part of a start
    from .controller import Controller
    from .crash_handler import CrashHandler, default_log_dir
    from .gc_policy import resume_after_start
    from .settings import open_settings
    from .views.crash_dialog import show_crash_dialog

    crash_handler = CrashHandler(default_log_dir(), show_crash_dialog, app).install()

    controller = Controller(background=True)  # real models load and run on a worker thread
    window = MainWindow(controller, open_settings())
    try:
        if model:
            controller.open_model(model, sentence)
        elif sentence is not None:
            controller.set_sentence(sentence)
    finally:
        splash.close()
    stop_closing_on_termination = close_on_termination(window)
    app.lastWindowClosed.connect(hand_over_quickly)
    window.show()
    QtCore.QTimer.singleShot(RESUME_COLLECTION_MS, resume_after_start)
    try:
        status = app.exec()
    finally:
        stop_closing_on_termination()
        crash_handler.uninstall()
    if not workers_stopped(QUIT_GRACE_MS):
        end_process_now(status)
    if ends_process:
        end_without_qt_teardown(status)
    return status


def workers_stopped(msecs: int) -> bool:
    """Whether every worker thread (real models, the census) has ended its job, waiting `msecs` at
    most. Quitting told each job to stop at its next step; a token being written or a layer being
    read ends within a fraction of a second. A worker left computing while Python and PySide tear
    the window down crashed the exit (SmolLM2 writing: 3 quits in 97 ended in a segmentation
    fault inside PySide's teardown of the window)."""
    worker = sys.modules.get(f"{__package__}.pretrained_worker")  # never imported: no worker was made
    return worker is None or worker.wait_for_every_worker(msecs)


def end_process_now(status: int) -> None:
    """End the process with `status` without the interpreter's teardown, for a worker still inside a
    step that cannot be stopped (a tokenizer, a file being read): the user's settings were saved as
    the window closed, the logs and the terminal's output are flushed here."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):  # a terminal gone, or a pipe closed
                stream.flush()
    os._exit(status)


def end_without_qt_teardown(status: int) -> None:
    """End the process with `status` once Python's exit functions have run (the logs, temporary folders),
    without PySide's own: at the interpreter's exit PySide destroys every Qt object Python still holds,
    in no set order, and a pyqtgraph label destroyed after its own text item was resized on the way,
    its Python `resizeEvent` failed on the deleted text item, and printing that error there crashed the
    exit (a quit while a decoder wrote: one exit in twelve under load). The window is closed and its
    settings saved by now; nothing is left to destroy that the system does not take back."""
    qt_teardown = getattr(QtCore, "__moduleShutdown", None)  # what PySide gives atexit to run
    if qt_teardown is not None:
        atexit.unregister(qt_teardown)
    atexit._run_exitfuncs()
    end_process_now(status)


def hand_over_quickly() -> None:
    """Once the window is closed, Python switches threads every QUITTING_SWITCH_S rather than every 5 ms.

    A real model's load may still be running on its worker thread, inside code that cannot be
    interrupted (a tokenizer, a reader). The thread is a daemon, so the exit does not wait for it,
    but it holds the interpreter lock for 5 ms at a time while the closing window, the event loop and
    the interpreter's own shutdown each wait for the lock thousands of times: a Quit took 2.3 s
    instead of 0.1 s. Nothing is computed for the user after this, so the shorter turns cost nothing.
    """
    sys.setswitchinterval(QUITTING_SWITCH_S)


def close_on_termination(window: QtWidgets.QWidget) -> Callable[[], None]:
    """A logout, a `kill` or Ctrl+C in the terminal that started the app closes the
    window as its close button does: the settings are saved (unsaved model edits are asked about) and
    the exit status is 0. Without this the default action ended the process on the spot. Returns what
    undoes it, for when the event loop is over.

    Python runs a signal handler only when it next runs code, and Qt's event loop may sleep for long,
    so the signal's number is also written to a socket Qt watches (signal.set_wakeup_fd), which wakes it.
    """
    reader, writer = socket.socketpair()
    for end in (reader, writer):
        end.setblocking(False)
    signal.set_wakeup_fd(writer.fileno())
    notifier = QtCore.QSocketNotifier(reader.fileno(), QtCore.QSocketNotifier.Type.Read, window)
    notifier.activated.connect(lambda: reader.recv(64))  # the handler has run by the time this does
    names = [name for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)]  # Windows: no SIGHUP
    before = {name: signal.signal(getattr(signal, name), lambda *_: QtCore.QTimer.singleShot(0, window.close))
              for name in names}

    def undo() -> None:
        notifier.setEnabled(False)
        signal.set_wakeup_fd(-1)
        for name, handler in before.items():
            signal.signal(getattr(signal, name), handler)
        reader.close()
        writer.close()

    return undo
