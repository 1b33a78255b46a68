"""One matrix of the current model (embeddings, W_Q, W_K, W_V or W_O) as an editable Qt table.

Cells show a short form of each number and hand the exact one (repr, which round-trips float64)
to the cell editor, so opening a cell and pressing Enter never changes a value. A typed value goes
to the ModelEditor, which checks it and pushes one undo command; a refused value is reported
through `refused` and leaves the model as it was. Columns (or, for W_O, rows) of the projection
are tinted by head, so the head boundaries are visible.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui

from ..editing import ModelEditor
from ..engine import ModelError, model_edits
from . import theme

Qt = QtCore.Qt
# Which axis of each field lists the features (its header is where a feature is renamed).
FEATURE_AXIS = {"embeddings": Qt.Orientation.Horizontal, "w_q": Qt.Orientation.Vertical,
                "w_k": Qt.Orientation.Vertical, "w_v": Qt.Orientation.Vertical, "w_o": Qt.Orientation.Horizontal}


def short_number(x: float) -> str:
    """Four significant digits, with a true minus sign; the cell's tooltip has the exact value."""
    return f"{x:.4g}".replace("-", "−")


class QtModelTable(QtCore.QAbstractTableModel):
    refused = QtCore.Signal(str)  # why a typed value was not accepted, for the user

    def __init__(self, editor: ModelEditor, field: str, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.editor = editor
        self.field = field
        self.controller = editor.controller
        self._values = np.zeros((0, 0))
        self._labels: dict[Qt.Orientation, list[str]] = {Qt.Orientation.Horizontal: [], Qt.Orientation.Vertical: []}
        self._heads = 1
        self._reload()
        for signal in (self.controller.model_changed, self.controller.model_edited, self.controller.options_changed):
            signal.connect(self._reload)

    @property
    def feature_axis(self) -> Qt.Orientation:
        return FEATURE_AXIS[self.field]

    @property
    def available(self) -> bool:
        """False for W_O of a model without one."""
        return self.field != "w_o" or self.controller.model.w_o is not None

    def values(self) -> np.ndarray:
        """The numbers shown, exactly as the model holds them."""
        return self._values

    # --- model → table --------------------------------------------------------------------------
    def _reload(self, *_) -> None:
        if self.controller.is_real:
            return  # the controller's options describe the real model now; the toy model waits unchanged
        model = self.controller.model
        values = model_edits.values(model, self.field) if self.available else np.zeros((0, 0))
        heads = self.controller.options.heads
        dims = [self._dimension_label(j, heads, model.d_proj) for j in range(model.d_proj)]
        if not self.available:
            rows, cols = [], []
        elif self.field == "embeddings":
            rows, cols = list(model.vocabulary), model.features
        elif self.field == "w_o":
            rows, cols = dims, model.features
        else:
            rows, cols = model.features, dims
        labels = {Qt.Orientation.Vertical: list(rows), Qt.Orientation.Horizontal: list(cols)}
        if values.shape == self._values.shape:  # an edit or a rename: keep the selection and scroll
            self._values, self._labels, self._heads = values, labels, heads
            if values.size:
                self.dataChanged.emit(self.index(0, 0), self.index(values.shape[0] - 1, values.shape[1] - 1))
                self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, values.shape[1] - 1)
                self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, values.shape[0] - 1)
            return
        self.beginResetModel()
        self._values, self._labels, self._heads = values, labels, heads
        self.endResetModel()

    @staticmethod
    def _dimension_label(j: int, heads: int, d_proj: int) -> str:
        """Column j of the projection: "3", or "h2·1" (head 2, its first column) with several heads."""
        if heads == 1:
            return str(j + 1)
        d_k = d_proj // heads
        return f"h{j // d_k + 1}·{j % d_k + 1}"

    def _head_of(self, row: int, col: int) -> int | None:
        """The head a cell feeds, or None for embeddings (and for a single head: nothing to tell apart)."""
        if self.field == "embeddings" or self._heads == 1:
            return None
        d_k = self._values.shape[0 if self.field == "w_o" else 1] // self._heads
        return (row if self.field == "w_o" else col) // d_k

    # --- the Qt table interface -----------------------------------------------------------------
    def rowCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else self._values.shape[0]

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else self._values.shape[1]

    def data(self, index: QtCore.QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        x = float(self._values[row, col])
        if role == Qt.ItemDataRole.DisplayRole:
            return short_number(x)
        if role == Qt.ItemDataRole.EditRole:
            return repr(x)
        if role == Qt.ItemDataRole.ToolTipRole:
            where = model_edits.cell_name(self.controller.model, self.field, row, col)
            return f"{where}: {x!r}\nDouble-click or type to change it."
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and x == 0:
            return QtGui.QBrush(theme.muted())  # the non-zero numbers are the story; zeros recede
        if role == Qt.ItemDataRole.BackgroundRole:
            head = self._head_of(row, col)
            if head is not None:
                color = theme.head_color(head)
                color.setAlpha(38)
                return QtGui.QBrush(color)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole):
        labels = self._labels[orientation]
        if not 0 <= section < len(labels):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return labels[section]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == self.feature_axis:
            return f"Feature “{labels[section]}” — double-click to rename it"
        if role == Qt.ItemDataRole.ForegroundRole and orientation != self.feature_axis and self.field != "embeddings":
            head = self._head_of(section, section)  # the header's row (W_O) or column (W_Q, W_K, W_V)
            if head is not None:
                return QtGui.QBrush(theme.head_color(head))
        return None

    def flags(self, index: QtCore.QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: QtCore.QModelIndex, value, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        """Every change goes through the undo stack; a refused value changes nothing and says why."""
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        try:
            self.editor.set_value(self.field, index.row(), index.column(), value)
        except ModelError as exc:
            self.refused.emit(str(exc))
            return False
        return True
