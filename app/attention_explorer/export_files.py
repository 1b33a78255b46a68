"""Where an export goes: the Save dialog opened in the folder last used for that kind of export, on a
name made of the model, the layer and head and the text's first words, with the chosen file type
winning when the name is typed without an ending (SVG chosen, "figure" typed: figure.svg is written).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6 import QtCore, QtWidgets

FILTERS = {".png": "PNG image (*.png)", ".svg": "SVG image (*.svg)", ".pdf": "PDF document (*.pdf)",
           ".gif": "Animated GIF (*.gif)", ".html": "Web page, interactive (*.html)", ".csv": "CSV table (*.csv)",
           ".json": "JSON trace (*.json)", ".aeview": "Attention Explorer view (*.aeview)"}
FOLDER_KEY = "export/folder/{kind}"

_folders: dict[str, str] = {}  # remembered in this run when there are no settings to keep them in


def suffix_of_filter(name_filter: str) -> str:
    """".svg" for "SVG image (*.svg)"; "" for a filter that names no single ending."""
    for suffix, text in FILTERS.items():
        if text == name_filter:
            return suffix
    return ""


def with_chosen_suffix(path: str, name_filter: str, allowed: tuple[str, ...]) -> str:
    """`path` as typed, or with the chosen filter's ending when it has none of the allowed ones."""
    if Path(path).suffix.lower() in allowed:
        return path
    chosen = suffix_of_filter(name_filter)
    if chosen and (not Path(path).suffix or Path(path).suffix.lower() not in FILTERS):
        return path + chosen
    return path


def last_folder(settings: QtCore.QSettings | None, kind: str) -> str:
    if settings is not None:
        value = settings.value(FOLDER_KEY.format(kind=kind))
        if isinstance(value, str) and Path(value).is_dir():
            return value
    folder = _folders.get(kind, "")
    return folder if folder and Path(folder).is_dir() else str(Path.home())


def remember_folder(settings: QtCore.QSettings | None, kind: str, path: str) -> None:
    """The chosen file's folder, where the next dialog of `kind` opens. Made absolute without following
    links: a chosen file that is a loop of links made Path.resolve raise, and the dialog with it."""
    folder = os.path.dirname(os.path.abspath(path))
    _folders[kind] = folder
    if settings is not None:
        settings.setValue(FOLDER_KEY.format(kind=kind), folder)


def ask_save_path(parent: QtWidgets.QWidget, settings: QtCore.QSettings | None, kind: str, stem: str,
                  suffixes: tuple[str, ...], preferred: str, title: str = "Export") -> str | None:
    """The path to write, or None when the user cancelled. `suffixes`: the file types offered,
    `preferred` the one selected first."""
    filters = [FILTERS[s] for s in suffixes]
    start = str(Path(last_folder(settings, kind)) / f"{stem}{preferred}")
    path, chosen = QtWidgets.QFileDialog.getSaveFileName(parent, title, start, ";;".join(filters),
                                                         FILTERS.get(preferred, filters[0]))
    if not path:
        return None
    path = with_chosen_suffix(path, chosen or FILTERS.get(preferred, ""), suffixes)
    remember_folder(settings, kind, path)
    return path
