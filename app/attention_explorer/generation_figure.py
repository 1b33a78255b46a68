"""A generation as a picture: PNG, SVG, or an animated GIF that writes it row by row.

    write_generation_figure(path, model, generation, layer, head, scale=1, *, span=None) -> None

`path` ends in .png, .svg or .gif; `model` is the PretrainedModel that wrote `generation`
(engine.pretrained.generate); `layer` and `head` are 0-based, as in the engine (the command line's
--layer 1 --head 1 is layer=0, head=0); `scale` (1, 2 or 4) multiplies the pixels of a PNG or a GIF
(an SVG is drawn as vectors and ignores it); `span` is what the weights' colours span, as the heatmap's
("fixed": 0–1, "data", "row": each row over its largest; None: fixed, or row past LONG_SENTENCE_WORDS
tokens read, as the heatmap chooses). The target is checked before anything is drawn; any problem is
an ExportError whose message is for the user. It builds widgets: call it on the GUI thread. Qt runs
offscreen when no QApplication exists yet (one is made then, as the command line's other pictures
do); inside the window, the window's is used.

The figure is a matrix: a row per step, labelled by the token written there and the probability the
model gave it; a column per token read — the prompt's, then the ones written (their labels in
WRITTEN_COLOUR, past a line of that colour at the prompt's end). Row i is the attention, in the layer
and head chosen, of the query whose scores chose step i's token: it covers the prompt and the i − 1
tokens written before, and the cells after them are hatched as the heatmap hatches a causal mask (those
tokens were not written yet). It is drawn by the heatmap's own plot (views.matrix_plot: labels thinned
to fit, values in the cells while they fit, a colour bar) and composed with a caption as every figure
is (figure.compose): model, prompt, layer and head, sampling, heads switched off, why it stopped.

The PNG carries a density, a description (the caption) and, under the keyword GENERATION_KEYWORD,
the `attention-explorer generate` command that writes it again (not a view state: dropped on the
window, it is not taken for a view); the SVG carries the same command as its <metadata> (id
GENERATION_KEYWORD), the GIF as its comment. The SVG keeps its words as <text> and is fixed for
viewers other than Qt as every figure's SVG is (svg_fixes). The GIF's frame k shows the rows of steps
1 to k and the labels of the tokens written so far; its last frame stays longer. A long generation
adds several rows a frame, so that the frames (which the GIF encoder holds all at once) stay within
MAX_GIF_BYTES and MAX_GIF_FRAMES. A PNG or GIF past image_export's largest picture is refused.

For the window: built_generation_figure(...) gives the composed figure (e.g. for the clipboard:
figure.figure_image(drawn.figure, ratio)); generate_command(...) the command line of a file.
"""

from __future__ import annotations

import contextlib
import math
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .engine.pretrained import PretrainedModel
from .engine.pretrained.catalog import KNOWN_MODELS
from .engine.pretrained.generate import CANCELLED, LENGTH, STOP_TOKEN, Generation
from .engine.pretrained.generation_trace import step_rows
from .engine.tokenizer import token_labels
from .export import IMAGE_SCALES, ExportError, binary_output, check_target, write_bytes

FORMATS = (".png", ".svg", ".gif")
GENERATION_KEYWORD = "attention-explorer-generation"  # the PNG text chunk and the SVG <metadata> holding the command
WRITTEN_COLOUR = "#D55E00"        # the written tokens' labels and the line at the prompt's end (Okabe–Ito vermillion)
CELL_PX = 24                      # cells are drawn this wide while the figure stays under MAX_SIDE_PX ...
MIN_CELL_PX = 13                  # ... and no narrower (past that the whole matrix is drawn smaller, labels thinned)
MAX_SIDE_PX = 4096                # the plot's largest side, in layout pixels
FRAME_PX = (300, 230)             # width and height taken by the labels, axis titles, title and colour bar
MIN_SIZE_PX = (560, 300)
HUG_MARGIN_PX = 8                 # kept under the plot when the height its cells did not need is taken off
CAPTION_ALLOWANCE_PX = 160        # the most a caption adds under the plot (for the size checked in advance)
GIF_STEP_MS, GIF_LAST_MS = 250, 3000
GIF_TOTAL_MS = 30_000             # a long generation's frames go faster, down to GIF_MIN_STEP_MS each
GIF_MIN_STEP_MS = 60
MAX_GIF_FRAMES = 400
MAX_GIF_BYTES = 256 * 1024 * 1024  # palette frames held by the encoder at once (a byte a pixel)
STOPPED = {STOP_TOKEN: "stopped at the model's stop token", LENGTH: "stopped at the number of tokens asked for",
           CANCELLED: "stopped by the user"}


@dataclass(frozen=True)
class GenerationTable:
    """What the figure draws, in numbers: `weights` (steps × tokens read, float64) with `mask` True on
    the cells after each step's row (tokens not yet written); the label of each step's token and its
    probability; the columns' labels (the prompt's tokens, then those written, repeats told apart)."""

    weights: np.ndarray
    mask: np.ndarray
    written_labels: list[str]
    probabilities: list[float]
    column_labels: list[str]
    prompt_length: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.weights.shape


def generation_table(model: PretrainedModel, generation: Generation, layer: int, head: int) -> GenerationTable:
    """The steps' attention rows of one layer and head (0-based), each padded with masked cells."""
    if not generation.steps:
        raise ExportError("the generation has no steps yet: there is nothing to draw")
    if not (0 <= layer < model.n_layers and 0 <= head < model.n_heads):
        raise ExportError(f"{model.name} has no head {head + 1} in layer {layer + 1} "
                          f"({model.n_layers} layers of {model.n_heads} heads)")
    prompt = len(generation.prompt_ids)
    steps = len(generation.steps)
    read = prompt + steps - 1  # the last token written is never read
    weights = np.zeros((steps, read), dtype=np.float64)
    mask = np.ones((steps, read), dtype=bool)
    for index, rows in enumerate(step_rows(model, generation, (layer,), (head,))):
        row = rows[0, 0]
        weights[index, :len(row)] = row
        mask[index, :len(row)] = False
    ids = [int(i) for i in generation.ids]
    labels = token_labels([model.tokenizer.token_label(i) for i in ids])  # repeats told apart, as on the axes
    return GenerationTable(weights, mask, labels[prompt:], [step.choice.probability for step in generation.steps],
                           labels[:read], prompt)


def row_label(token: str, probability: float, fit=None) -> str:
    """A row's label: its token and the probability the model gave it ("Paris  77 %"); `fit(token,
    percent)`, when given, shortens the token so that the whole label stays within what the axis draws
    whole (the probability is never the part cut off)."""
    percent = percent_text(probability)
    if fit is not None:
        token = fit(token, percent)
    return f"{token}  {percent}"


def percent_text(probability: float) -> str:
    percent = probability * 100
    if percent >= 9.95:
        return f"{percent:.0f} %"
    return f"{percent:.1f} %" if percent >= 0.05 else "<0.1 %"


# --- sizes -------------------------------------------------------------------------------------------

def cell_px(rows: int, columns: int) -> float:
    """The side of a cell: CELL_PX, smaller when the plot would pass MAX_SIDE_PX, not under MIN_CELL_PX
    (past that the plot is MAX_SIDE_PX and its cells as small as it makes them)."""
    room = min((MAX_SIDE_PX - FRAME_PX[0]) / max(columns, 1), (MAX_SIDE_PX - FRAME_PX[1]) / max(rows, 1))
    return max(MIN_CELL_PX, min(CELL_PX, room))


def plot_size(rows: int, columns: int) -> tuple[int, int]:
    """The plot's width and height in layout pixels, for `rows` steps and `columns` tokens read."""
    cell = cell_px(rows, columns)
    width = min(MAX_SIDE_PX, max(MIN_SIZE_PX[0], round(FRAME_PX[0] + cell * columns)))
    height = min(MAX_SIDE_PX, max(MIN_SIZE_PX[1], round(FRAME_PX[1] + cell * rows)))
    return width, height


def too_large(width: int, height: int) -> bool:
    """Whether a picture of width × height pixels is past what image_export draws (check_image_size)."""
    from .image_export import MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE

    return width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE or width * height > MAX_IMAGE_PIXELS


def check_size(prompt_tokens: int, tokens: int, scale: int) -> None:
    """Refuse, before a generation is made, a PNG or GIF of up to `tokens` steps after `prompt_tokens`
    that would be too large at `scale` (with room for the caption)."""
    width, height = plot_size(tokens, prompt_tokens + tokens - 1)
    width, height = width * scale, (height + CAPTION_ALLOWANCE_PX) * scale
    if too_large(width, height):
        raise ExportError(f"{tokens:,} tokens after a prompt of {prompt_tokens:,} could make a picture of "
                          f"{width:,} × {height:,} pixels at --image-scale {scale}, too large for a PNG or GIF: "
                          f"give a smaller --image-scale or fewer --tokens, or write .svg")


# --- the words around it -----------------------------------------------------------------------------

def model_source(model: PretrainedModel) -> str:
    """What --model takes to open `model` again: its catalog name, or its path."""
    return model.name if model.name in {m.name for m in KNOWN_MODELS} else str(model.path)


def generate_command(model: PretrainedModel, generation: Generation, layer: int, head: int, path: str | Path,
                     scale: int = 1, span: str | None = None) -> str:
    """The `attention-explorer generate` command that writes this generation's figure again (0-based layer
    and head): the same settings, so the same tokens (a draw is seeded); one stopped by the user writes
    as many tokens as it had."""
    settings, sampling = generation.settings, generation.settings.sampling
    tokens = len(generation.steps) if generation.stopped == CANCELLED else settings.tokens
    words = ["attention-explorer", "generate", "--model", model_source(model), "--prompt", generation.prompt,
             "--tokens", str(tokens)]
    if not sampling.greedy:
        words += ["--temperature", f"{sampling.temperature:g}"]
        words += ["--top-k", str(sampling.top_k)] if sampling.top_k else []
        words += ["--top-p", f"{sampling.top_p:g}"] if sampling.top_p < 1 else []
        words += ["--seed", str(sampling.seed)]
    words += ["--chat"] if settings.chat else []
    if settings.ablate:
        words += ["--ablate", ",".join(f"{lay + 1}:{h + 1}" for lay, h in sorted(settings.ablate))]
    words += ["--layer", str(layer + 1), "--head", str(head + 1)]
    words += ["--span", span] if span is not None else []
    words += ["--image-scale", str(scale)] if scale != 1 and str(path).lower().endswith((".png", ".gif")) else []
    return shlex.join([*words, "-o", str(path)])


def generation_caption(model: PretrainedModel, generation: Generation, table: GenerationTable, span: str) -> str:
    """Model · prompt · the sampling · heads switched off · how it ended · how to read the matrix."""
    settings = generation.settings
    prompt = " ".join(generation.prompt.split())
    if len(prompt) > 160:
        prompt = prompt[:159].rstrip() + "…"
    chat = " in its chat template" if settings.chat else ""
    cut = f" (cut to its last {table.prompt_length} tokens)" if generation.cut is not None else ""
    steps = len(generation.steps)
    ablated = ("switched off: " + ", ".join(f"L{lay + 1} H{h + 1}" for lay, h in sorted(settings.ablate))
               if settings.ablate else "no head switched off")
    stopped = STOPPED.get(generation.stopped, generation.stopped or "not finished")
    colours = {"fixed": "colours span 0–1", "data": "colours span the weights shown",
               "row": "colours span each row from 0 to its largest"}[span]
    return (f"{model.name} · prompt{chat}: “{prompt}” ({table.prompt_length} tokens{cut}) · "
            f"{settings.sampling.describe()} · {ablated} · {steps} token{'s' if steps != 1 else ''} written, "
            f"{stopped}.\nRow: a step, labelled by the token it wrote and the probability the model gave it; "
            f"its cells: the attention of the query that chose that token over every token read — "
            f"prompt | written (in colour, right of the line); hatched: not yet written. Weights; {colours}.")


# --- drawing -----------------------------------------------------------------------------------------

@dataclass
class GenerationFigure:
    """A built figure (figure.Figure), the matrix plot in it and the numbers it draws."""

    figure: object
    plot: object
    table: GenerationTable

    def places(self) -> FigurePlaces:
        return FigurePlaces(self)


@contextlib.contextmanager
def built_generation_figure(model: PretrainedModel, generation: Generation, layer: int, head: int,
                            span: str | None = None) -> Iterator[GenerationFigure]:
    """The figure, built offscreen in the light figure theme and destroyed when the block ends: paint it
    inside the block (figure.paint_figure, figure.figure_image)."""
    from PySide6 import QtCore, QtGui, QtWidgets

    from .figure import Piece, antialiased, compose, settle
    from .figure_options import FigureOptions
    from .headless import destroy_now, ensure_application
    from .views import theme
    from .views.heatmap import LONG_SENTENCE_WORDS
    from .views.matrix_plot import MatrixPlot

    table = generation_table(model, generation, layer, head)
    rows, columns = table.shape
    span = span or ("row" if columns > LONG_SENTENCE_WORDS else "fixed")
    ensure_application()
    with theme.figure_theme("light"), antialiased():
        plot = MatrixPlot(min_size=None, title_size="10pt", square_cells=True, cell_tips=False)
        try:
            plot.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
            plot.setPalette(theme.palette())
            plot.top_axis.colour_labels_from(table.prompt_length, QtGui.QColor(WRITTEN_COLOUR))
            n_heads = model.n_heads
            title = f"where the model looked to write each token — layer {layer + 1}, head {head + 1} of {n_heads}"
            written = f"<span style='color:{WRITTEN_COLOUR}'>written</span>"
            fit = _fitting()
            row_labels = [row_label(token, probability, fit)
                          for token, probability in zip(table.written_labels, table.probabilities, strict=True)]
            plot.show_matrix(table.weights, row_labels, table.column_labels, title=title, mask=table.mask,
                             levels=None if span == "data" else (0.0, 1.0), by_row=span == "row",
                             axis_titles=("token written, its probability", f"token read: prompt │ {written}"))
            plot.colorbar.set_label("weight ÷ the row's largest" if span == "row" else "attention weight")
            if span == "row":
                plot.colorbar.axis.setTicks([[(0.0, "0"), (1.0 - 1e-9, "row max")]])
            divider = QtWidgets.QGraphicsLineItem(table.prompt_length - 0.5, -0.5, table.prompt_length - 0.5,
                                                  rows - 0.5)
            pen = QtGui.QPen(QtGui.QColor(WRITTEN_COLOUR), 2.0)
            pen.setCosmetic(True)
            divider.setPen(pen)
            divider.setZValue(8)
            plot.plot.addItem(divider)
            plot.resize(*plot_size(rows, columns))
            plot.show()
            settle(plot)
            _hug(plot)
            if plot.is_zoomable():
                plot.fit()  # a figure holds the whole matrix, its labels thinned to fit
                settle(plot)
            widget = plot.export_widget()
            figure = compose([Piece(widget, QtCore.QPointF(0, 0))], QtCore.QSizeF(widget.size()), FigureOptions(),
                             generation_caption(model, generation, table, span))
            yield GenerationFigure(figure, plot, table)
        finally:
            destroy_now(plot)


def _fitting():
    """fit(token, percent) for row_label: the token cut with … so that "token  percent" is no longer than
    the token axis draws a label whole (views.token_axis.MAX_LABEL_PX)."""
    from PySide6 import QtCore, QtGui

    from .views.token_axis import MAX_LABEL_PX

    metrics = QtGui.QFontMetricsF(QtGui.QFont())  # the axis' font

    def fit(token: str, percent: str) -> str:
        room = MAX_LABEL_PX - metrics.horizontalAdvance(f"  {percent}") - 1
        return metrics.elidedText(token, QtCore.Qt.TextElideMode.ElideRight, max(room, 8.0))

    return fit


def _hug(plot) -> None:
    """Take off the height the square cells left empty under the plot (a few rows of many columns)."""
    from .figure import settle

    graphics = plot.graphics
    used = graphics.mapFromScene(plot.plot.sceneBoundingRect().bottomLeft()).y()
    spare = graphics.height() - used - HUG_MARGIN_PX
    if spare > 1 and not plot.is_zoomable():
        plot.resize(plot.width(), plot.height() - int(spare))
        settle(plot)


def _ensure_scale(scale: int) -> None:
    if scale not in IMAGE_SCALES:
        raise ExportError(f"image scale must be one of {', '.join(map(str, IMAGE_SCALES))}, not {scale}")


def write_generation_figure(path: str | Path, model: PretrainedModel, generation: Generation, layer: int, head: int,
                            scale: int = 1, *, span: str | None = None) -> None:
    """`generation`'s attention in `layer` and `head` (0-based) drawn into `path` (.png, .svg or .gif): see
    the module's text."""
    from .figure_metadata import png_with_metadata
    from .figure_options import SCREEN_DPI
    from .figure_state import SPANS

    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ExportError(f"a generation is drawn as {', '.join(FORMATS)}, not {suffix or 'a file without ending'}")
    _ensure_scale(scale)
    if span is not None and span not in SPANS:
        raise ExportError(f"a colour span is one of {', '.join(SPANS)}, not {span!r}")
    check_target(path)
    command = generate_command(model, generation, layer, head, path, scale, span)
    with built_generation_figure(model, generation, layer, head, span) as drawn:
        width, height = round(drawn.figure.width * scale), round(drawn.figure.height * scale)
        if suffix != ".svg" and too_large(width, height):
            raise ExportError(f"the picture would be {width:,} × {height:,} pixels at {scale}×, too large for a PNG "
                              f"or GIF: write it at a smaller scale, or as .svg")
        if suffix == ".svg":
            data = _svg(drawn.figure, command)
        elif suffix == ".png":
            from .figure import figure_image
            from .image_export import image_to_png_bytes

            png = image_to_png_bytes(figure_image(drawn.figure, scale))
            data = png_with_metadata(png, state=command, description=drawn.figure.caption, dpi=SCREEN_DPI * scale,
                                     keyword=GENERATION_KEYWORD)
        else:
            _write_gif(path, drawn, scale, command)
            return
    write_bytes(path, data)


def _svg(figure, command: str) -> bytes:
    from .figure_files import FIGURE_TITLE, raw_svg, svg_resolution
    from .image_export import fixed_svg

    return fixed_svg(raw_svg(figure), svg_resolution(figure), title=FIGURE_TITLE, description=figure.caption,
                     metadata=command, metadata_id=GENERATION_KEYWORD, width=f"{figure.width:.0f}",
                     height=f"{figure.height:.0f}")


# --- the GIF -------------------------------------------------------------------------------------------

def gif_frames(rows: int, pixels: int) -> list[int]:
    """How many rows each frame shows (the last all of them): one more a frame, or several when the
    frames would pass MAX_GIF_FRAMES or MAX_GIF_BYTES at `pixels` a frame."""
    count = max(1, min(rows, MAX_GIF_FRAMES, MAX_GIF_BYTES // max(pixels, 1)))
    return sorted({math.ceil(rows * k / count) for k in range(1, count + 1)})


def gif_durations(frames: int) -> list[int]:
    """Milliseconds each frame shows: GIF_STEP_MS (less for a long generation), the last GIF_LAST_MS."""
    step = max(GIF_MIN_STEP_MS, min(GIF_STEP_MS, GIF_TOTAL_MS // max(frames, 1)))
    step = step // 10 * 10  # a GIF counts in hundredths of a second
    return [step] * (frames - 1) + [GIF_LAST_MS]


def _write_gif(path: str | Path, drawn: GenerationFigure, scale: int, command: str) -> None:
    """The whole figure drawn once and reduced to one palette; frame k is it with what was not yet written
    covered in the background colour: the rows after k's, and the labels of the tokens after k's
    (so every frame has the same colours and layout, and none tells what comes next). `command` goes
    into the GIF's comment."""
    from .figure import figure_image
    from .image_export import _palette_frame
    from .views import theme

    whole = _palette_frame(figure_image(drawn.figure, scale))
    background = _nearest_index(whole, theme.background().getRgb()[:3])
    places = drawn.places()
    rows = drawn.table.shape[0]
    shown = gif_frames(rows, whole.width * whole.height)
    durations = gif_durations(len(shown))

    def covered(count: int):
        if count >= rows:
            return whole
        frame = whole.copy()
        for left, top, right, bottom in places.unwritten(count):
            frame.paste(background, (math.floor(left * scale), math.floor(top * scale),
                                     math.ceil(right * scale), math.ceil(bottom * scale)))
        return frame

    with binary_output(path) as handle:
        covered(shown[0]).save(handle, format="GIF", save_all=True, append_images=(covered(k) for k in shown[1:]),
                               duration=durations, loop=0, comment=command.encode("utf-8"))


class FigurePlaces:
    """Where things are in the figure, in its layout pixels: cells, and what a GIF frame covers."""

    def __init__(self, drawn: GenerationFigure):
        plot = drawn.plot
        self._graphics, self._view = plot.graphics, plot.view
        self._at = drawn.figure.pieces[0].at
        self._table = drawn.table
        left_axis, top_axis = plot.left_axis.sceneBoundingRect(), plot.top_axis.sceneBoundingRect()
        # the axes' titles ("token written, its probability", "token read: prompt | written") stay
        left_title, top_title = self._title_rect(plot.left_axis), self._title_rect(plot.top_axis)
        self._left = self._point(max(left_axis.left(), left_title.right() if left_title else 0), 0).x()
        self._right = self._point(self._view.sceneBoundingRect().right(), 0).x() + 1
        self._labels_top = self._point(0, max(top_axis.top(), top_title.bottom() if top_title else 0)).y()
        self._labels_bottom = self._point(0, top_axis.bottom()).y()

    @staticmethod
    def _title_rect(axis):
        title = axis.label
        return title.mapRectToScene(title.boundingRect()) if title.isVisible() else None

    def _point(self, x: float, y: float):
        """A point of the plot's scene in the figure (floats: QGraphicsView.mapFromScene rounds)."""
        from PySide6 import QtCore

        return self._graphics.viewportTransform().map(QtCore.QPointF(x, y)) + self._at

    def cell(self, row: float, column: float):
        """The centre of cell (row, column) as a QPointF (row ± 0.5, column ± 0.5: its edges)."""
        from PySide6 import QtCore

        scene = self._view.mapViewToScene(QtCore.QPointF(column, row))
        return self._point(scene.x(), scene.y())

    def unwritten(self, count: int) -> list[tuple[float, float, float, float]]:
        """The rectangles to cover when `count` steps are shown: the later rows (with their labels),
        and the labels of the columns of tokens not written yet."""
        rows, _columns = self._table.shape
        top = self.cell(count - 0.5, 0).y()
        bottom = self.cell(rows - 0.5, 0).y() + 1
        first_unwritten = self._table.prompt_length + count  # the column of step count + 1's token
        column_left = self.cell(0, first_unwritten - 0.5).x()
        return [(self._left, top, self._right, bottom),
                (column_left, self._labels_top, self._right, self._labels_bottom)]


def _nearest_index(picture, colour: tuple[int, int, int]) -> int:
    palette = picture.getpalette()
    colours = [palette[i:i + 3] for i in range(0, len(palette), 3)]
    return min(range(len(colours)), key=lambda i: sum((a - b) ** 2 for a, b in zip(colours[i], colour, strict=True)))
