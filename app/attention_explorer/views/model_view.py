"""The model view: every layer (rows) and head (columns) of a real model as a small heatmap.

Each cell is one QImage made from its head's thumbnail (at most 128 pixels a side, pooled by the
forward as it went: engine/pretrained/thumbnails.py) with the current colour map and drawn scaled,
not a plot: 30 layers × 9 heads of a decoder are 270 pictures, which pyqtgraph plots would take
seconds to build. Every cell is coloured from 0 to its own largest weight (a sink would leave the rest
black on 0–1). The focused word is outlined in every cell — its row when it looks, its column when it
is looked at. Click a cell to open that layer and head in the main views; right-click (or Ctrl+click)
switches the head off and on. Cells follow the reading chosen in the real-model bar (words, hidden
specials; see pretrained_cells). A change remakes only the pictures whose thumbnails changed: a
head switched off in layer 20 remakes layers 20 to 30, a hover or the rollout none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import LOOKED_AT, LOOKING, Controller
from ..engine.pretrained.thumbnails import largest_of_each, thumb_step
from ..figure_census import CensusChoice
from ..pretrained_cells import Cells, cell_weight, encoder_decoder_cells, model_cells
from . import theme
from .array_corners import is_corner_of
from .elided_label import ElidedLabel, FoldingLabel
from .layout_seals import LayoutSeal
from .model_census import CensusCells

HEADER_PX = 22          # room for the head numbers above and the layer numbers on the left
TITLE_PX = 20           # the line above saying which model, text and reading (exports carry it)
GAP_PX = 4
CAPTION_FOLDS_BELOW_PX = 320  # shorter, the caption is one line: its grid needs the height more
MIN_CELL_PX, MAX_CELL_PX = 20, 120
LARGE_CELL_PX = 48  # larger cells draw their pictures from a 32-bit copy (drawable)


def weights_images(thumbnails: Sequence[np.ndarray], colors: tuple[int, ...],
                   tops: np.ndarray | None = None) -> list[QtGui.QImage]:
    """Each cell's picture, from its (m, m) thumbnail (or (m, k): cross-attention), all of one shape, given
    as a (cells, m, m) array or as a list of views of a larger one (CellPictures: gathering the cells
    drawn into one array copied 5 MB at 128 tokens, 1.5 ms of a reading switched on): each weight a
    pixel, coloured from 0 to the cell's largest weight (or to its `tops`, the largest of the part shown,
    see CellPictures) with a 256-colour table (one byte a pixel), weights above it in the last colour. The
    table is set once, on a blank that every picture shares it with, and the bytes written into each
    picture's own pixels: setting it on every picture cost more than the rest (270 cells of SmolLM2:
    16 ms, now 6). (32-bit pictures draw three times faster but take four times the memory, up to 13 MiB
    more for SmolLM2's 270 cells of 128 × 128, where a 2,048-token text's window is at its budget's edge.)"""
    if len(thumbnails) == 0:
        return []
    height, size = thumbnails[0].shape
    if tops is None:
        tops = np.array([largest_of_each(thumbnail) for thumbnail in thumbnails])
    scales = colour_scales(tops, len(colors))
    blank = QtGui.QImage(size, height, QtGui.QImage.Format.Format_Indexed8)
    blank.setColorTable(colors)
    blank.fill(0)
    images = []
    for thumbnail, scale in zip(thumbnails, scales, strict=True):
        image = QtGui.QImage(blank)  # shares the blank until its pixels are written: bits() copies them
        if size:
            write_rows(image, thumbnail, 0, scale, len(colors))
        images.append(image)
    return images


def colour_scales(tops: np.ndarray, entries: int) -> np.ndarray:
    """Each picture's colour index per unit of weight: its top weight in the last of `entries` colours."""
    return np.where(tops > 0, (entries - 1) / np.where(tops > 0, tops, 1), 0).astype(np.float32)


def write_rows(image: QtGui.QImage, weights: np.ndarray, first: int, scale: np.float32, entries: int) -> None:
    """Write the rows of `weights` into the one-byte pixels of `image` from row `first` on, each weight
    times `scale` as a colour index, those above the last colour in it."""
    rows, size = weights.shape
    pixels = np.frombuffer(image.bits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    pixels[first:first + rows, :size] = np.minimum(weights * scale, entries - 1)


class CellPictures(Mapping):
    """Each cell's picture by (layer, head), made when it is first drawn or read: a new text changes every
    cell, and a scrubber step or an edit made all 270 of SmolLM2's pictures where the view shows a
    part of them (an export or a read makes the rest then, the same way).

    A generation's texts so far show read-only views of the top-left corner of the whole text's
    thumbnails (generation_trace). Their pictures are made from the widest such corner shown (the
    source), each coloured up to the largest weight of the part on show, and drawn through the part
    the tokens cover: a step back to a shorter text so far keeps every picture whose largest weight
    stayed (in a causal decoder usually every one: its first token puts all its weight on itself), where
    it made all of them again (1.2 ms a step at 64 tokens).

    Past 128 tokens a text so far whose last block of pooled rows is partial has thumbnails of its own,
    whose rows above that block are the whole text's (PretrainedTrace.thumbnail_rows_shared). Between two
    such texts only the rows below are compared, and a changed cell whose largest weight stayed has its
    picture made again below them only: a step at 1,000 tokens compared every cell whole (3 ms) and made
    the 73 in sight again (3.5 ms)."""

    def __init__(self):
        self._made: dict[tuple[int, int], QtGui.QImage] = {}
        self._due: set[tuple[int, int]] = set()  # cells whose picture is still to be made
        self._due_below: dict[tuple[int, int], int] = {}  # due cells whose picture holds above this row
        self._thumbnails: np.ndarray | None = None
        self._shared: tuple[np.ndarray, int] | None = None  # the rows the thumbnails share (thumbnail_rows_shared)
        self._source: np.ndarray | None = None  # what the pictures are made from: the thumbnails, or a corner of them
        self._tops: np.ndarray | None = None  # (layers, heads): each cell's largest weight on show, when known
        self._made_tops: np.ndarray | None = None  # (layers, heads): the last colour's weight of each picture made
        self._colormap = ""
        self.version = 0  # counts the changes of what the pictures show (show, clear)

    def show(self, thumbnails: np.ndarray, colormap: str, tops: Callable[[], np.ndarray] | None = None,
             shared: tuple[np.ndarray, int] | None = None) -> None:
        """Pictures of `thumbnails` in `colormap` from now on: those of the cells whose thumbnail changed
        are made again when next drawn, the others kept (every cell for another colour map or grid).
        `tops`, when given, tells each cell's largest weight (a trace's own: made ahead on the worker
        for the scrubber's next step), else it is found here when needed. `shared`: the rows the
        thumbnails share with another trace's (PretrainedTrace.thumbnail_rows_shared)."""
        old = self._thumbnails
        if old is thumbnails and colormap == self._colormap:
            return
        self.version += 1
        layers, heads = thumbnails.shape[:2]
        # else found as the pictures are made, for the cells drawn only (a long text's 270 cells of 128²)
        found = tops() if tops is not None else None
        below = 0  # the changed cells' pictures hold above this row
        if colormap == self._colormap and is_corner_of(thumbnails, self._source):
            # the same pixels, drawn in part: only a new last colour tells. Each step's maxima over every
            # cell read 6 MB of thumbnails (0.8 ms of a step at 64 SmolLM2 tokens), made ahead with the step
            found = largest_of_each(thumbnails) if found is None else found
            changed = found != self._made_tops
        elif old is None or colormap != self._colormap or old.shape != thumbnails.shape:
            self._made.clear()  # another model's grid may have had more cells
            self._made_tops = np.full((layers, heads), np.nan, dtype=np.float32)
            self._source = thumbnails
            changed = np.ones((layers, heads), dtype=bool)
        else:  # compared all at once: a comparison a cell cost more than making its picture
            self._source = thumbnails
            if shared is not None and self._shared is not None and shared[0] is self._shared[0]:
                below = min(shared[1], self._shared[1])
            changed = changed_cells(old[:, :, below:], thumbnails[:, :, below:])
        for cell in map(tuple, np.argwhere(changed).tolist()):
            if below and cell in self._made:
                self._due_below[cell] = min(below, self._due_below.get(cell, below))
            else:
                self._made.pop(cell, None)
                self._due_below.pop(cell, None)
            self._due.add(cell)
        self._thumbnails, self._shared, self._tops, self._colormap = thumbnails, shared, found, colormap

    def clear(self) -> None:
        self.version += 1
        self._made.clear()
        self._due.clear()
        self._due_below.clear()
        self._thumbnails = self._shared = self._source = self._tops = self._made_tops = None

    def make(self, cells) -> None:
        """Make the pictures of those of `cells` still due, together; those that hold above a row (show),
        below it only, where their last colour stayed."""
        due = [cell for cell in cells if cell in self._due]
        if not due:
            return
        layers, heads = np.array(due).T
        # a corner's tops are those of the part on show; otherwise all of each cell is on show. Read from
        # each cell's own thumbnail: gathered into one array first, they were copied (5 MB at 128 tokens)
        tops = (np.array([largest_of_each(self._source[cell]) for cell in due]) if self._tops is None
                else self._tops[layers, heads])
        height, width = self._source.shape[-2:]
        colors = color_table(self._colormap)
        scales = colour_scales(tops, len(colors))
        stayed = (tops == self._made_tops[layers, heads]).tolist()
        whole = []
        for k, cell in enumerate(due):
            below, kept = self._due_below.pop(cell, None), self._made.get(cell)
            if below is None or kept is None or not stayed[k] or kept.height() != height or kept.width() != width:
                whole.append(k)
                continue
            picture = QtGui.QImage(kept)  # its own pixels once written (bits() copies them)
            write_rows(picture, self._source[cell][below:], below, scales[k], len(colors))
            self._made[cell] = picture
        made = weights_images([self._source[due[k]] for k in whole], colors, tops[whole])
        self._made.update(zip([due[k] for k in whole], made, strict=True))
        self._made_tops[layers, heads] = tops
        self._due.difference_update(due)

    def __getitem__(self, cell: tuple[int, int]) -> QtGui.QImage:
        self.make([cell])
        return self._made[cell]

    def __contains__(self, cell) -> bool:
        return cell in self._made or cell in self._due

    def __iter__(self):
        return iter(sorted(self._made.keys() | self._due))

    def __len__(self) -> int:
        return len(self._made.keys() | self._due)


def changed_cells(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """(layers, heads): whether each cell's thumbnail differs. Each cell's last row (the last word's,
    which reads every word before it, so a change anywhere reaches it) is compared first; only where some
    cell's last row is the same are the cells compared whole. A new text changes every cell's last row,
    and comparing all of SmolLM2's 270 cells whole took about 2 ms at 256 tokens."""
    if old.shape[-2] == 0:
        return np.zeros(old.shape[:2], dtype=bool)
    changed = (old[..., -1, :] != new[..., -1, :]).any(axis=-1)
    if changed.all():
        return changed
    return (old != new).reshape(*old.shape[:2], -1).any(axis=2)


@lru_cache(maxsize=8)
def color_table(colormap: str) -> tuple[int, ...]:
    lut = pg.colormap.get(colormap).getLookupTable(nPts=256, alpha=False)
    return tuple(QtGui.qRgb(int(r), int(g), int(b)) for r, g, b in lut[:, :3])


def drawable(picture: QtGui.QImage, rect: QtCore.QRectF, part: QtCore.QRectF) -> QtGui.QImage:
    """`picture` in the form Qt draws fastest with its `part` in `rect`. One-byte pixels drawn into large
    cells, at more than about half their size, take a slow path in Qt whose cost grows with the pixels
    drawn (a model view widened to 76-pixel cells: 2.1 ms for 72 cells), where making a 32-bit copy and
    drawing it takes half that. In small cells, or for pictures drawn much smaller, the copy costs more
    than it saves."""
    if rect.width() > LARGE_CELL_PX and 4 * rect.width() * rect.height() > part.width() * part.height():
        return picture.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    return picture


def _copies_exactly(painter: QtGui.QPainter, ratio: float) -> bool:
    """Whether an image of `ratio` device pixels a pixel, drawn by `painter` at a whole pixel, lands on
    whole device pixels unscaled: a raster device (not an SVG's vectors), whole device pixels a pixel,
    and no scaling or turning but the device's own (an export drawn at twice the size is redrawn)."""
    device = painter.deviceTransform()
    return (painter.paintEngine().type() == QtGui.QPaintEngine.Type.Raster and ratio == round(ratio)
            and device.m11() == device.m22() == ratio and device.m12() == device.m21() == 0
            and device.dx() == round(device.dx()) and device.dy() == round(device.dy()))


class _Grid(QtWidgets.QWidget):
    """The painted grid; the view around it scrolls it.

    What it shows but the marks (the focused word's bands, the chosen cell's frame) is kept as an image
    of the part last painted: a hover moves the focus in every cell in sight, and drawing their ninety
    pictures again took 2 ms of each hover at 64 SmolLM2 tokens, where copying the kept image takes a
    tenth of that. The image is used again only for the same picture (QtModelView.base_key) at the
    same device pixels: an opaque background, and a whole number of device pixels a pixel."""

    def __init__(self, view: QtModelView):
        super().__init__()
        self.view = view
        self.setMouseTracking(True)
        self.background: QtGui.QColor | None = theme.background()
        self._base: tuple[tuple, QtCore.QRect, QtGui.QImage] | None = None  # (key, where, the image)

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API
        layers, heads = self.view.grid_shape()
        cell = self.view.cell_px
        return QtCore.QSize(HEADER_PX + heads * (cell + GAP_PX), TITLE_PX + HEADER_PX + layers * (cell + GAP_PX))

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QtGui.QPainter(self)
        exposed = event.rect()
        ratio = painter.device().devicePixelRatioF()
        if self.background is None or self.background.alpha() < 255 or not _copies_exactly(painter, ratio):
            self.view.paint(painter, self.background, QtCore.QRectF(exposed))
        else:
            key = (*self.view.base_key(self.background), ratio)
            if self._base is None or self._base[0] != key or not self._base[1].contains(exposed):
                self._base = (key, exposed, self._base_image(exposed, ratio))
            _, where, image = self._base
            part = QtCore.QRectF(QtCore.QPointF(exposed.topLeft() - where.topLeft()) * ratio,
                                 QtCore.QSizeF(exposed.size()) * ratio)  # in the image's device pixels
            painter.drawImage(QtCore.QPointF(exposed.topLeft()), image, part)
            self.view.paint_marks(painter, self.view.cells_meeting(QtCore.QRectF(exposed)))
        painter.end()

    def _base_image(self, where: QtCore.QRect, ratio: float) -> QtGui.QImage:
        """The grid but its marks, in `where`, in device pixels."""
        image = QtGui.QImage(where.size() * ratio, QtGui.QImage.Format.Format_RGB32)
        image.setDevicePixelRatio(ratio)
        painter = QtGui.QPainter(image)
        painter.setFont(self.font())
        painter.translate(-where.topLeft())
        self.view.paint_base(painter, self.background, QtCore.QRectF(where))
        painter.end()
        return image

    def mouseMoveEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802 - Qt API
        self.view.hover_at(event.position())

    def leaveEvent(self, _event: QtCore.QEvent) -> None:  # noqa: N802 - Qt API
        self.view.hover_at(None)

    def mousePressEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802 - Qt API
        cell = self.view.cell_at(event.position())
        if cell is None:
            return
        ablate = (event.button() == QtCore.Qt.MouseButton.RightButton
                  or event.modifiers() & QtCore.Qt.KeyboardModifier.ControlModifier)
        if ablate:
            self.view.controller.toggle_ablated(*cell)
        elif event.button() == QtCore.Qt.MouseButton.LeftButton:
            self.view.controller.show_layer_head(*cell)


class QtModelView(QtWidgets.QWidget):
    """Layers × heads of the controller's real model; empty, with a line saying why, for a toy model."""

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.cell_px = 64
        self.images = CellPictures()
        self.cells: Cells | None = None
        self.labels: list[str] = []          # the rows' tokens
        self.column_labels: list[str] = []   # the columns': the same, but for cross-attention (the source's)
        self._readout_spot: tuple[int, int, int, int] | None = None  # under the mouse: (layer, head, row, col)
        self.grid = _Grid(self)
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setWidget(self.grid)
        self.scroll.setWidgetResizable(False)
        self.caption = FoldingLabel()
        # one line cut to the width, sealed: a new text laid out the dock and the window on every hover
        self.readout = ElidedLabel(" ")
        self.cells_box = QtWidgets.QComboBox()  # the weights on this text, or a census measure (model_census)
        self.cells_box.setToolTip("Colour the cells by the weights on this text, or by a census measure over many "
                                  "texts (run View ▸ Head census… first)")
        self.census_source = None               # the census window's controls, once it is built
        self.census_cells: CensusCells | None = None
        cells_row = QtWidgets.QHBoxLayout()
        cells_label = QtWidgets.QLabel("Cells")
        cells_label.setBuddy(self.cells_box)
        cells_row.addWidget(cells_label)
        cells_row.addWidget(self.cells_box, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.caption)
        layout.addLayout(cells_row)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(LayoutSeal(self.readout))
        self.cells_box.activated.connect(self._on_cells_chosen)
        self.scroll.viewport().installEventFilter(self)
        for signal in (controller.pretrained_trace_changed, controller.real_view_changed,
                       controller.colormap_changed, controller.real_model_changed, controller.matrix_changed):
            signal.connect(self.rebuild)
        controller.trace_changed.connect(self._on_trace_changed)
        controller.real_model_changed.connect(self._sync_cells_box)
        for signal in (controller.focus_changed, controller.layer_changed, controller.head_changed,
                       controller.ablation_changed):
            signal.connect(self.grid.update)
        self._sync_cells_box()
        self.rebuild()

    # --- the census as cells ----------------------------------------------------------------------
    def set_census_source(self, census) -> None:
        """The census window's controls (controller_census.CensusControls): their result, when it is
        of this model, is offered as the cells' colours."""
        self.census_source = census
        census.result_changed.connect(self._sync_cells_box)
        self._sync_cells_box()

    def show_census(self, choice: CensusChoice | None, result=None) -> None:
        """Colour the cells by `choice`'s measure of `result` (a CensusResult of this model), or (None)
        by the weights on the text again."""
        self.census_cells = None if choice is None else CensusCells(choice, result)
        self._sync_cells_box()
        self.rebuild()

    def show_census_if_measured(self, choice: CensusChoice) -> bool:
        """Colour the cells by `choice` (a view file's) when the census window measured just that."""
        offered = self._offered_census()
        if offered is None or not choice.matches(offered[1], offered[2]):
            return False
        self.show_census(choice, offered[0])
        return True

    def census_choice(self) -> CensusChoice | None:
        return None if self.census_cells is None else self.census_cells.choice

    def _offered_census(self):
        """The census window's result when it measured the open model, with what it ran on."""
        source, model = self.census_source, self.controller.real_model
        result = None if source is None else source.result
        if result is None or model is None or result.model_name != model.name or \
                (result.n_layers, result.n_heads) != (model.n_layers, model.n_heads):
            return None
        return result, result.settings, source.result_texts

    def _sync_cells_box(self, *_) -> None:
        """The weights, and each measure of the census of this model when there is one; a census shown
        that is no longer the window's (another run, another model) gives way to the weights."""
        offered = self._offered_census()
        shown = self.census_cells
        # a figure's view has no source: it keeps the census it was given while its model is open
        if shown is not None and (self.controller.real_model is None or (
                self.census_source is not None and (offered is None or offered[0] is not shown.result))):
            self.census_cells = shown = None
        box = self.cells_box
        with QtCore.QSignalBlocker(box):
            box.clear()
            box.addItem("Weights on this text", None)
            if offered is None:
                box.addItem("Census measures: run View ▸ Head census… first", "")
                box.model().item(1).setEnabled(False)
            else:
                for measure in offered[0].measures:
                    box.addItem(f"Census: {CensusChoice(measure).title}", measure)
            if shown is not None and box.findData(shown.choice.measure) < 0:  # given, not offered (a figure)
                box.addItem(f"Census: {shown.choice.title}", shown.choice.measure)
            box.setCurrentIndex(0 if shown is None else box.findData(shown.choice.measure))

    def _on_cells_chosen(self, index: int) -> None:
        measure = self.cells_box.itemData(index)
        offered = self._offered_census()
        if not measure or offered is None:
            self.show_census(None)
            return
        result, settings, texts = offered
        self.show_census(CensusChoice.of(measure, settings, texts), result)

    # --- state ----------------------------------------------------------------------------------
    def grid_shape(self) -> tuple[int, int]:
        model = self.controller.real_model
        return (model.n_layers, model.n_heads) if model is not None else (0, 0)

    def rebuild(self, *_):
        """The pictures of the cells whose thumbnails changed (all of them for a new colour map or
        reading): after a forward, a new reading or colour map."""
        ptrace = self.controller.pretrained_trace
        if ptrace is None:
            self.images.clear()
            self.cells, self.labels, self.column_labels = None, [], []  # not kept when closed
            self.caption.set_full_text("Open a real model (the model list, or File ▸ Open) to see all its layers "
                                       "and heads here." if not self.controller.is_real else "Running the model…")
        else:
            pair = self.controller.is_encoder_decoder
            self.cells = encoder_decoder_cells(ptrace, self.controller.real_view) if pair else \
                model_cells(ptrace, self.controller.real_view, self._norm_chosen())
            self.labels, self.column_labels = self.cells.labels, self.cells.column_labels
            own = not pair and self.cells.thumbnails is ptrace.thumbnails  # the trace's own, not a reading's
            self.images.show(self.cells.thumbnails, self.controller.colormap, ptrace.thumbnail_tops if own else None,
                             ptrace.thumbnail_rows_shared() if own else None)
            model = self.controller.real_model
            coloured = ("its largest weight × moved norm ‖α·f(x)‖ (norm-based attention)" if self._norm_drawn()
                        else "its largest weight")
            self.caption.set_full_text(self.census_cells.caption(model) if self.census_cells is not None else (
                f"{model.name}: {model.n_layers} layers × {model.n_heads} heads, each coloured from 0 to "
                f"{coloured}. Hover to follow a word (Shift: the word looked at); click a cell to open it; "
                f"right-click to switch the head off or on." + (f" {self.cells.note}" if self.cells.note else "")))
        self._fit_cells()
        self.show_readout(self._readout_spot)
        self.grid.update()

    def _norm_chosen(self) -> bool:
        """Norm-based attention chosen in the matrix box (the cells follow it as the heatmap does)."""
        return self.controller.matrix == "norm"

    def _norm_drawn(self) -> bool:
        """The cells draw norm-based attention (chosen, and the text short enough to make it for every head)."""
        return self._norm_chosen() and self.cells is not None and self.cells.read

    def _on_trace_changed(self, _trace) -> None:
        """The main views' tokens changed (a reading the cells do not draw, a new layer): the focus
        band is drawn in the cells' own tokens, so it is drawn again."""
        if self.cells is not None and not self.cells.read:
            self.grid.update()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self.caption.set_folded(self.height() < CAPTION_FOLDS_BELOW_PX)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt API
        # the scroll area's own viewport, once laid out: this widget's resize comes before it, when
        # the viewport still has its old width (a view built at its size then drew cells too large)
        if watched is self.scroll.viewport() and event.type() == QtCore.QEvent.Type.Resize:
            self._fit_cells()
        return False

    def _fit_cells(self) -> None:
        """Cells as large as the width allows, within limits; the height scrolls. Measured from the room
        the scroll area has without its scroll bars, less the vertical bar's width only when the grid
        is then too tall: measured from the viewport of the moment, both "bar, small cells" and "no bar,
        large cells" held, and which showed depended on the text before."""
        layers, heads = self.grid_shape()
        room = self.scroll.maximumViewportSize()
        cell = self._cell_for(room.width(), heads)
        if layers and TITLE_PX + HEADER_PX + layers * (cell + GAP_PX) > room.height():
            cell = self._cell_for(room.width() - self.scroll.verticalScrollBar().sizeHint().width(), heads)
        self.cell_px = cell
        self.grid.resize(self.grid.sizeHint())

    @staticmethod
    def _cell_for(width: int, heads: int) -> int:
        cell = ((width - HEADER_PX) // heads - GAP_PX) if heads else MIN_CELL_PX
        return max(MIN_CELL_PX, min(MAX_CELL_PX, cell))

    def title(self) -> str:
        """Which model and how it is read, in one line (cut with … when the grid is narrow)."""
        c = self.controller
        if c.real_model is None or not self.labels:
            return ""
        if self.census_cells is not None:
            text = self.census_cells.title(c.real_model.name) + (f", {len(c.ablated)} off" if c.ablated else "")
            return QtGui.QFontMetrics(self.grid.font()).elidedText(text, QtCore.Qt.TextElideMode.ElideRight,
                                                                    max(self.grid.width() - 8, 40))
        view = c.real_view
        read = self.cells is not None and self.cells.read  # else the cells show every token's own weights
        hidden = [name for on, name in ((view.hide_specials, "specials hidden"),
                                        (view.hide_first, "first token hidden")) if on and read]
        off = [f"{len(c.ablated)} head{'s' if len(c.ablated) != 1 else ''} off"] if c.ablated else []
        unit = "words" if view.merge_words and read else "tokens"
        norm = ["norm-based attention"] if self._norm_drawn() else []
        text = ", ".join([f"{c.real_model.name}: {len(self.labels)} {unit}", *norm, *hidden, *off])
        return QtGui.QFontMetrics(self.grid.font()).elidedText(text, QtCore.Qt.TextElideMode.ElideRight,
                                                                max(self.grid.width() - 8, 40))

    def cell_rect(self, layer: int, head: int) -> QtCore.QRectF:
        return QtCore.QRectF(*self._cell_corner(layer, head), self.cell_px, self.cell_px)

    def _cell_corner(self, layer: int, head: int) -> tuple[int, int]:
        """A cell's top-left corner (x, y) in the grid, in plain numbers: a QRectF asked for its edges
        cost more than drawing the focus bands of the cells in sight (72 cells: 0.35 ms)."""
        step = self.cell_px + GAP_PX
        return HEADER_PX + head * step, TITLE_PX + HEADER_PX + layer * step

    def cell_at(self, point: QtCore.QPointF) -> tuple[int, int] | None:
        step = self.cell_px + GAP_PX
        layers, heads = self.grid_shape()
        head, layer = int((point.x() - HEADER_PX) // step), int((point.y() - TITLE_PX - HEADER_PX) // step)
        if 0 <= layer < layers and 0 <= head < heads and self.cell_rect(layer, head).contains(point):
            return layer, head
        return None

    def token_at(self, point: QtCore.QPointF) -> tuple[int, int, int, int] | None:
        """(layer, head, row, column) of the weight under `point`, if any."""
        cell = self.cell_at(point)
        rows, cols = len(self.labels), len(self.column_labels)
        if cell is None or rows == 0 or cols == 0:
            return None
        rect = self.cell_rect(*cell)
        col = min(cols - 1, int((point.x() - rect.left()) / rect.width() * cols))
        row = min(rows - 1, int((point.y() - rect.top()) / rect.height() * rows))
        return (*cell, row, col)

    def hover_at(self, point: QtCore.QPointF | None) -> None:
        """Hovering a cell focuses the word looking there (its row), as hovering a heatmap row does; with
        Shift held, the word looked at (its column)."""
        spot = None if point is None else self.token_at(point)
        self.show_readout(spot)
        if spot is None or self.census_cells is not None:  # a census cell is a head over many texts, no word
            self.controller.set_hovered(None, source=self)
            return
        _layer, _head, row, col = spot
        shift = QtWidgets.QApplication.keyboardModifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier
        index, role = (col, LOOKED_AT) if shift else (row, LOOKING)
        self.controller.set_hovered(self._shown_index(index), role, self)

    def _reading(self):
        """The reading of the main views when the cells do not draw it (their tokens are then the
        layer's own), else None: the cells and the main views count the same tokens."""
        trace = self.controller.trace
        return None if self.cells is None or self.cells.read or trace is None else trace.reading

    def _shown_index(self, index: int) -> int | None:
        """A cell's row or column as the main views number their tokens (None: hidden there)."""
        reading = self._reading()
        return index if reading is None else reading.shown_index(index)

    def _cell_span(self, shown: int) -> tuple[int, int]:
        """The cells' rows (or columns) that stand for the main views' token `shown`: [first, last)."""
        reading = self._reading()
        if reading is None:
            return shown, shown + 1
        group = reading.groups[shown]
        return min(group), max(group) + 1

    def readout_spot(self) -> tuple[int, int, int, int] | None:
        return self._readout_spot

    def show_readout(self, spot: tuple[int, int, int, int] | None) -> None:
        """Read out the weight at (layer, head, row, column) under the grid, from the weights shown now:
        redrawn with every rebuild, so a new reading or forward never leaves the old number."""
        layers, heads = self.grid_shape()
        rows, cols = len(self.labels), len(self.column_labels)
        if spot is not None and not (spot[0] < layers and spot[1] < heads and spot[2] < rows and spot[3] < cols
                                     and self.images):
            spot = None
        self._readout_spot = spot
        if spot is None:
            self.readout.set_full_text(" ")
            return
        layer, head, row, col = spot
        if self.census_cells is not None:
            self.readout.set_full_text(self.census_cells.readout(layer, head))
            return
        c = self.controller
        norm = self._norm_drawn()
        value = cell_weight(c.pretrained_trace, c.real_view, self.cells, layer, head, row, col, norm)
        what = "‖α·f(x)‖ " if norm else ""
        where = f"layer {layer + 1}, head {head + 1}: {self.labels[row]} → {self.column_labels[col]}"
        self.readout.set_full_text(f"{where}  {what}{value:.3f}")

    # --- painting -------------------------------------------------------------------------------
    def paint(self, painter: QtGui.QPainter, background: QtGui.QColor | None,
              exposed: QtCore.QRectF | None = None) -> None:
        """The grid, or the cells and labels of it that meet `exposed` (a repaint of what the scroll
        area shows, or of one cell's change): 30 × 9 cells walked in Python for each hover and step
        cost more than the few on screen took to draw."""
        self.paint_marks(painter, self.paint_base(painter, background, exposed))

    def base_key(self, background: QtGui.QColor) -> tuple:
        """Everything paint_base draws from: equal keys, the same picture."""
        c = self.controller
        return (self.images.version, id(self.cells), id(self.census_cells), c.colormap, frozenset(c.ablated),
                self.title(), len(self.labels), len(self.column_labels), self.cell_px, self.grid.size().toTuple(),
                self.grid.font().key(), background.rgba(), theme.foreground().rgba())

    def cells_meeting(self, area: QtCore.QRectF) -> list[tuple[int, int]]:
        """The cells with a picture that meet `area`."""
        shown_layers, shown_heads = self._cells_meeting(area)
        return [(layer, head) for layer in shown_layers for head in shown_heads if (layer, head) in self.images]

    def paint_base(self, painter: QtGui.QPainter, background: QtGui.QColor | None,
                   exposed: QtCore.QRectF | None = None) -> list[tuple[int, int]]:
        """What paint draws but the marks (paint_marks); returns the cells it drew."""
        area = QtCore.QRectF(self.grid.rect()) if exposed is None else exposed
        if background is not None:
            painter.fillRect(area, background)
        if not self.images:
            return []
        painter.setPen(theme.foreground())
        painter.drawText(QtCore.QRectF(4, 0, self.grid.width() - 8, TITLE_PX),
                         QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignVCenter, self.title())
        shown_layers, shown_heads = self._cells_meeting(area)
        for head in shown_heads:
            rect = self.cell_rect(0, head)
            painter.drawText(QtCore.QRectF(rect.left(), TITLE_PX, rect.width(), HEADER_PX),
                             QtCore.Qt.AlignmentFlag.AlignCenter, f"H{head + 1}")
        for layer in shown_layers:
            rect = self.cell_rect(layer, 0)
            painter.drawText(QtCore.QRectF(0, rect.top(), HEADER_PX, rect.height()),
                             QtCore.Qt.AlignmentFlag.AlignCenter, f"L{layer + 1}")
        c = self.controller
        census = self.census_cells
        colors = color_table(c.colormap) if census is not None else None
        tokens = self._tokens_in_image()  # the same part of every cell's picture
        cells = self.cells_meeting(area)
        if census is None:
            self.images.make(cells)
        for layer, head in cells:
            rect = self.cell_rect(layer, head)
            if census is not None:
                census.paint_cell(painter, rect, layer, head, colors)
            else:
                painter.drawImage(rect, drawable(self.images[layer, head], rect, tokens), tokens)
            if (layer, head) in c.ablated:
                self._paint_off(painter, rect)
        return cells

    def paint_marks(self, painter: QtGui.QPainter, cells: list[tuple[int, int]]) -> None:
        """Over the pictures of `cells`: the focused word's bands (not over a census), and the frame of
        the layer and head the main views show."""
        if not self.images:
            return
        if self.census_cells is None:
            self._paint_focus(painter, cells)
        pen = QtGui.QPen(theme.highlight(), 3)
        painter.setPen(pen)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        painter.drawRect(self.cell_rect(self.controller.layer, self.controller.head).adjusted(-2, -2, 2, 2))

    def _tokens_in_image(self) -> QtCore.QRectF:
        """The pixels of a cell's picture that cover the tokens (a pooled picture's last block may
        reach past them): one step for both sides, the longer side's, as thumbnails.pooled makes it."""
        rows, cols = len(self.labels), len(self.column_labels)
        step = thumb_step(max(rows, cols))
        return QtCore.QRectF(0, 0, cols / step, rows / step)

    def _cells_meeting(self, area: QtCore.QRectF) -> tuple[range, range]:
        """The layers (rows of cells) and heads (columns) whose cells or labels meet `area`."""
        layers, heads = self.grid_shape()
        step = self.cell_px + GAP_PX
        top, left = area.top() - TITLE_PX - HEADER_PX, area.left() - HEADER_PX

        def spanned(start: float, length: float, count: int) -> range:
            first = max(0, math.floor(start / step))
            return range(min(first, count), min(count, math.ceil((start + length) / step)))  # [start, end)

        return spanned(top, area.height(), layers), spanned(left, area.width(), heads)

    def _paint_focus(self, painter: QtGui.QPainter, cells: list[tuple[int, int]]) -> None:
        """The focused word's row (looking) or column (looked at) outlined in each of `cells`."""
        focus = self.controller.focus
        trace = self.controller.trace
        looked_at = self.controller.focus_role == LOOKED_AT
        n = len(self.column_labels if looked_at else self.labels)
        if focus is None or n == 0 or trace is None or focus >= (trace.n_keys if looked_at else trace.n):
            return
        first, last = self._cell_span(focus)
        if last > n:
            return
        painter.setPen(QtGui.QPen(theme.highlight(), 1.5))
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        cell, band = self.cell_px, self.cell_px / n
        start, length = first * band, (last - first) * band
        corners = [self._cell_corner(layer, head) for layer, head in cells]
        if looked_at:
            bands = [QtCore.QRectF(x + start, y, length, cell) for x, y in corners]
        else:
            bands = [QtCore.QRectF(x, y + start, cell, length) for x, y in corners]
        painter.drawRects(bands)  # one call for every cell's band

    @staticmethod
    def _paint_off(painter: QtGui.QPainter, rect: QtCore.QRectF) -> None:
        """A switched-off head: greyed, crossed out, and said."""
        painter.fillRect(rect, QtGui.QColor(128, 128, 128, 170))
        painter.setPen(QtGui.QPen(QtGui.QColor("#E03131"), 2))
        painter.drawLine(rect.topLeft(), rect.bottomRight())
        painter.drawLine(rect.topRight(), rect.bottomLeft())
        painter.setPen(QtGui.QColor("white"))
        painter.drawText(rect, QtCore.Qt.AlignmentFlag.AlignCenter, "off")

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        """What an image export renders: the whole grid, scrolled-away rows included."""
        return self.grid

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        self.grid.background = color
        self.grid.update()
