"""What the app remembers between runs (QSettings): window geometry, model, sentence, options, colours."""

from __future__ import annotations

import contextlib

from PySide6 import QtCore, QtWidgets

from .controller import Controller
from .engine import EngineError, ModelError
from .views import theme


def open_settings() -> QtCore.QSettings:
    return QtCore.QSettings("attention-explorer", "Attention Explorer")


def save_settings(settings: QtCore.QSettings, controller: Controller, window: QtWidgets.QMainWindow) -> None:
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/state", window.saveState())
    settings.setValue("model/source", controller.model_source)
    settings.setValue("model/sentence", controller.sentence)
    for name, value in controller.options.to_dict().items():
        settings.setValue(f"options/{name}", value)
    settings.setValue("view/matrix", controller.matrix)
    settings.setValue("view/head", controller.head)
    settings.setValue("view/colormap", controller.colormap)
    settings.sync()


def restore_settings(settings: QtCore.QSettings, controller: Controller, window: QtWidgets.QMainWindow) -> None:
    """Bring back the last session; anything stale or damaged is skipped, never fatal."""
    geometry = settings.value("window/geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    state = settings.value("window/state")
    if state is not None:
        window.restoreState(state)
    source = settings.value("model/source")
    if source:
        with contextlib.suppress(ModelError):  # the remembered file is gone or damaged: keep the default
            controller.open_model(str(source))
    sentence = settings.value("model/sentence")
    if sentence is not None:
        controller.set_sentence(str(sentence))
    options = {name: _bool(settings.value(f"options/{name}"))
               for name in ("scale", "causal", "positional") if settings.value(f"options/{name}") is not None}
    try:
        heads = settings.value("options/heads")
        if heads is not None:
            options["heads"] = int(heads)
        controller.update_options(**options)
    except (EngineError, ValueError, TypeError):
        pass  # e.g. a head count that does not fit the model any more
    matrix = settings.value("view/matrix")
    if matrix:
        with contextlib.suppress(ValueError):
            controller.set_matrix(str(matrix))
    head = settings.value("view/head")
    if head is not None:
        controller.set_head(int(head))
    colormap = settings.value("view/colormap")
    if colormap in theme.COLORMAPS:
        controller.set_colormap(str(colormap))


def _bool(value) -> bool:
    """QSettings gives back "true"/"false" strings from INI files."""
    return value if isinstance(value, bool) else str(value).lower() in ("true", "1")
