"""The Export… dialog: which figure or data, which file type, theme, size, caption and title, whether to
keep the word under the mouse or draw only the part of the heatmap on screen, and the command line
that makes the same figure."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from PySide6 import QtCore, QtWidgets

from ..export_files import FILTERS
from ..figure_options import (
    DPI_RANGE,
    JOURNAL_COLUMN_CM,
    SCALES,
    WIDTH_CM_RANGE,
    WIDTH_PX_RANGE,
    FigureOptions,
    FigureSize,
)
from .theme import FIGURE_THEMES

IMAGE = (".png", ".svg", ".pdf")
VECTOR = (".svg", ".pdf")  # sized by a width in px or cm; 1×/2×/4× is a PNG's (or GIF's) pixel scale
_KINDS = {
    "heatmap": ("Heatmap", IMAGE),
    "arcs": ("Arc diagram", IMAGE),
    "bars": ("Bars of the pinned word", IMAGE),
    "steps": ("Steps: this step, or the play-through as GIF", (".png", ".svg", ".pdf", ".gif")),
    "model": ("Model view (real models: every layer and head)", IMAGE),
    "grid-heads": ("Every head of the layer, side by side", IMAGE),
    "grid-layers": ("The head in every layer, side by side (real models)", IMAGE),
    "html": ("Interactive web page (hover works in any browser)", (".html",)),
    "csv": ("Shown matrix as CSV", (".csv",)),
    "json": ("Whole trace as JSON", (".json",)),
}
# what → (label, the Save dialog's filters, the file types offered: the first one the default)
EXPORT_KINDS = {key: (label, ";;".join(FILTERS[s] for s in types), types) for key, (label, types) in _KINDS.items()}
FIGURE_KINDS = tuple(kind for kind in EXPORT_KINDS if kind not in ("csv", "json"))
SIZE_CHOICES = {**{f"{s}": f"{s}× the screen's pixels" for s in SCALES}, "px": "A width in pixels",
                "cm": "A print width in centimetres"}


class ExportChoice(NamedTuple):
    kind: str
    suffix: str
    options: FigureOptions


class QtExportDialog(QtWidgets.QDialog):
    """`command_for(choice)` gives the equivalent command line (shown under the options) or "" when
    there is none; `visible_part` says which rows and columns the heatmap shows ("" when it shows all)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None, kind: str = "heatmap", *,
                 command_for: Callable[[ExportChoice], str] | None = None, visible_part: str = "",
                 hovered: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Export")
        self._command_for = command_for
        self.kind = QtWidgets.QComboBox()
        for key, (label, _filters, _types) in EXPORT_KINDS.items():
            self.kind.addItem(label, key)
        self.kind.setCurrentIndex(max(0, self.kind.findData(kind)))
        self.file_type = QtWidgets.QComboBox()
        self.theme = QtWidgets.QComboBox()
        for key, theme in FIGURE_THEMES.items():
            self.theme.addItem(theme.label, key)
        self.scale = QtWidgets.QComboBox()
        for key, label in SIZE_CHOICES.items():
            self.scale.addItem(label, key)
        self.scale.setCurrentIndex(1)  # 2×: crisp on a high-density screen and in slides
        self.width_px = _spin(QtWidgets.QSpinBox(), *WIDTH_PX_RANGE, 1600, " px")
        self.width_cm = _spin(QtWidgets.QDoubleSpinBox(), *WIDTH_CM_RANGE, JOURNAL_COLUMN_CM, " cm")
        self.width_cm.setDecimals(1)
        self.dpi = _spin(QtWidgets.QSpinBox(), *DPI_RANGE, FigureSize.dpi, " dpi")
        sizes = QtWidgets.QHBoxLayout()
        for widget in (self.scale, self.width_px, self.width_cm, self.dpi):
            sizes.addWidget(widget)
        self.caption = QtWidgets.QCheckBox("Caption: model, text, layer and head, reading, options")
        self.caption.setChecked(True)
        self.title = QtWidgets.QLineEdit()
        self.title.setPlaceholderText("A title over the figure (optional)")
        part = f" ({visible_part})" if visible_part else ""
        self.visible_only = QtWidgets.QCheckBox(f"Only the part on screen{part}")
        self.visible_only.setToolTip("A figure holds the whole matrix; tick this for the rows and columns "
                                     "the heatmap shows now (the caption says which)")
        self._visible_part = visible_part
        self.keep_hover = QtWidgets.QCheckBox("As on screen: keep the word under the mouse"
                                              + (f" (“{hovered}”)" if hovered else ""))
        self.keep_hover.setToolTip("Without it a figure leaves out the passing hover; a pinned word (click it) "
                                   "is always kept")
        self.command = QtWidgets.QLineEdit()
        self.command.setReadOnly(True)
        self.command.setObjectName("exportCommand")
        self.command.setMinimumWidth(560)
        copy = QtWidgets.QPushButton("Copy")
        copy.setToolTip("Copy the command that makes the same figure from a terminal")
        copy.clicked.connect(lambda: QtWidgets.QApplication.clipboard().setText(self.command.text()))
        command_row = QtWidgets.QHBoxLayout()
        command_row.addWidget(self.command, 1)
        command_row.addWidget(copy)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Save
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QtWidgets.QFormLayout(self)
        form.addRow("Export", self.kind)
        form.addRow("File type", self.file_type)
        form.addRow("Theme", self.theme)
        form.addRow("Size", sizes)
        form.addRow("", self.caption)
        form.addRow("Title", self.title)
        form.addRow("", self.visible_only)
        form.addRow("", self.keep_hover)
        form.addRow("Command line", command_row)
        form.addRow(buttons)
        self.kind.currentIndexChanged.connect(self._on_kind_changed)
        for signal in (self.file_type.currentIndexChanged, self.theme.currentIndexChanged,
                       self.scale.currentIndexChanged, self.width_px.valueChanged, self.width_cm.valueChanged,
                       self.dpi.valueChanged, self.caption.toggled, self.title.textChanged,
                       self.visible_only.toggled, self.keep_hover.toggled):
            signal.connect(self._sync)
        self._on_kind_changed()

    def chosen(self) -> ExportChoice:
        """(kind, file type, figure options)."""
        return ExportChoice(self.kind.currentData(), self.file_type.currentData(), self._options())

    def _options(self) -> FigureOptions:
        size_key = self.scale.currentData()
        if size_key == "px":
            size = FigureSize(width_px=self.width_px.value())
        elif size_key == "cm":
            size = FigureSize(width_cm=round(self.width_cm.value(), 1), dpi=self.dpi.value())
        elif self.file_type.currentData() in VECTOR:
            size = FigureSize()  # a scale is of pixels: a vector file is drawn at its layout size, as the CLI draws it
        else:
            size = FigureSize(scale=int(size_key))
        figure = self.kind.currentData() in FIGURE_KINDS
        return FigureOptions(theme=self.theme.currentData(), caption=self.caption.isChecked(),
                             title=self.title.text().strip(), size=size,
                             keep_hover=figure and self.keep_hover.isChecked(),
                             visible_only=self.visible_only.isEnabled() and self.visible_only.isChecked())

    def _on_kind_changed(self, *_):
        kind = self.kind.currentData()
        with QtCore.QSignalBlocker(self.file_type):
            self.file_type.clear()
            for suffix in EXPORT_KINDS[kind][2]:
                self.file_type.addItem(suffix[1:].upper(), suffix)
        self._sync()

    def _sync(self, *_):
        kind, suffix = self.kind.currentData(), self.file_type.currentData()
        figure = kind in FIGURE_KINDS
        drawn = figure and suffix != ".html"
        for widget in (self.theme, self.caption, self.title):
            widget.setEnabled(figure)
        self.scale.setEnabled(drawn)
        self.scale.setToolTip("SVG and PDF: their natural size, a width in pixels or a print width; the scale "
                              "multiplies a PNG's pixels" if suffix in VECTOR else "")
        size_key = self.scale.currentData()
        self.width_px.setVisible(size_key == "px")
        self.width_cm.setVisible(size_key == "cm")
        self.dpi.setVisible(size_key == "cm")
        # a PNG only: SVG Tiny, which Qt writes, cannot clip, and the matrix outside the part would
        # cover the colour bar and caption (Qt's SVG 1.1 clips the colour bar away instead)
        self.visible_only.setEnabled(kind == "heatmap" and bool(self._visible_part) and suffix == ".png")
        self.keep_hover.setEnabled(figure)
        text = self._command_for(self.chosen()) if self._command_for is not None and figure else ""
        self.command.setText(text)
        self.command.setCursorPosition(0)  # the command's start: what it exports is read first
        self.command.setToolTip(text or "Data files are written by: attention-explorer export … -o FILE.csv, "
                                        "attention-explorer trace … -o FILE.json")


def _spin(box, low, high, value, suffix: str):
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    return box

