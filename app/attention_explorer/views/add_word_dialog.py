"""The "Add word" dialog: a new word and its value for every feature, checked before it closes.

A problem (a word already known, a value that is not a number) is written inside the dialog, which
stays open with what was typed, so nothing has to be typed twice.
"""

from __future__ import annotations

from PySide6 import QtWidgets

from ..editing import ModelEditor
from ..engine import ModelError

ZEROS = "all zeros"


class QtAddWordDialog(QtWidgets.QDialog):
    def __init__(self, editor: ModelEditor, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.editor = editor
        self.added_word: str | None = None
        model = editor.controller.model
        self.setWindowTitle("Add word")

        self.word = QtWidgets.QLineEdit()
        self.word.setPlaceholderText("e.g. bird")
        self.start_from = QtWidgets.QComboBox()
        self.start_from.addItem(ZEROS)
        self.start_from.addItems(list(model.vocabulary))
        self.start_from.setToolTip("Copy the feature values of a word like the new one, then adjust them")
        self.start_from.currentTextChanged.connect(self._on_start_from_changed)
        self.values = [QtWidgets.QLineEdit("0") for _ in model.features]

        form = QtWidgets.QFormLayout()
        form.addRow("&Word", self.word)
        form.addRow("&Start from", self.start_from)
        for name, edit in zip(model.features, self.values, strict=True):
            edit.setToolTip(f"How much the new word has of “{name}”")
            form.addRow(name, edit)
        self.error = QtWidgets.QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color:#E03131;")
        self.error.hide()
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Add")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _on_start_from_changed(self, word: str) -> None:
        row = self.editor.controller.model.vocabulary.get(word)
        for j, edit in enumerate(self.values):
            edit.setText("0" if row is None else repr(float(row[j])))

    def accept(self) -> None:
        """Add the word as one undo command, or say what is wrong and stay open."""
        try:
            self.added_word = self.editor.add_word(self.word.text(), [edit.text() for edit in self.values])
        except ModelError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        super().accept()
