"""Editing the current model: every change is one undo command, and unsaved edits are never lost.

ModelEditor owns the undo stack (so Ctrl+Z walks edits back exactly), knows whether the model has
unsaved edits (the stack's clean state), saves to the model's file, and asks Save / Discard / Cancel
before anything drops unsaved edits. The checks live in engine.model_edits; an edit is checked
before it is pushed, so the stack never holds an edit that failed and the model is never half-edited.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from .controller import Controller
from .engine import ModelError, OptionsError, builtin_model_names, model_edits
from .engine.model import model_to_json
from .export import ExportError, write_text

MODEL_FILES = "Attention Explorer model (*.json)"


class _EditCommand(QtGui.QUndoCommand):
    """One edit of the model that was current when it was made; each step ends in a recompute.

    The stack is cleared whenever the model is replaced, so `model` is always the current one.
    """

    def __init__(self, controller: Controller, text: str):
        super().__init__(text)
        self.controller = controller
        self.model = controller.model

    def redo(self) -> None:
        self.apply()
        self.controller.notify_model_edited()

    def undo(self) -> None:
        self.revert()
        self.controller.notify_model_edited()


class SetValueCommand(_EditCommand):
    def __init__(self, controller: Controller, field: str, row: int, col: int, new: float, old: float):
        where = model_edits.cell_name(controller.model, field, row, col)
        super().__init__(controller, f"set {where} to {new:g}")
        self.field, self.row, self.col, self.new, self.old = field, row, col, new, old

    def apply(self) -> None:
        model_edits.set_value(self.model, self.field, self.row, self.col, self.new)

    def revert(self) -> None:
        model_edits.set_value(self.model, self.field, self.row, self.col, self.old)


class AddWordCommand(_EditCommand):
    def __init__(self, controller: Controller, word: str, embedding: list[float]):
        super().__init__(controller, f"add the word {word!r}")
        self.word, self.embedding = word, embedding

    def apply(self) -> None:
        model_edits.add_word(self.model, self.word, self.embedding)

    def revert(self) -> None:
        model_edits.remove_word(self.model, self.word)


class RenameFeatureCommand(_EditCommand):
    def __init__(self, controller: Controller, index: int, new: str, old: str):
        super().__init__(controller, f"rename {old!r} to {new!r}")
        self.index, self.new, self.old = index, new, old

    def apply(self) -> None:
        model_edits.rename_feature(self.model, self.index, self.new)

    def revert(self) -> None:
        model_edits.rename_feature(self.model, self.index, self.old)


class ModelEditor(QtCore.QObject):
    """The edits, the undo stack, the model's file and its unsaved state; the actions for menus.

    `window` is the parent of the dialogs this object opens (save as, unsaved changes, errors).
    """

    document_changed = QtCore.Signal()  # the model's name, file or unsaved state changed: retitle

    def __init__(self, controller: Controller, window: QtWidgets.QWidget):
        super().__init__(window)
        self.controller = controller
        self.window = window
        self.undo_stack = QtGui.QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self.document_changed)
        controller.model_changed.connect(self._on_model_replaced)
        controller.model_source_changed.connect(self._on_source_changed)

        keys = QtGui.QKeySequence
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcuts(keys.keyBindings(keys.StandardKey.Undo))
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        redo_keys = keys.keyBindings(keys.StandardKey.Redo)  # Ctrl+Y on Windows, Ctrl+Shift+Z elsewhere
        if keys("Ctrl+Shift+Z") not in redo_keys:
            redo_keys.append(keys("Ctrl+Shift+Z"))
        self.redo_action.setShortcuts(redo_keys)
        style, pixmap = QtWidgets.QApplication.style(), QtWidgets.QStyle.StandardPixmap
        self.undo_action.setIcon(QtGui.QIcon.fromTheme(QtGui.QIcon.ThemeIcon.EditUndo,
                                                       style.standardIcon(pixmap.SP_ArrowBack)))
        self.redo_action.setIcon(QtGui.QIcon.fromTheme(QtGui.QIcon.ThemeIcon.EditRedo,
                                                       style.standardIcon(pixmap.SP_ArrowForward)))
        self.save_action = self._action("&Save model", self.save, keys.StandardKey.Save,
                                        "Save the model to its file (a built-in model asks where)")
        self.save_as_action = self._action("Save model &as…", self.save_as, "Ctrl+Shift+S",
                                           "Save the model to a new file")
        self.reset_action = self._action("Reset model", self.reset, None, "")
        self._on_source_changed()

    def _action(self, text: str, slot, shortcut, tip: str) -> QtGui.QAction:
        action = QtGui.QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QtGui.QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.triggered.connect(lambda: slot())
        return action

    # --- state ----------------------------------------------------------------------------------
    @property
    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def file_path(self) -> Path | None:
        """The file the model saves to; None for a built-in model, which is never overwritten."""
        source = self.controller.model_source
        return None if source in builtin_model_names() else Path(source)

    def document_name(self) -> str:
        """What the title bar calls the model: its file's name, or the built-in model's name."""
        path = self.file_path
        return path.name if path else self.controller.model.name

    def _reset_source(self) -> str:
        """Reset goes back to the built-in of the same name if there is one, else to the saved file."""
        model, source = self.controller.model, self.controller.model_source
        if source not in builtin_model_names() and model.name in builtin_model_names():
            return model.name
        return source

    def _on_model_replaced(self, *_) -> None:
        self.undo_stack.clear()  # the commands edit the model that is gone
        self._on_source_changed()

    def _on_source_changed(self, *_) -> None:
        built_in = self._reset_source() in builtin_model_names()
        self.reset_action.setText("Reset to built-in" if built_in else "Revert to saved")
        self.reset_action.setStatusTip("Drop every edit: go back to the model as shipped" if built_in
                                       else "Drop every edit: go back to the model as last saved")
        self.document_changed.emit()

    # --- edits: each is checked, then pushed as one command --------------------------------------
    def set_value(self, field: str, row: int, col: int, value: str | float) -> bool:
        """Put a typed number in one cell; False when it equals the number already there."""
        model = self.controller.model
        new = model_edits.check_value(model, field, row, col, value)
        old = float(model_edits.values(model, field)[row, col])
        if new == old:
            return False
        self.undo_stack.push(SetValueCommand(self.controller, field, row, col, new, old))
        return True

    def add_word(self, word: str, row: list) -> str:
        """Add a word with its feature values (typed text or numbers); returns the word as stored."""
        name, embedding = model_edits.check_new_word(self.controller.model, word, row)
        self.undo_stack.push(AddWordCommand(self.controller, name, embedding.tolist()))
        return name

    def rename_feature(self, index: int, name: str) -> bool:
        model = self.controller.model
        new = model_edits.check_feature_name(model, index, name)
        if new == model.features[index]:
            return False
        self.undo_stack.push(RenameFeatureCommand(self.controller, index, new, model.features[index]))
        return True

    # --- files ----------------------------------------------------------------------------------
    def save(self) -> bool:
        """Save to the model's file, or ask for one; False when nothing was saved."""
        path = self.file_path
        return self.save_as() if path is None else self._write(path)

    def save_as(self) -> bool:
        from .export_files import last_folder, remember_folder

        settings = getattr(self.window, "settings", None)
        suggested = str(self.file_path or Path(last_folder(settings, "model")) / f"{self.controller.model.name}.json")
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.window, "Save model as", suggested, MODEL_FILES)
        if not path:
            return False
        remember_folder(settings, "model", path)
        path = Path(path)
        return self._write(path if path.suffix else path.with_suffix(".json"))

    def _write(self, path: Path) -> bool:
        try:
            write_text(path, model_to_json(self.controller.model))
        except ExportError as exc:
            QtWidgets.QMessageBox.warning(self.window, "Cannot save model",
                                          f"{exc}\n\nYour edits are kept; save them somewhere else.")
            return False
        self.controller.set_model_source(str(path))
        self.undo_stack.setClean()
        return True

    def confirm_discard(self, doing: str = "closing it") -> bool:
        """Ask Save / Discard / Cancel when there are unsaved edits; True means go ahead."""
        if not self.is_modified:
            return True
        buttons = QtWidgets.QMessageBox.StandardButton
        answer = QtWidgets.QMessageBox.question(
            self.window, "Unsaved edits",
            f"The model {self.document_name()} has edits that are not saved.\n\nSave them before {doing}?",
            buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
        if answer == buttons.Save:
            return self.save()
        return answer == buttons.Discard

    def reset(self) -> bool:
        """Reload the pristine model, keeping the sentence and, where they fit, the options."""
        if not self.confirm_discard("resetting it"):
            return False
        controller = self.controller
        options = controller.options
        try:
            controller.open_model(self._reset_source(), controller.sentence)
        except ModelError as exc:
            QtWidgets.QMessageBox.warning(self.window, "Cannot reset model", f"{exc}\n\nThe model is unchanged.")
            return False
        with contextlib.suppress(OptionsError):  # the saved file may have another shape
            controller.set_options(options)
        return True
