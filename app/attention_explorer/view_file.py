"""View files (File ▸ Save view…) and the view state inside any file the app wrote: a .aeview file, or
a PNG, SVG or PDF figure. No Qt here.

Every file is read as untrusted: through engine.safe_read (a regular file of bounded size, looked at
before it is opened: never a FIFO or a device), then the state is checked field by field
(figure_state). Anything wrong is one ViewFileError whose message names the file and says why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .engine.errors import EngineError
from .engine.safe_read import parse_json, read_user_bytes
from .export import write_text
from .figure_metadata import pdf_metadata, png_metadata
from .figure_state import FORMAT_NAME, FigureStateError, ViewState, state_from_dict

VIEW_SUFFIX = ".aeview"
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
MAX_VIEW_FILE_BYTES = 16 * 1024 * 1024    # a state with a toy model at the engine's limits
MAX_FIGURE_BYTES = 512 * 1024 * 1024      # a 64-megapixel PNG, a large SVG


class ViewFileError(EngineError):
    """A file that holds no usable view; the message says which file and why."""


def state_json(state: ViewState, figure: dict | None = None) -> str:
    """The text of a view file and of a figure's metadata: the state, and how the figure was drawn."""
    data = state.to_dict()
    if figure is not None:
        data["figure"] = figure
    return json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False)


def write_view_file(path: str | os.PathLike, state: ViewState) -> None:
    """A view file, written atomically like every export."""
    write_text(path, state_json(state) + "\n")


def is_view_json(data: object) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT_NAME


def read_view(path: str | os.PathLike) -> ViewState:
    """The view a .aeview file holds, or the one a figure carries."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in FIGURE_SUFFIXES:
        text = _figure_metadata(path, suffix)
        if text is None:
            raise ViewFileError(f"{path.name}: carries no Attention Explorer view (made by another program, "
                                "or edited and saved without its metadata)")
    else:
        text = _text(read_user_bytes(path, "view file", max_bytes=MAX_VIEW_FILE_BYTES, error=ViewFileError), path)
    data = parse_json(text, path.name, "view file", error=ViewFileError)
    try:
        return state_from_dict(data)
    except FigureStateError as exc:
        raise ViewFileError(f"{path.name}: a damaged view: {exc}") from None


def _figure_metadata(path: Path, suffix: str) -> str | None:
    data = read_user_bytes(path, "figure", max_bytes=MAX_FIGURE_BYTES, error=ViewFileError)
    if suffix == ".png":
        return png_metadata(data)
    if suffix == ".pdf":
        return pdf_metadata(data)
    from .svg_fixes import read_metadata  # the XML library loads only for an SVG

    return read_metadata(_text(data, path))


def _text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ViewFileError(f"{path.name}: not UTF-8 text, so not a view file") from None
