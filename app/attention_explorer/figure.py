"""A figure: a fresh view of a controller, built offscreen in the figure's theme, showing the whole
matrix (or the part asked for), with its title, caption and colour-bar label composed around it.

The view is the class the window shows, given a copy of the state (figure_controller), so an export
needs nothing of the window's own views and cannot change them. While it is built and drawn, the
theme's colours answer every view's theme.foreground()/background() call (views.theme.figure_theme),
and only the figure's own objects receive their pending events (settle): the window's views, whose
colours would follow the figure's theme meanwhile, are left for the event loop to serve afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .export import ExportError
from .figure_options import FigureOptions
from .figure_state import ViewState
from .figure_text import FigureFacts, caption, colour_bar_label
from .headless import destroy_now
from .image_export import check_image_size, paint_widget
from .views import theme

# What a view is laid out at for a figure (width, height), before it grows with the text's length.
NATURAL_SIZES = {"heatmap": (820, 720), "arcs": (640, 720), "bars": (760, 420), "steps": (1100, 640),
                 "model": (900, 720)}
GROW_PX_PER_WORD = 28          # arcs, bars: room for each word past the tenth
MAX_GROWN_PX = 2400
HEATMAP_CELL_PX = 13           # the heatmap grows so that cells stay at least this wide (labels beside them)
HEATMAP_FRAME_PX = 260         # its labels, colour bar and title
MAX_HEATMAP_PX = 4096          # past this the whole matrix is shown with smaller cells
MIN_HUGGED_PX = 560            # a rectangle's heatmap fitted to its cells keeps this width (its title)
MARGIN_PX = 10
TITLE_POINTS, CAPTION_POINTS, HEADER_POINTS = 12.0, 8.5, 9.0
SETTLE_ROUNDS = 6


@dataclass
class Piece:
    """A widget drawn at a place of the figure (a view's export widget, a panel of small multiples)."""

    widget: QtWidgets.QWidget
    at: QtCore.QPointF


@dataclass
class Figure:
    """Everything painted, in layout pixels; see paint_figure."""

    width: float
    height: float
    pieces: list[Piece]
    title: str
    caption: str
    texts: list[tuple[QtCore.QRectF, str, QtCore.Qt.AlignmentFlag, QtGui.QFont]] = field(default_factory=list)
    background: QtGui.QColor = field(default_factory=QtGui.QColor)
    ink: QtGui.QColor = field(default_factory=QtGui.QColor)

    @property
    def size(self) -> QtCore.QSizeF:
        return QtCore.QSizeF(self.width, self.height)


@dataclass(frozen=True)
class WindowPart:
    """The part of the window's heatmap to draw instead of the whole matrix: its size and range."""

    size: QtCore.QSize
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    rows: range
    columns: range


def make_view(name: str, controller):
    """A new view of `controller`, the class the window shows, never shown on a screen."""
    from .views.arc_diagram import QtArcDiagram
    from .views.heatmap import QtHeatmap
    from .views.model_view import QtModelView
    from .views.row_bars import QtRowBars
    from .views.step_timeline import QtStepTimeline

    classes = {"heatmap": QtHeatmap, "arcs": QtArcDiagram, "bars": QtRowBars, "steps": QtStepTimeline,
               "model": QtModelView}
    view = classes[name](controller)
    view.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
    view.setPalette(theme.palette())  # plain widgets (the step tables' headers) take the figure's colours too
    return view


def export_widget(view) -> QtWidgets.QWidget:
    """What of `view` a figure shows: its export widget, or its plot (the row bars)."""
    return view.export_widget() if hasattr(view, "export_widget") else view.graphics


def natural_size(name: str, n: int) -> QtCore.QSize:
    width, height = NATURAL_SIZES[name]
    if name == "heatmap":
        side = min(MAX_HEATMAP_PX, max(width, HEATMAP_FRAME_PX + HEATMAP_CELL_PX * n))
        return QtCore.QSize(side, round(side * height / width))
    grow = max(0, n - 10) * GROW_PX_PER_WORD
    return QtCore.QSize(min(width + grow, MAX_GROWN_PX), min(height + grow, MAX_GROWN_PX))


def layout_size(name: str, n: int, options: FigureOptions) -> QtCore.QSize:
    """The view's size in the figure: natural, or a print width with the natural proportions."""
    natural = natural_size(name, n)
    width = options.size.layout_width(natural.width())
    if width == natural.width():
        return natural
    return QtCore.QSize(width, max(120, round(natural.height() * width / natural.width())))


def settle(widget: QtWidgets.QWidget) -> None:
    """Deliver the events waiting for `widget`, its children and its scenes' items (layouts, resizes,
    deferred calls) until none is left, and nobody else's: see the module's text."""
    for _ in range(SETTLE_ROUNDS):
        targets = [widget, *widget.findChildren(QtCore.QObject)]
        for graphics in [w for w in targets if isinstance(w, QtWidgets.QGraphicsView)]:
            targets.extend(item for item in graphics.scene().items() if isinstance(item, QtWidgets.QGraphicsObject))
            targets.append(graphics.scene())
        for target in targets:
            QtCore.QCoreApplication.sendPostedEvents(target, 0)


@contextlib.contextmanager
def antialiased() -> Iterator[None]:
    """Curves and bars antialiased, as in the window, whatever the process set."""
    before = pg.getConfigOption("antialias")
    pg.setConfigOptions(antialias=True)
    try:
        yield
    finally:
        pg.setConfigOptions(antialias=before)


@contextlib.contextmanager
def built_figure(controller, state: ViewState, options: FigureOptions, facts: FigureFacts,
                 window_part: WindowPart | None = None) -> Iterator[Figure]:
    """The figure of `state` drawn from `controller` (which already shows it), destroyed when the block
    ends. Painting must happen inside the block: the figure's theme holds only there."""
    with theme.figure_theme(options.theme), antialiased():
        made = []
        try:
            if state.grid is not None:
                from .figure_grid import grid_pieces

                pieces, size = grid_pieces(controller, state, options, made)
                facts = replace(facts, span=state.span or "fixed")
            else:
                view = _fresh_view(controller, state, options, window_part)
                made.append(view)
                widget = export_widget(view)
                pieces, size = [Piece(widget, QtCore.QPointF(0, 0))], QtCore.QSizeF(widget.size())
                if state.view == "heatmap":
                    facts = replace(facts, span=view.colour_scale())
                elif state.view == "arcs":
                    facts = replace(facts, arcs_heads=len(view.heads_shown()))
            figure = _compose(pieces, size, state, options, facts, view if state.grid is None else None)
            yield figure
        finally:
            destroy_now(*made)


def census_for_figure(controller, choice):
    """The census result a model-view figure is coloured by: the window's own when it is that census,
    else from the shared cache or measured (EngineError if it cannot be)."""
    from .figure_census import census_of

    given = getattr(controller, "census_result", None)
    if given is not None and choice.matches(given.settings, getattr(controller, "census_texts", None)):
        return given
    return census_of(controller.real_model, choice)


def _fresh_view(controller, state: ViewState, options: FigureOptions, window_part: WindowPart | None):
    trace = controller.trace
    if trace is None:
        raise ExportError(controller.error or "there is nothing to draw yet: type a text the model can read")
    if state.view == "bars" and controller.focus is None:
        raise ExportError("the bars show one word's weights: pin a word first (click it), "
                          "or give --focus WORD on the command line")
    view = make_view(state.view, controller)
    try:
        if state.view == "heatmap":
            if state.span is not None:
                view.set_colour_scale(state.span)
            view.colorbar.set_label(colour_bar_label(state, view.colour_scale()))
        elif state.view == "arcs":
            view.all_heads.setChecked(state.all_heads)
            if state.strongest is not None:
                view.strongest.setValue(state.strongest)
        elif state.view == "model" and state.census is not None:
            view.show_census(state.census, census_for_figure(controller, state.census))
        # a rectangle (cross-attention) is laid out for its longer side, then fitted to its cells
        n = max(trace.n, trace.n_keys)
        view.resize(window_part.size if window_part is not None else layout_size(state.view, n, options))
        view.show()
        if state.view == "bars":  # the bars build their plot when a word is focused: focus it again, as a hover
            index, role = controller.focus, controller.focus_role
            controller.set_pinned(None)
            controller.set_pinned(index, role)
        settle(view)
        if state.view == "heatmap":
            if window_part is not None:
                view.view.setRange(xRange=window_part.x_range, yRange=window_part.y_range, padding=0)
            elif view.is_zoomable():
                view.fit()  # a figure holds the whole matrix, its labels thinned to fit
            settle(view)
            if window_part is None and trace.n != trace.n_keys:
                _hug_rectangle(view)
    except BaseException:
        destroy_now(view)
        raise
    return view


def _hug_rectangle(view) -> None:
    """A rectangle's heatmap cut to its square cells: laid out in a figure's frame, 3 target tokens
    under 11 source ones left most of the picture empty below them. Not narrower than MIN_HUGGED_PX,
    which holds the title."""
    for _ in range(2):  # the column words may stand up or lie flat in the new height: fit once more then
        fitted = view.fitted_size()
        if fitted is None:
            return
        size = QtCore.QSize(min(view.width(), max(MIN_HUGGED_PX, fitted.width())), min(view.height(), fitted.height()))
        if size == view.size():
            return
        view.resize(size)
        settle(view)
        view.fit()
        settle(view)


def _compose(pieces: list[Piece], size: QtCore.QSizeF, state: ViewState, options: FigureOptions,
             facts: FigureFacts, view) -> Figure:
    headers = (lambda texts, width, y: _arc_headers(view, texts, width, y)) \
        if state.view == "arcs" and view is not None else None
    return compose(pieces, size, options, caption(state, facts) if options.caption else "", headers)


def compose(pieces: list[Piece], size: QtCore.QSizeF, options: FigureOptions, text: str, headers=None) -> Figure:
    """Title above, `headers(texts, width, y)` (the arcs' side names) under it, the pieces, the caption
    `text` below."""
    width = size.width()
    texts = []
    y = 0.0
    if options.title:
        font = _font(TITLE_POINTS, bold=True)
        rect = _text_rect(font, options.title, width, y + MARGIN_PX)
        texts.append((rect, options.title, _wrapped(QtCore.Qt.AlignmentFlag.AlignHCenter), font))
        y = rect.bottom() + MARGIN_PX / 2
    if headers is not None:
        y = headers(texts, width, y)
    for piece in pieces:
        piece.at = QtCore.QPointF(piece.at.x(), piece.at.y() + y)
    y += size.height()
    if text:
        font = _font(CAPTION_POINTS)
        rect = _text_rect(font, text, width, y + MARGIN_PX / 2)
        texts.append((rect, text, _wrapped(QtCore.Qt.AlignmentFlag.AlignLeft), font))
        y = rect.bottom() + MARGIN_PX
    return Figure(width, y, pieces, options.title, text, texts, theme.background(), theme.foreground())


def _arc_headers(view, texts: list, width: float, y: float) -> float:
    """"word looking" over the left words, "word looked at" over the right ones: the arcs alone never
    said which side is which."""
    font = _font(HEADER_POINTS, bold=True)
    height = QtGui.QFontMetricsF(font).height() + 4
    graphics = view.graphics
    left = graphics.mapFromScene(view.view.mapViewToScene(QtCore.QPointF(0, 0))).x()
    right = graphics.mapFromScene(view.view.mapViewToScene(QtCore.QPointF(1, 0))).x()
    top = y + MARGIN_PX / 2
    align = QtCore.Qt.AlignmentFlag
    metrics = QtGui.QFontMetricsF(font)
    looking, looked_at = "word looking →", "← word looked at"
    # over the words where they fit, else from the figure's edge (a narrow print width)
    end = max(left, metrics.horizontalAdvance(looking) + MARGIN_PX)
    start = min(right, width - metrics.horizontalAdvance(looked_at) - MARGIN_PX)
    texts.append((QtCore.QRectF(0, top, end, height), looking, align.AlignRight | align.AlignVCenter, font))
    texts.append((QtCore.QRectF(start, top, width - start, height), looked_at, align.AlignLeft | align.AlignVCenter,
                  font))
    return top + height


def _font(points: float, bold: bool = False) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


def _wrapped(alignment: QtCore.Qt.AlignmentFlag) -> QtCore.Qt.AlignmentFlag:
    return alignment | QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.TextFlag.TextWordWrap


def _text_rect(font: QtGui.QFont, text: str, width: float, top: float) -> QtCore.QRectF:
    inner = max(40.0, width - 2 * MARGIN_PX)
    bounds = QtGui.QFontMetricsF(font).boundingRect(QtCore.QRectF(0, 0, inner, 1e6),
                                                    int(_wrapped(QtCore.Qt.AlignmentFlag.AlignLeft)), text)
    return QtCore.QRectF(MARGIN_PX, top, inner, bounds.height())


def paint_figure(figure: Figure, painter: QtGui.QPainter, *, vector: bool) -> None:
    """The whole figure at the painter's origin, in layout pixels (the painter's transform scales it)."""
    if figure.background.alpha():
        painter.fillRect(QtCore.QRectF(0, 0, figure.width, figure.height), figure.background)
    painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
    for rect, text, flags, font in figure.texts:
        painter.setFont(font)
        painter.setPen(figure.ink)
        painter.drawText(rect, int(flags), text)
    for piece in figure.pieces:
        painter.save()
        painter.translate(piece.at)
        paint_widget(piece.widget, painter, vector=vector)
        painter.restore()


def figure_image(figure: Figure, ratio: float) -> QtGui.QImage:
    """The figure as an image of `ratio` pixels per layout pixel (transparent where the theme is)."""
    width, height = round(figure.width * ratio), round(figure.height * ratio)
    check_image_size(width, height)
    image = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QtCore.Qt.GlobalColor.transparent)
    image.setDevicePixelRatio(ratio)
    painter = QtGui.QPainter(image)
    try:
        paint_figure(figure, painter, vector=False)
    finally:
        painter.end()
    return image

