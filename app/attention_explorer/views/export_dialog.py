"""The Export… dialog: which view or data, which format, what scale, transparent or not."""

from __future__ import annotations

from PySide6 import QtWidgets

from ..export import IMAGE_SCALES

# what → (label, file filter); images are rendered from a view, data is written from the trace
EXPORT_KINDS = {
    "heatmap": ("Heatmap image", "PNG image (*.png);;SVG image (*.svg)"),
    "arcs": ("Arc diagram image", "PNG image (*.png);;SVG image (*.svg)"),
    "steps": ("Steps: this step's panel, or the play-through as GIF",
              "Animated GIF (*.gif);;PNG image (*.png);;SVG image (*.svg)"),
    "model": ("Model view image (real models: every layer and head)", "PNG image (*.png);;SVG image (*.svg)"),
    "csv": ("Shown matrix as CSV", "CSV table (*.csv)"),
    "json": ("Whole trace as JSON", "JSON trace (*.json)"),
}


class QtExportDialog(QtWidgets.QDialog):
    def __init__(self, parent: QtWidgets.QWidget | None = None, kind: str = "heatmap"):
        super().__init__(parent)
        self.setWindowTitle("Export")
        self.kind = QtWidgets.QComboBox()
        for key, (label, _filters) in EXPORT_KINDS.items():
            self.kind.addItem(label, key)
        self.kind.setCurrentIndex(self.kind.findData(kind))
        self.scale = QtWidgets.QComboBox()
        for s in IMAGE_SCALES:
            self.scale.addItem(f"{s}×", s)
        self.scale.setCurrentIndex(1)
        self.transparent = QtWidgets.QCheckBox("Transparent background (PNG)")
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Save
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QtWidgets.QFormLayout(self)
        form.addRow("Export", self.kind)
        form.addRow("PNG scale", self.scale)
        form.addRow("", self.transparent)
        form.addRow(buttons)
        self.kind.currentIndexChanged.connect(self._sync)
        self._sync()

    def chosen(self) -> tuple[str, int, bool]:
        """(kind, scale, transparent)."""
        return self.kind.currentData(), self.scale.currentData(), self.transparent.isChecked()

    def _sync(self) -> None:
        image = self.kind.currentData() in ("heatmap", "arcs", "steps", "model")
        self.scale.setEnabled(image)
        self.transparent.setEnabled(image)
