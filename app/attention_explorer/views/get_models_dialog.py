"""Help ▸ Get models…: how to get the two catalog models without Python.

For each model: whether its files were found (and where), what to download and from where, and
where to put it; a button opens the models folder (making it first), and the model list is looked
at again when asked and whenever the dialog comes back to the front (the user has just copied the
files in a file manager). Not modal, so the files can be moved while it is open.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ..engine.pretrained.catalog import KNOWN_MODELS, KnownModel, installed_models, where_to_put
from ..engine.pretrained.model_folders import models_folders, running_frozen, user_models_folder
from .desktop_open import open_with_desktop

FOUND_COLOUR, MISSING_COLOUR = "#2F9E44", "#E03131"
INTRO = ("Two small real models open from the model list once their files are on this computer: download "
         "them once and put them in the models folder. Nothing else needs installing.")
OTHER_MODELS = ("Any other BERT, GPT-2 or Llama model opens with File ▸ Open model folder… (a Hugging Face "
                "folder with config.json, *.safetensors and tokenizer.json) or File ▸ Open model… (a .gguf file).")


def not_found_tip(model: KnownModel) -> str:
    """The model list's tooltip for a model whose files were not found."""
    if running_frozen():
        return "Not in the models folder: Help ▸ Get models… says what to download and where to put it"
    return f"Install it with: {model.install}"


def _link(url: str, text: str | None = None) -> str:
    return f'<a href="{html.escape(url)}">{html.escape(text or url)}</a>'


def _download_text(model: KnownModel) -> str:
    files = [_link(model.download_url(file), file) for file in model.files]
    listed = files[0] if len(files) == 1 else f"{', '.join(files[:-1])} and {files[-1]}"
    return f"Download {listed} (about {model.download_mb} MB) from {_link(model.source)}"


def _place_text(model: KnownModel) -> str:
    place = html.escape(str(where_to_put(model)))
    if model.is_folder:
        return f"Put them in a folder named <b>{html.escape(model.entry)}</b> in the models folder:<br><tt>{place}</tt>"
    return f"Put it in the models folder: <tt>{place}</tt>"


class QtModelHelp(QtWidgets.QGroupBox):
    """One catalog model: found or not, what to download, where to put it."""

    def __init__(self, model: KnownModel, parent: QtWidgets.QWidget | None = None):
        super().__init__(model.name, parent)
        self.model = model
        self.status = QtWidgets.QLabel()
        self.download = QtWidgets.QLabel(_download_text(model))
        self.place = QtWidgets.QLabel(_place_text(model))
        layout = QtWidgets.QVBoxLayout(self)
        for label in (self.status, self.download, self.place):
            label.setWordWrap(True)
            label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextBrowserInteraction)
            layout.addWidget(label)
        self.pip = None
        if not running_frozen():  # from Python there is a shorter way
            self.pip = QtWidgets.QLabel(f"Or, with Python: <tt>{html.escape(model.install)}</tt>")
            self.pip.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(self.pip)

    def show_location(self, location: Path | None) -> None:
        if location is None:
            self.status.setText(f'<span style="color:{MISSING_COLOUR}">Not found yet.</span>')
        else:
            self.status.setText(f'<span style="color:{FOUND_COLOUR}">✓ Found:</span> '
                                f"<tt>{html.escape(str(location))}</tt>")


class QtGetModelsDialog(QtWidgets.QDialog):
    """`refresh_model_list` is called after every look, so the window's model list shows what was found."""

    def __init__(self, refresh_model_list: Callable[[], None], parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("getModelsDialog")
        self.setWindowTitle("Get models")
        self._refresh_model_list = refresh_model_list
        self.found: dict[str, Path] = installed_models()

        intro = QtWidgets.QLabel(INTRO)
        intro.setWordWrap(True)
        self.models = {model.name: QtModelHelp(model) for model in KNOWN_MODELS}
        for help_box in self.models.values():
            for label in (help_box.download, help_box.place):
                label.linkActivated.connect(self._open_link)
        folders = models_folders()
        where = "these folders" if len(folders) > 1 else "the models folder"
        listed = "<br>".join(f"<tt>{html.escape(str(folder))}</tt>" for folder in folders)
        self.folders = QtWidgets.QLabel(f"The app looks in {where}, then in the models' Python packages:<br>{listed}")
        self.folders.setWordWrap(True)
        self.folders.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        others = QtWidgets.QLabel(OTHER_MODELS)
        others.setWordWrap(True)
        self.message = QtWidgets.QLabel()
        self.message.setObjectName("getModelsMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        action = QtWidgets.QDialogButtonBox.ButtonRole.ActionRole
        self.open_folder_button = buttons.addButton("Open models folder", action)
        self.open_folder_button.setToolTip("Make the models folder if needed and show it in the file manager")
        self.look_again_button = buttons.addButton("Look again", action)
        self.look_again_button.setToolTip("Look for the models' files again and update the model list")
        self.open_folder_button.clicked.connect(self.open_models_folder)
        self.look_again_button.clicked.connect(self.look_again)
        buttons.rejected.connect(self.close)

        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(intro)
        for help_box in self.models.values():
            layout.addWidget(help_box)
        for label in (self.folders, others, self.message):
            layout.addWidget(label)
        layout.addWidget(buttons)
        self.setMinimumWidth(560)
        self._show_found()

    def look_again(self) -> None:
        """Look for the files again, show what was found and have the window's model list show it too."""
        before, self.found = self.found, installed_models()
        self._show_found()
        self._refresh_model_list()
        new = [name for name in self.found if name not in before]
        gone = [name for name in before if name not in self.found]
        if new:
            self.message.setText(f"Found {' and '.join(new)}: choose {'it' if len(new) == 1 else 'them'} "
                                 f"in the model list.")
        elif gone:
            self.message.setText(f"{' and '.join(gone)}: the files are no longer where they were.")

    def open_models_folder(self) -> None:
        """Show the user's models folder in the file manager, making it first."""
        folder = user_models_folder()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            reason = "something that is not a folder is in the way" if isinstance(error, FileExistsError) \
                else (error.strerror or str(error))
            self.message.setText(f"Cannot make the models folder {folder}: {reason}.")
            return
        if not folder.is_dir():
            self.message.setText(f"Cannot make the models folder {folder}: something that is not a folder is "
                                 f"in the way.")
            return
        if open_with_desktop(QtCore.QUrl.fromLocalFile(str(folder))):
            self.message.setText(f"Opened {folder}: put the files there, then come back here.")
        else:
            self.message.setText(f"No file manager could be started; the models folder is {folder}")

    def _open_link(self, url: str) -> None:
        if not open_with_desktop(QtCore.QUrl(url)):
            self.message.setText(f"No web browser could be started; the address is {url}")

    def _show_found(self) -> None:
        for name, help_box in self.models.items():
            help_box.show_location(self.found.get(name))

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.WindowActivate:  # back from the file manager
            self.look_again()
        return super().event(event)


def show_get_models(window) -> QtGetModelsDialog:
    """Open the window's Get models dialog (one per window), looking at the models folder afresh."""
    dialog = window.findChild(QtGetModelsDialog)
    if dialog is None:
        dialog = QtGetModelsDialog(window.options_bar.refresh_real_models, window)
    dialog.look_again()
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
