"""Qt without a display, for `attention-explorer export` and the tests: the offscreen application,
views of a computation built offscreen, and their prompt destruction.

The Qt objects made here live only for one export and are destroyed, children before parents, before
the function returns. Left for the interpreter's shutdown, they were torn down in an arbitrary order
after the application object, and a view's Python overrides ran on half-destroyed C++ objects: the
file was complete but the process died with a segmentation fault.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from .engine import Options, ToyModel


def ensure_application():
    """A QApplication on the offscreen platform (reusing one that already runs, e.g. in tests)."""
    from PySide6 import QtCore, QtWidgets

    app = QtWidgets.QApplication.instance()
    if app is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        QtCore.qInstallMessageHandler(_quiet_offscreen_notes)
        app = QtWidgets.QApplication(["attention-explorer"])
    return app


_OFFSCREEN_NOTES = ("This plugin does not support",)  # the offscreen platform's harmless remarks


def _quiet_offscreen_notes(_kind, _context, message: str) -> None:
    """Keep stderr to what the user needs: drop the offscreen platform's notes, pass the rest on."""
    if not message.startswith(_OFFSCREEN_NOTES):
        print(message, file=sys.stderr)


def destroy_now(*objects) -> None:
    """Delete these Qt objects (and their children) at once, not at the next turn of an event loop
    that a headless export never runs again."""
    from PySide6 import QtCore

    for obj in objects:
        if hasattr(obj, "close"):
            obj.close()
        obj.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)


@contextlib.contextmanager
def offscreen_view(model: ToyModel, sentence: str, options: Options, *, view: str, matrix: str,
                   head: int | None, step: int | None = None) -> Iterator[object]:
    """A controller and one view of this computation (as a figure lays it out), destroyed when the block
    ends. With no head chosen the views show head 1, and the arcs every head, as the window opens; a
    chosen head is the only one in the arcs."""
    from .controller import Controller
    from .figure import make_view, natural_size, settle

    ensure_application()
    controller = Controller(model, sentence, options)
    widget = None
    try:
        controller.set_matrix(matrix)
        controller.set_head(head or 0)
        if step is not None:
            controller.set_step(step)
        widget = make_view(view, controller)
        if view == "arcs" and head is not None:
            widget.all_heads.setChecked(False)
        widget.resize(natural_size(view, controller.trace.n if controller.trace else 0))
        widget.show()
        settle(widget)
        yield widget
    finally:
        destroy_now(*(obj for obj in (widget, controller) if obj is not None))


def real_controller(source: str, sentence: str, *, target: str | None = None, part: str | None = None):
    """A controller on a real model (its list name, an HF folder or a .gguf file) that has run `sentence`
    (an encoder–decoder: as its source, with `target`, showing `part`), loaded at once (no worker
    thread). Raises EngineError when the model or the text cannot be used."""
    from .controller import Controller
    from .engine import SentenceError

    ensure_application()
    controller = Controller()
    try:
        controller.open_model(source, sentence, target=target, part=part)
        if controller.trace is None:
            raise SentenceError(controller.error or f"{source} gave nothing to show for this text")
    except BaseException:
        destroy_now(controller)
        raise
    return controller
