"""Rendering views to image files without a display, for `attention-explorer export`.

The Qt objects made here live only for one export and are destroyed, children before parents, before
the function returns. Left for the interpreter's shutdown, they were torn down in an arbitrary order
after the application object, and a view's Python overrides ran on half-destroyed C++ objects: the
file was complete but the process died with a segmentation fault.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

from .engine import Options, ToyModel

# The model view (a real model's layers × heads) takes its cell size from the width and is drawn whole.
VIEW_SIZES = {"heatmap": (820, 720), "arcs": (640, 720), "steps": (1100, 640), "model": (900, 720)}


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


def build_view(name: str, controller):
    """The same view class the window shows, sized for a figure that fits the sentence."""
    from .views.arc_diagram import QtArcDiagram
    from .views.heatmap import QtHeatmap
    from .views.model_view import QtModelView
    from .views.step_timeline import QtStepTimeline

    view = {"heatmap": QtHeatmap, "arcs": QtArcDiagram, "steps": QtStepTimeline, "model": QtModelView}[name](controller)
    width, height = VIEW_SIZES[name]
    n = controller.trace.n if controller.trace else 0
    grow = max(0, n - 10) * 28
    view.resize(min(width + grow, 2400), min(height + grow, 2400))
    view.show()  # offscreen: lays the widgets out without a screen
    ensure_application().processEvents()
    return view


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
    """A controller and one view of this computation, destroyed when the block ends."""
    from .controller import Controller

    ensure_application()
    with controller_view(Controller(model, sentence, options), view=view, matrix=matrix, head=head,
                         step=step) as widget:
        yield widget


def real_controller(source: str, sentence: str):
    """A controller on a real model (its list name, an HF folder or a .gguf file) that has run `sentence`,
    loaded at once (no worker thread). Raises EngineError when the model or the text cannot be used."""
    from .controller import Controller
    from .engine import SentenceError

    ensure_application()
    controller = Controller()
    try:
        controller.open_model(source, sentence)
        if controller.trace is None:
            raise SentenceError(controller.error or f"{source} gave nothing to show for this text")
    except BaseException:
        destroy_now(controller)
        raise
    return controller


@contextlib.contextmanager
def controller_view(controller, *, view: str, matrix: str, head: int | None,
                    step: int | None = None) -> Iterator[object]:
    """One view of `controller` showing `matrix` of `head` (at `step` of engine.steps.STEPS, else the
    finished computation); both destroyed when the block ends. With no head chosen the views show
    head 1, and the arcs every head, as the window opens; a chosen head is the only one in the arcs."""
    controller.set_matrix(matrix)
    controller.set_head(head or 0)
    if step is not None:
        controller.set_step(step)
    widget = None
    try:
        widget = build_view(view, controller)
        if view == "arcs" and head is not None:
            widget.all_heads.setChecked(False)
        yield widget
    finally:
        destroy_now(*(obj for obj in (widget, controller) if obj is not None))


def export_view(model: ToyModel, sentence: str, options: Options, *, view: str, matrix: str, head: int | None,
                path: str, scale: int, transparent: bool, step: int | None = None,
                progress: Callable[[int, int], bool] | None = None) -> None:
    """Write `view` of this computation to `path` (.png or .svg; .gif plays the steps view through)."""
    from .image_export import export_view_file

    with offscreen_view(model, sentence, options, view=view, matrix=matrix, head=head, step=step) as widget:
        export_view_file(widget, path, scale, transparent, progress=progress)


def export_real_view(source: str, sentence: str, *, choose: Callable[[object], tuple[int, int | None]], view: str,
                     matrix: str, path: str, scale: int, transparent: bool, step: int | None = None) -> None:
    """Write `view` of a real model (list name, HF folder or .gguf file) on `sentence` to `path`;
    `choose(model)` gives the 0-based (layer, head) to show (head None: none chosen), or raises when the
    request does not fit."""
    from .image_export import export_view_file

    controller = real_controller(source, sentence)
    try:
        layer, head = choose(controller.real_model)
    except BaseException:
        destroy_now(controller)
        raise
    controller.set_layer(layer)
    with controller_view(controller, view=view, matrix=matrix, head=head, step=step) as widget:
        export_view_file(widget, path, scale, transparent)
