"""The model editor panel: every number of the model in tables, editable in place, recomputed live.

One tab per matrix (embeddings: words × features; W_Q, W_K, W_V: features × projection columns,
tinted by head; W_O when the model has one). Typing in a cell, adding a word and renaming a feature
(double-click its header) all go through the ModelEditor, so each is one undo step.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..editing import ModelEditor
from ..engine import ModelError, model_edits
from .add_word_dialog import QtAddWordDialog
from .model_table import QtModelTable

# Tab labels as the paper writes them; plain text would clip the underscore of "W_Q" on some styles.
TAB_LABELS = {"embeddings": "Embeddings", "w_q": "W<sub>Q</sub>", "w_k": "W<sub>K</sub>", "w_v": "W<sub>V</sub>",
              "w_o": "W<sub>O</sub>"}
TAB_TIPS = {
    "embeddings": "One row per word: how much of each feature the word has",
    "w_q": "What a word looks for: its features (rows) become its query (columns)",
    "w_k": "What a word offers to be found by: its features (rows) become its key (columns)",
    "w_v": "What a word passes on when it is looked at: its features (rows) become its value (columns)",
    "w_o": "How the heads' outputs (rows) mix back into the features (columns)",
}


class QtModelEditor(QtWidgets.QWidget):
    def __init__(self, editor: ModelEditor, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.editor = editor
        self.controller = editor.controller

        toolbar = QtWidgets.QToolBar()
        toolbar.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
        # Drawn at the size the style's arrows are made in: scaled to a toolbar's 24 px, Qt draws such an
        # icon one way the first time and another once its pixmap cache has let it go, so the same
        # button changed its arrow's edge on a later repaint.
        small = self.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_SmallIconSize)
        toolbar.setIconSize(QtCore.QSize(small, small))
        # The Edit menu's own actions, as icons: their text ("Undo set W_Q ...") becomes the tooltip.
        for action in (editor.undo_action, editor.redo_action):
            button = QtWidgets.QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonIconOnly)
            toolbar.addWidget(button)
        toolbar.addSeparator()
        self.add_word_action = toolbar.addAction("+ Add word…", self.open_add_word_dialog)
        self.add_word_action.setToolTip("Add a word to the vocabulary with its feature values")
        toolbar.addSeparator()
        toolbar.addAction(editor.reset_action)
        toolbar.addAction(editor.save_action)
        hint = QtWidgets.QLabel("Double-click a number to change it; double-click a feature's name to rename it.")
        hint.setWordWrap(True)
        hint.setEnabled(False)  # drawn in the muted text colour

        self.tabs = QtWidgets.QTabWidget()
        self.tables: dict[str, QtModelTable] = {}
        self.views: dict[str, QtWidgets.QTableView] = {}
        for field in model_edits.FIELDS:
            table = QtModelTable(editor, field, self)
            table.refused.connect(self._on_value_refused)
            view = QtWidgets.QTableView()
            view.setModel(table)
            view.setObjectName(f"modelTable_{field}")
            view.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.DoubleClicked
                                 | QtWidgets.QAbstractItemView.EditTrigger.EditKeyPressed
                                 | QtWidgets.QAbstractItemView.EditTrigger.AnyKeyPressed)
            view.horizontalHeader().setDefaultSectionSize(58)
            view.horizontalHeader().setMinimumSectionSize(44)
            view.verticalHeader().setDefaultSectionSize(24)
            if table.feature_axis == QtCore.Qt.Orientation.Horizontal:  # feature names are wider than numbers
                view.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
            feature_header = (view.horizontalHeader() if table.feature_axis == QtCore.Qt.Orientation.Horizontal
                              else view.verticalHeader())
            feature_header.sectionDoubleClicked.connect(self.rename_feature_dialog)
            feature_header.setToolTip("Double-click a feature's name to rename it")
            self.tables[field], self.views[field] = table, view
            self._add_tab(view, field)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.addWidget(toolbar)
        layout.addWidget(hint)
        layout.addWidget(self.tabs, 1)
        self.controller.model_changed.connect(self._on_model_changed)
        self._on_model_changed()

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt API: wide enough for eight columns
        return QtCore.QSize(540, 420)

    def _add_tab(self, view: QtWidgets.QTableView, field: str) -> None:
        index = self.tabs.addTab(view, "")
        bar = self.tabs.tabBar()
        label = QtWidgets.QLabel(TAB_LABELS[field])
        label.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # clicks select the tab
        bar.setTabButton(index, QtWidgets.QTabBar.ButtonPosition.LeftSide, label)
        bar.setAccessibleTabName(index, model_edits.FIELD_TITLES[field])
        self.tabs.setTabToolTip(index, TAB_TIPS[field])

    def _on_model_changed(self, *_) -> None:
        self.tabs.setTabVisible(model_edits.FIELDS.index("w_o"), self.tables["w_o"].available)

    def _on_value_refused(self, message: str) -> None:
        QtWidgets.QMessageBox.warning(self, "Value not accepted", f"{message}.\n\nThe model is unchanged.")

    def open_add_word_dialog(self) -> QtAddWordDialog:
        """Open the dialog (window-modal, so tests and users can fill it in); returns it."""
        dialog = QtAddWordDialog(self.editor, self)
        dialog.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.show_word(dialog.added_word))
        dialog.open()
        return dialog

    def show_word(self, word: str) -> None:
        """Bring a word's row into view in the embeddings tab and select it."""
        row = list(self.controller.model.vocabulary).index(word)
        view = self.views["embeddings"]
        self.tabs.setCurrentWidget(view)
        view.selectRow(row)
        view.scrollTo(self.tables["embeddings"].index(row, 0))

    def rename_feature_dialog(self, index: int) -> None:
        old = self.controller.model.features[index]
        name, ok = QtWidgets.QInputDialog.getText(self, "Rename feature", f"New name for “{old}”:", text=old)
        if not ok:
            return
        try:
            self.editor.rename_feature(index, name)
        except ModelError as exc:
            QtWidgets.QMessageBox.warning(self, "Name not accepted", f"{exc}.\n\nThe feature keeps its name.")


EDITOR_MIN_PX, EDITOR_SHARE = 360, 0.3  # the editor's first width: a share of the window's


def model_editor_dock(editor: ModelEditor, window: QtWidgets.QMainWindow) -> QtWidgets.QDockWidget:
    """The panel in a dock on the right, hidden until the View menu shows it (saveState remembers).
    The panel itself is built the first time the dock is shown: its tables cost the start 25 ms."""
    dock = QtWidgets.QDockWidget("Model editor", window)
    dock.setObjectName("modelEditorDock")
    window.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, dock)
    dock.hide()

    def build_on_first_show(shown: bool) -> None:
        if shown and dock.widget() is None:
            dock.setWidget(QtModelEditor(editor, dock))
            # room for a few feature columns and the toolbar; the tables scroll past that
            width = max(EDITOR_MIN_PX, int(window.width() * EDITOR_SHARE))
            window.resizeDocks([dock], [width], QtCore.Qt.Orientation.Horizontal)
    dock.visibilityChanged.connect(build_on_first_show)
    return dock
