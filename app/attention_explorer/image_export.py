"""Painting a view as it stands: onto any painter (what figure.py composes figures from, PNG, SVG and
PDF alike), as a PNG or SVG of the view alone, and the step timeline's play-through as an animated GIF.

Figures (figure.py, figure_files.py) are what the window and the command line export; they paint
their fresh views through paint_widget here. The bytes are written by `export` (atomically); the
target is checked before anything is rendered, so a bad path fails at once, not after a long render.

A view that can be exported offers `export_widget()` (the QWidget holding exactly what it shows:
labels, colour bar, highlight) and `set_export_background(color_or_None)`. A view that plays also
offers `animation_frames()`, yielding (frame_view, milliseconds) once each frame is drawn, and
`animation_frame_limit()`, the most frames it will yield.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from .export import IMAGE_SCALES, ExportCancelled, ExportError, binary_output, check_target, write_bytes
from .views import theme
from .views.cell_image import CellImage
from .views.text_layer import TextLayer

POINTS_PER_INCH = 72

Progress = Callable[[int, int], bool]
"""progress(done, total) after each frame of a long export; returning False cancels it."""


def render_image(view, scale: int = 1, transparent: bool = False) -> QtGui.QImage:
    """The view as a QImage at `scale` times its size on screen (vector parts re-rendered, so crisp)."""
    if scale not in IMAGE_SCALES:
        raise ExportError(f"image scale must be one of {', '.join(map(str, IMAGE_SCALES))}, not {scale}")
    widget = view.export_widget()
    size = widget.size()
    check_image_size(size.width() * scale, size.height() * scale)
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


# Past this an image takes over 256 MB before it is encoded (a real model's 384-column step tables
# reach 21,000 × 8,000 pixels), and Qt cannot paint past 32,767 pixels a side.
MAX_IMAGE_PIXELS = 64_000_000
MAX_IMAGE_SIDE = 32_767


def check_image_size(width: int, height: int) -> None:
    if width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE or width * height > MAX_IMAGE_PIXELS:
        raise ExportError(f"the image would be {width:,} × {height:,} pixels, too large for a picture; "
                          "write it at a smaller size or as .svg or .pdf, or the matrix as .csv")


def image_to_png_bytes(image: QtGui.QImage) -> bytes:
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ExportError("the image could not be encoded as PNG")
    return bytes(buffer.data())


def export_png(view, path: str | Path, scale: int = 1, transparent: bool = False) -> None:
    check_target(path)
    write_bytes(path, image_to_png_bytes(render_image(view, scale, transparent)))


def svg_bytes(view, title: str = "Attention Explorer") -> bytes:
    """The view as SVG: words stay text, the heatmap's cells are one rectangle each.

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


def export_svg(view, path: str | Path, title: str = "Attention Explorer") -> None:
    """The view's SVG, fixed for viewers other than Qt as every figure's is (svg_fixes)."""
    check_target(path)
    size = view.export_widget().size()
    write_bytes(path, fixed_svg(svg_bytes(view, title), view.export_widget().logicalDpiX(), title=title,
                                description="Exported from Attention Explorer", metadata=None,
                                width=str(size.width()), height=str(size.height())))


def fixed_svg(svg: bytes, dpi: float, **fixes) -> bytes:
    """Qt's `svg`, drawn at `dpi`, as every viewer draws it alike: svg_fixes.fix_svg with the font Qt
    used and the sizes it drew its text at; `fixes`: fix_svg's other arguments."""
    from .svg_fixes import fix_svg

    return fix_svg(svg, family=QtGui.QFontInfo(QtGui.QFont()).family(),
                   drawn_size=lambda px: drawn_font_size(px, dpi), **fixes)


def drawn_font_size(px: float, dpi: float) -> float:
    """The size Qt's font engine lays out and draws a font written as `px` pixels at `dpi` (QSvgGenerator
    writes the size asked for; FreeType's engine rounds it to whole pixels): what the SVG must say."""
    font = QtGui.QFont()
    font.setPointSizeF(px * POINTS_PER_INCH / dpi)
    return QtGui.QRawFont.fromFont(font).pixelSize() or px  # (QFontInfo's points follow the last device)


# Past this many cells a matrix goes into a vector file as one picture of its cells (enlarged pixel by
# pixel and marked not to be smoothed: see svg_fixes), not a rectangle per cell: 512 words' 262,144
# rectangles made a 78 MB SVG that took 20 s to write; a picture of them is a few hundred kilobytes.
MAX_VECTOR_CELLS = 64 * 64


@contextlib.contextmanager
def _vector_items(scene: QtWidgets.QGraphicsScene, vector: bool):
    """For a vector file: text layers draw without their pixmap caches, so the words stay <text>
    (pyqtgraph's own cached items, such as the colour bar's gradient, are images anyway); a matrix of
    more than MAX_VECTOR_CELLS cells is drawn by a stand-in picture of its cells."""
    if not vector:
        yield
        return
    cached = [(item, item.cacheMode()) for item in scene.items() if isinstance(item, TextLayer)]
    for item, _mode in cached:
        item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)
    stand_ins = [_picture_of_cells(item) for item in scene.items()
                 if isinstance(item, CellImage) and item.isVisible() and item.image is not None
                 and item.image.shape[0] * item.image.shape[1] > MAX_VECTOR_CELLS]
    try:
        yield
    finally:
        for item, mode in cached:
            item.setCacheMode(mode)
        for cells, picture in stand_ins:
            scene.removeItem(picture)
            cells.show()


def _picture_of_cells(cells: CellImage) -> tuple[CellImage, QtWidgets.QGraphicsPixmapItem]:
    """A pixmap of the cells' colours where the cells are, the cells hidden meanwhile."""
    cells.render()  # the coloured image as the next paint would make it (pyqtgraph keeps an older one)
    picture = QtWidgets.QGraphicsPixmapItem(QtGui.QPixmap.fromImage(cells.qimage), cells.parentItem())
    picture.setTransform(cells.transform())
    picture.setPos(cells.pos())
    picture.setZValue(cells.zValue())
    picture.setTransformationMode(QtCore.Qt.TransformationMode.FastTransformation)
    cells.hide()
    return cells, picture


def _paint_widget(widget, device, flags) -> None:
    """Paint `widget` as it looks on screen onto `device`."""
    painter = QtGui.QPainter(device)
    try:
        paint_widget(widget, painter, vector=isinstance(device, QtSvg.QSvgGenerator),
                     background=bool(flags & QtWidgets.QWidget.RenderFlag.DrawWindowBackground))
    finally:
        painter.end()


def paint_widget(widget, painter: QtGui.QPainter, *, vector: bool, background: bool = False) -> None:
    """Paint `widget` where `painter` stands (its transform places and scales it).

    A pyqtgraph view is drawn through QGraphicsView.render (its scene, as the viewport shows it):
    QWidget.render would fill the viewport with the palette colour even when the view's background
    is meant to be transparent. `vector`: text layers drawn as text, not as cached pixmaps.
    """
    painter.save()
    try:
        painter.setRenderHints(QtGui.QPainter.RenderHint.Antialiasing | QtGui.QPainter.RenderHint.TextAntialiasing)
        if isinstance(widget, QtWidgets.QGraphicsView):
            if background and widget.backgroundBrush().style() != QtCore.Qt.BrushStyle.NoBrush:
                painter.fillRect(widget.rect(), widget.backgroundBrush())
            with _vector_items(widget.scene(), vector):
                widget.render(painter, QtCore.QRectF(widget.rect()), widget.viewport().rect(),
                              QtCore.Qt.AspectRatioMode.IgnoreAspectRatio)
        else:
            flags = QtWidgets.QWidget.RenderFlag.DrawChildren
            if background:
                flags |= QtWidgets.QWidget.RenderFlag.DrawWindowBackground
            QtWidgets.QWidget.render(widget, painter, QtCore.QPoint(0, 0),
                                     QtGui.QRegion(), flags)
    finally:
        painter.restore()


def pdf_bytes(view, title: str = "Attention Explorer") -> bytes:
    """A view as a one-page PDF at its size on screen, drawn as vectors (words stay text)."""
    widget = view.export_widget()
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    writer = QtGui.QPdfWriter(buffer)
    dpi = widget.logicalDpiX()          # the page is the widget's size: one pixel on screen, one pixel here
    writer.setResolution(dpi)
    size = widget.size()
    page = QtCore.QSizeF(size.width() * POINTS_PER_INCH / dpi, size.height() * POINTS_PER_INCH / dpi)
    writer.setPageSize(QtGui.QPageSize(page, QtGui.QPageSize.Unit.Point, "view"))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    writer.setTitle(title)
    writer.setCreator("Attention Explorer")
    _paint_widget(widget, writer,
                  QtWidgets.QWidget.RenderFlag.DrawChildren | QtWidgets.QWidget.RenderFlag.DrawWindowBackground)
    del writer  # finishes the document
    return bytes(buffer.data())


def export_view_file(view, path: str | Path, scale: int = 1, transparent: bool = False,
                     progress: Progress | None = None, title: str | None = None) -> None:
    """PNG, SVG, PDF or (for a view that plays) GIF by the file's ending; `progress` is asked after each
    GIF frame. (A view drawn as it is; the window's figures, with captions and themes, are figure_files'.)"""
    suffix = Path(path).suffix.lower()
    title = title or f"Attention Explorer — {Path(path).stem}"
    if suffix == ".png":
        export_png(view, path, scale, transparent)
    elif suffix == ".svg":
        export_svg(view, path, title=title)
    elif suffix == ".pdf":
        check_target(path)
        write_bytes(path, pdf_bytes(view, title))
    elif suffix == ".gif":
        export_gif(view, path, scale, progress)
    else:
        raise ExportError(f"an image is written as .png, .svg, .pdf or .gif, not {suffix or 'a file without ending'}")


# --- animations --------------------------------------------------------------------------------

def export_gif(view, path: str | Path, scale: int = 1, progress: Progress | None = None) -> None:
    """The view's play-through as a looping animated GIF (for slides).

    Each frame becomes a palette image (one byte a pixel) as soon as it is drawn, so a long
    play-through at 4× holds no full-colour frames. `progress(done, total)` is called after each
    frame (total is the view's frame limit; the last call has done == total); returning False stops
    the export and nothing is written.
    """
    if not hasattr(view, "animation_frames"):
        raise ExportError("only the steps view plays as an animated GIF (--view steps on the command line); "
                          "write the others as .png or .svg")
    if scale not in IMAGE_SCALES:
        raise ExportError(f"image scale must be one of {', '.join(map(str, IMAGE_SCALES))}, not {scale}")
    check_target(path)
    total = view.animation_frame_limit() if hasattr(view, "animation_frame_limit") else 0
    frames, durations = [], []
    frame_views = view.animation_frames()
    try:
        for frame_view, milliseconds in frame_views:
            frames.append(_palette_frame(render_image(frame_view, scale)))
            durations.append(milliseconds)
            if progress is not None and not progress(len(frames), max(total, len(frames))):
                raise ExportCancelled()
    finally:
        frame_views.close()  # the view drops its offscreen drawing at once, also when cancelled
    if not frames:
        raise ExportError("there is nothing to animate yet: type a sentence the model knows")
    with binary_output(path) as handle:
        _write_gif(handle, frames, durations)
    if progress is not None:
        progress(max(total, len(frames)), max(total, len(frames)))


def _palette_frame(image: QtGui.QImage):
    """A drawn frame as a Pillow palette image of up to 256 colours (the GIF's own limit)."""
    from PIL import Image  # only the GIF export needs Pillow; the window starts without it

    rgb = image.convertToFormat(QtGui.QImage.Format.Format_RGB888)  # frames are drawn opaque
    picture = Image.frombuffer("RGB", (rgb.width(), rgb.height()), rgb.constBits(), "raw", "RGB",
                               rgb.bytesPerLine(), 1)
    # Fast octree: about 6× quicker than the default median cut on our frames (the largest cost of a
    # 4× GIF), with colours at most a level or two off, which no one sees.
    return picture.quantize(256, method=Image.Quantize.FASTOCTREE)


def _write_gif(handle, frames: list, durations_ms: list[int]) -> None:
    """Frames may differ in size (a step's tables do): each is put at the top left of a canvas as
    large as the largest, on the view's background colour. The list is emptied as the frames are
    handed to the encoder, so they are not held twice."""
    width, height = max(f.width for f in frames), max(f.height for f in frames)
    background = theme.background().getRgb()[:3]

    def padded():
        while frames:
            yield _pad(frames.pop(0), width, height, background)

    pictures = padded()
    first = next(pictures)
    first.save(handle, format="GIF", save_all=True, append_images=pictures, duration=durations_ms, loop=0)


def _pad(frame, width: int, height: int, background: tuple[int, int, int]):
    """`frame` (a palette image) on a width × height canvas filled with its colour nearest `background`."""
    from PIL import Image

    if frame.size == (width, height):
        return frame
    palette = frame.getpalette()
    colours = [palette[i:i + 3] for i in range(0, len(palette), 3)]

    def distance(index: int) -> int:
        return sum((a - b) ** 2 for a, b in zip(colours[index], background, strict=True))

    nearest = min(range(len(colours)), key=distance)
    canvas = Image.new("P", (width, height), nearest)
    canvas.putpalette(palette)
    canvas.paste(frame, (0, 0))
    return canvas
