"""Figures written to files: PNG, SVG and PDF that carry their view state, the steps as an animated GIF,
and the interactive web page. The window, its clipboard and the command line all come here.

SVG is Qt's, fixed for other viewers (svg_fixes); the PDF is that same SVG drawn by Qt's SVG renderer
onto a PDF page, so the two vector files are one picture: text stays text (its font embedded in the
PDF), cells stay rectangles. The target is checked before anything is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtSvg

from . import __version__
from .export import ExportError, check_target, write_bytes, write_text
from .figure import Figure, WindowPart, built_figure, figure_image, layout_size, make_view, paint_figure, settle
from .figure_controller import figure_facts
from .figure_metadata import pdf_with_metadata, png_with_metadata
from .figure_options import CM_PER_INCH, FIGURE_FORMATS, SCREEN_DPI, FigureOptions, FigureSize
from .figure_state import ViewState
from .figure_text import caption
from .headless import destroy_now
from .image_export import fixed_svg
from .svg_fixes import MAX_ENLARGED_SIDE, without_group_opacity
from .view_file import state_json
from .views import theme

MM_PER_PX = 25.4 / SCREEN_DPI
# A PDF embeds its pictures whole: thumbnails are enlarged (viewers sample small pictures unevenly),
# a 512-word matrix is not (enlarged, it made a 17 MB file; PDF viewers do not smooth it).
PDF_ENLARGED_SIDE = 1024
FIGURE_TITLE = "Attention Explorer figure"


def output_ratio(size: FigureSize, figure_width: float) -> float:
    """Output pixels per layout pixel for a figure `figure_width` layout pixels wide."""
    if size.width_px is not None:
        return size.width_px / figure_width
    if size.width_cm is not None:
        return size.width_cm / CM_PER_INCH * size.dpi / figure_width
    return size.scale


def write_figure(controller, state: ViewState, options: FigureOptions, path: str | Path, *,
                 window_part: WindowPart | None = None, progress: Callable[[int, int], bool] | None = None) -> None:
    """`state` drawn from `controller` into `path`: .png, .svg, .pdf, .html, or .gif (the steps)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FIGURE_FORMATS:
        raise ExportError(f"a figure is written as {', '.join(FIGURE_FORMATS)}, "
                          f"not {suffix or 'a file without ending'}")
    if window_part is not None and suffix != ".png":
        raise ExportError("the part on screen is drawn as PNG only; an SVG or PDF holds the whole matrix "
                          "(untick “Only the part on screen”)")
    check_target(path)
    if suffix == ".html":
        write_html_figure(controller, state, options, path)
        return
    if suffix == ".gif":
        write_gif(controller, state, options, path, progress)
        return
    facts = figure_facts(controller, _visible(window_part))
    with built_figure(controller, state, options, facts, window_part) as figure:
        text = state_json(state, options.to_dict())
        if suffix == ".png":
            data = png_bytes(figure, options, text)
        elif suffix == ".svg":
            data = svg_bytes(figure, options, text)
        else:
            data = pdf_bytes(figure, options, text)
    write_bytes(path, data)


def _visible(window_part: WindowPart | None) -> tuple[range, range] | None:
    return None if window_part is None else (window_part.rows, window_part.columns)


def png_bytes(figure: Figure, options: FigureOptions, state_text: str) -> bytes:
    ratio = output_ratio(options.size, figure.width)
    image = figure_image(figure, ratio)
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ExportError("the image could not be encoded as PNG")
    dpi = options.size.dpi if options.size.printed else SCREEN_DPI * ratio
    return png_with_metadata(bytes(buffer.data()), state=state_text, description=figure.caption, dpi=dpi)


def svg_resolution(figure: Figure) -> int:
    """The dots per inch the SVG is drawn at: those of the widgets, so that pyqtgraph's axes (recorded
    QPictures, which rescale by the device's resolution) land where they are in the PNG."""
    return figure.pieces[0].widget.logicalDpiX() if figure.pieces else SCREEN_DPI


def raw_svg(figure: Figure) -> bytes:
    """The figure through QSvgGenerator, before svg_fixes."""
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    generator = QtSvg.QSvgGenerator()
    generator.setOutputDevice(buffer)
    size = QtCore.QSize(round(figure.width), round(figure.height))
    generator.setSize(size)
    generator.setResolution(svg_resolution(figure))
    generator.setViewBox(QtCore.QRectF(0, 0, figure.width, figure.height))
    painter = QtGui.QPainter(generator)
    try:
        paint_figure(figure, painter, vector=True)
    finally:
        painter.end()
    return bytes(buffer.data())


def svg_bytes(figure: Figure, options: FigureOptions, state_text: str, *,
              max_enlarged: int = MAX_ENLARGED_SIDE) -> bytes:
    """The fixed SVG, its pictures enlarged to the output's pixels up to `max_enlarged` a side."""
    size = options.size
    ratio = output_ratio(size, figure.width)
    if size.printed:
        width, height = f"{size.width_cm:g}cm", f"{size.width_cm * figure.height / figure.width:.3f}cm"
    else:
        width, height = f"{figure.width * ratio:.0f}", f"{figure.height * ratio:.0f}"
    return fixed_svg(raw_svg(figure), svg_resolution(figure), title=options.title or FIGURE_TITLE,
                     description=figure.caption or FIGURE_TITLE, metadata=state_text, width=width, height=height,
                     pixel_ratio=ratio, max_enlarged=max_enlarged)


def pdf_bytes(figure: Figure, options: FigureOptions, state_text: str) -> bytes:
    """One page the figure's size (its print width, or its layout pixels at 96 dpi), drawn from the SVG."""
    svg = svg_bytes(figure, options, state_text, max_enlarged=PDF_ENLARGED_SIDE)
    renderer = QtSvg.QSvgRenderer(QtCore.QByteArray(without_group_opacity(svg)))
    if not renderer.isValid():
        raise ExportError("the figure's vector drawing could not be read back to make the PDF")
    size = options.size
    width_mm = size.width_cm * 10 if size.printed else figure.width * MM_PER_PX
    height_mm = width_mm * figure.height / figure.width
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    writer = QtGui.QPdfWriter(buffer)
    writer.setPageSize(QtGui.QPageSize(QtCore.QSizeF(width_mm, height_mm), QtGui.QPageSize.Unit.Millimeter))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    writer.setResolution(1200)
    writer.setTitle(options.title or figure.caption[:200] or FIGURE_TITLE)
    writer.setCreator(f"Attention Explorer {__version__}")
    painter = QtGui.QPainter(writer)
    try:
        painter.setRenderHint(QtGui.QPainter.RenderHint.SmoothPixmapTransform, False)  # /Interpolate false
        renderer.render(painter, QtCore.QRectF(0, 0, writer.width(), writer.height()))
    finally:
        painter.end()
    return pdf_with_metadata(bytes(buffer.data()), state_text)


def clipboard_image(controller, state: ViewState, options: FigureOptions) -> QtGui.QImage:
    """The figure as an image for the clipboard (at the options' size)."""
    with built_figure(controller, state, options, figure_facts(controller)) as figure:
        return figure_image(figure, output_ratio(options.size, figure.width))


def write_gif(controller, state: ViewState, options: FigureOptions, path: str | Path,
              progress: Callable[[int, int], bool] | None = None) -> None:
    """The steps played through, in the figure's theme, from a fresh steps view."""
    from .image_export import export_gif

    if state.view != "steps":
        raise ExportError("only the steps view plays as an animated GIF (--view steps); write the others as .png, "
                          ".svg or .pdf")
    if controller.is_real:
        raise ExportError("a GIF plays a toy model's steps through; write a real model's view as .png or .svg")
    scale = options.size.scale
    if scale not in (1, 2, 4):
        raise ExportError("an animated GIF is written at 1×, 2× or 4×")
    if theme.FIGURE_THEMES[options.theme].transparent:
        raise ExportError("a GIF's frames need a background: choose the light or the dark theme")
    with theme.figure_theme(options.theme):
        view = make_view("steps", controller)
        try:
            view.resize(layout_size("steps", controller.trace.n if controller.trace else 0, options))
            view.show()
            settle(view)
            export_gif(view, path, int(scale), progress)
        finally:
            destroy_now(view)


def write_html_figure(controller, state: ViewState, options: FigureOptions, path: str | Path) -> None:
    """The shown head's matrix as the interactive web page (html_figure), in the figure's colours."""
    import pyqtgraph as pg

    from .html_figure import html_page
    from .views.cell_colours import hidden_cells, value_span
    from .views.heatmap import AXIS_TITLES, CROSS_AXIS_TITLES, LONG_SENTENCE_WORDS, heatmap_title

    facts = figure_facts(controller)
    trace = controller.trace
    matrix = trace.matrix(state.matrix, controller.head)
    mask = trace.mask if state.matrix in ("weights", "masked") else None
    weights = state.matrix == "weights"
    span = state.span or ("row" if trace.n > LONG_SENTENCE_WORDS else "fixed")
    display = np.where(hidden_cells(matrix, mask), np.nan, matrix)
    levels = (0.0, 1.0) if weights and span != "data" else value_span(display)
    colours = theme.FIGURE_THEMES[options.theme]
    heading = heatmap_title(trace, state.matrix, controller.head)
    text = caption(replace(state, view="heatmap"), replace(facts, span=span)) if options.caption else ""
    lut = pg.colormap.get(state.colormap).getLookupTable(nPts=256, alpha=False)
    page = html_page(labels=list(trace.labels), matrix=matrix, mask=mask, levels=levels,
                     span=span if weights else "data", colours=lut, title=options.title, caption=text,
                     heading=heading, percent=weights, background=colours.background,
                     foreground=colours.foreground, dark=colours.dark, key_labels=trace.key_labels,
                     axis_titles=AXIS_TITLES if trace.key_labels is None else CROSS_AXIS_TITLES)
    write_text(path, page)
