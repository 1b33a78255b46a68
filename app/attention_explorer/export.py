"""Every way a trace leaves the app: matrices as CSV, the trace as JSON, views as PNG/SVG/clipboard,
the step timeline's play-through as an animated GIF.

The menu, the toolbar, each view's context menu and the command line all come here, so an export
looks the same whichever way it was asked for. Files are written atomically: a failed export leaves
no partial file and never clobbers the old one.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from .engine.atomic_write import write_bytes_atomically, write_text_atomically
from .engine.trace import HEAD_MATRICES, SQUARE_MATRICES, Trace
from .views import theme
from .views.text_layer import TextLayer

MATRIX_CHOICES = HEAD_MATRICES


class ExportError(Exception):
    """An export could not be written; the message says why, for the user."""


def trace_to_dict(trace: Trace) -> dict:
    """The JSON form of a trace: matrices as lists of rows, masked entries as null."""
    return {
        "model": trace.model_name,
        "sentence": trace.sentence,
        "tokens": list(trace.tokens),
        "labels": list(trace.labels),
        "unknown": list(trace.unknown),
        "features": list(trace.features),
        "options": trace.options.to_dict(),
        "embedding": _rows(trace.embedding),
        "positional": None if trace.positional is None else _rows(trace.positional),
        "x": _rows(trace.x),
        "heads": [
            {name: _rows(getattr(head, name)) for name in
             ("w_q", "w_k", "w_v", "q", "k", "v", "scores", "scaled", "masked", "weights", "output")}
            for head in trace.heads
        ],
        "concat": _rows(trace.concat),
        "w_o": None if trace.w_o is None else _rows(trace.w_o),
        "output": _rows(trace.output),
    }


def trace_to_json(trace: Trace) -> str:
    return _readable_json(trace_to_dict(trace)) + "\n"


def _readable_json(value: object, depth: int = 0) -> str:
    """JSON with one matrix row per line: easy to read and to diff, still standard JSON."""
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {_readable_json(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and value and all(isinstance(v, (list, dict)) for v in value):
        items = [inner + _readable_json(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def matrix_table(trace: Trace, matrix: str, head: int | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """(row labels, column labels, values) of a named matrix.

    `head` is 0-based; None means head 0 for per-head matrices and the layer's final output for
    "output" (the concatenation, times W_O when the model has it).
    """
    if matrix not in MATRIX_CHOICES:
        raise ExportError(f"unknown matrix {matrix!r}; choose one of {', '.join(MATRIX_CHOICES)}")
    if head is not None and not 0 <= head < len(trace.heads):
        raise ExportError(f"head {head + 1} does not exist; this trace has {len(trace.heads)} head(s)")
    if matrix == "output" and head is None:
        return list(trace.labels), trace.output_column_labels(), trace.output
    head = head or 0
    return list(trace.labels), trace.column_labels(matrix, head), trace.matrix(matrix, head)


def matrix_to_csv(trace: Trace, matrix: str, head: int | None = None) -> str:
    """One matrix as CSV: token labels in the header row and first column; −∞ written as -inf."""
    rows, columns, values = matrix_table(trace, matrix, head)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([_corner_label(matrix), *columns])
    for label, row in zip(rows, values, strict=True):
        writer.writerow([label, *(_csv_number(x) for x in row)])
    return buffer.getvalue()


def write_text(path: str | Path, text: str) -> None:
    """Write text atomically, turning OS errors into one readable ExportError."""
    try:
        write_text_atomically(Path(path), text)
    except OSError as exc:
        raise ExportError(_os_reason(path, exc)) from None


def write_bytes(path: str | Path, data: bytes) -> None:
    try:
        write_bytes_atomically(Path(path), data)
    except OSError as exc:
        raise ExportError(_os_reason(path, exc)) from None


def _os_reason(path: str | Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"cannot write {path}: {reason}"


def _corner_label(matrix: str) -> str:
    return "looking \\ looked at" if matrix in SQUARE_MATRICES else "token"


def _csv_number(x: float) -> str:
    return "-inf" if x == -math.inf else repr(float(x))


def _rows(matrix: np.ndarray) -> list:
    """Lists of rows with −∞ (masked) as None, so the JSON stays standard."""
    return [[None if math.isinf(x) and x < 0 else float(x) for x in row] for row in np.asarray(matrix)]


# --- images of views ---------------------------------------------------------------------------
# A view that can be exported offers `export_widget()` (the QWidget holding exactly what it shows:
# labels, colour bar, highlight) and `set_export_background(color_or_None)`.

IMAGE_SCALES = (1, 2, 4)


def render_image(view, scale: int = 1, transparent: bool = False):
    """The view as a QImage at `scale` times its size on screen (vector parts re-rendered, so crisp)."""
    if scale not in IMAGE_SCALES:
        raise ExportError(f"image scale must be one of {', '.join(map(str, IMAGE_SCALES))}, not {scale}")
    widget = view.export_widget()
    size = widget.size()
    image = QtGui.QImage(size * scale, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(scale)
    image.fill(QtCore.Qt.GlobalColor.transparent if transparent else theme.background())
    if transparent:
        view.set_export_background(None)
    try:
        _paint_widget(widget, image, QtWidgets.QWidget.RenderFlag.DrawChildren)
    finally:
        if transparent:
            view.set_export_background(theme.background())
    return image


def image_to_png_bytes(image) -> bytes:
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ExportError("the image could not be encoded as PNG")
    return bytes(buffer.data())


def export_png(view, path: str | Path, scale: int = 1, transparent: bool = False) -> None:
    write_bytes(path, image_to_png_bytes(render_image(view, scale, transparent)))


def svg_bytes(view, title: str = "Attention Explorer") -> bytes:
    """The view as SVG: labels stay text, the heatmap's cells become an embedded image.

    (Rendered with QPainter onto QSvgGenerator; pyqtgraph's own SVG exporter fails on current
    PySide6 releases.)
    """
    widget = view.export_widget()
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    generator = QtSvg.QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(widget.size())
    # pyqtgraph's axes replay recorded QPictures, which rescale by the device's resolution:
    # match the screen's so they land where they are on screen.
    generator.setResolution(widget.logicalDpiX())
    generator.setViewBox(QtCore.QRect(QtCore.QPoint(0, 0), widget.size()))
    generator.setTitle(title)
    generator.setDescription("Exported from Attention Explorer")
    _paint_widget(widget, generator,
                  QtWidgets.QWidget.RenderFlag.DrawChildren | QtWidgets.QWidget.RenderFlag.DrawWindowBackground)
    return bytes(buffer.data())


@contextlib.contextmanager
def _vector_items(scene: QtWidgets.QGraphicsScene, vector: bool):
    """Text layers cache their drawing as pixmaps, which would land in an SVG as images: switch
    their caches off while a vector file is drawn, so the words stay <text>. (pyqtgraph's own
    cached items, such as the colour bar's gradient, are left alone: they are images anyway.)"""
    cached = [(item, item.cacheMode()) for item in scene.items() if vector and isinstance(item, TextLayer)]
    for item, _mode in cached:
        item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)
    try:
        yield
    finally:
        for item, mode in cached:
            item.setCacheMode(mode)


def _paint_widget(widget, device, flags) -> None:
    """Paint `widget` as it looks on screen onto `device`.

    A pyqtgraph view is drawn through QGraphicsView.render (its scene, as the viewport shows it):
    QWidget.render would fill the viewport with the palette colour even when the view's background
    is meant to be transparent.
    """
    painter = QtGui.QPainter(device)
    try:
        painter.setRenderHints(QtGui.QPainter.RenderHint.Antialiasing | QtGui.QPainter.RenderHint.TextAntialiasing)
        if isinstance(widget, QtWidgets.QGraphicsView):
            if flags & QtWidgets.QWidget.RenderFlag.DrawWindowBackground and widget.backgroundBrush().style() != \
                    QtCore.Qt.BrushStyle.NoBrush:
                painter.fillRect(widget.rect(), widget.backgroundBrush())
            with _vector_items(widget.scene(), isinstance(device, QtSvg.QSvgGenerator)):
                widget.render(painter, QtCore.QRectF(widget.rect()), widget.viewport().rect(),
                              QtCore.Qt.AspectRatioMode.IgnoreAspectRatio)
        else:
            QtWidgets.QWidget.render(widget, painter, QtCore.QPoint(0, 0), QtGui.QRegion(), flags)
    finally:
        painter.end()


def export_svg(view, path: str | Path, title: str = "Attention Explorer") -> None:
    write_bytes(path, svg_bytes(view, title))


def export_view_file(view, path: str | Path, scale: int = 1, transparent: bool = False) -> None:
    """PNG, SVG or (for a view that plays) GIF by the file's ending."""
    suffix = Path(path).suffix.lower()
    if suffix == ".png":
        export_png(view, path, scale, transparent)
    elif suffix == ".svg":
        export_svg(view, path, title=f"Attention Explorer — {Path(path).stem}")
    elif suffix == ".gif":
        export_gif(view, path, scale)
    else:
        raise ExportError(f"an image is written as .png, .svg or .gif, not {suffix or 'a file without ending'}")


# --- animations --------------------------------------------------------------------------------
# A view that plays offers `animation_frames()`: it yields (frame_view, milliseconds) once each frame
# is drawn, where frame_view offers export_widget() and set_export_background() like any view.

def gif_bytes(frames: list[QtGui.QImage], durations_ms: list[int]) -> bytes:
    """Frames as a looping animated GIF. Frames may differ in size (a step's tables do): each is put
    at the top left of a canvas as large as the largest, on the view's background colour."""
    from PIL import Image  # only the GIF export needs Pillow; the window starts without it

    width, height = max(f.width() for f in frames), max(f.height() for f in frames)
    background = theme.background()
    pictures = []
    for frame in frames:
        rgba = frame.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
        picture = Image.frombuffer("RGBA", (rgba.width(), rgba.height()), bytes(rgba.constBits()), "raw", "RGBA",
                                   rgba.bytesPerLine(), 1)
        canvas = Image.new("RGB", (width, height), (background.red(), background.green(), background.blue()))
        canvas.paste(picture, (0, 0), picture)
        pictures.append(canvas)
    buffer = io.BytesIO()
    pictures[0].save(buffer, format="GIF", save_all=True, append_images=pictures[1:], duration=durations_ms, loop=0)
    return buffer.getvalue()


def export_gif(view, path: str | Path, scale: int = 1) -> None:
    """The view's play-through as an animated GIF (for slides)."""
    if not hasattr(view, "animation_frames"):
        raise ExportError("only the steps view plays as an animated GIF (--view steps on the command line); "
                          "write the others as .png or .svg")
    frames, durations = [], []
    for frame_view, milliseconds in view.animation_frames():
        frames.append(render_image(frame_view, scale))
        durations.append(milliseconds)
    if not frames:
        raise ExportError("there is nothing to animate yet: type a sentence the model knows")
    write_bytes(path, gif_bytes(frames, durations))


def copy_image_to_clipboard(view, scale: int = 2) -> None:
    QtWidgets.QApplication.clipboard().setImage(render_image(view, scale))
