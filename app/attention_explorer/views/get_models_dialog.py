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
OTHER_MODELS = ("Any other model of a family the app knows (BERT, RoBERTa, DistilBERT, GPT-2, Pythia, Llama, Mistral, "
                "Qwen, Phi-3, OLMo 2, Gemma) opens with File ▸ Open model folder… (a Hugging Face folder with "
                "config.json, *.safetensors and tokenizer.json) or File ▸ Open model… (a .gguf file of Llama, "
                "Mistral, Qwen2, Qwen3, Gemma, Gemma 2, Gemma 3, Phi-3, GPT-2, Pythia, OLMo 2, BERT, RoBERTa or "
                "ModernBERT).")


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
    # the page on a line of its own: a label wrapping at a long address can be measured one line short and cut
    return f"Download {listed} (about {model.download_mb} MB) from<br>{_link(model.source)}"


def _place_text(model: KnownModel) -> str:
    if model.is_folder:
        return f"Put them in a folder named <b>{html.escape(model.entry)}</b> in the models folder:"
    return "Put it in the models folder:"


def path_field(path: Path | None = None) -> QtWidgets.QLineEdit:
    """A path to read and copy whole: a long one scrolls in its box instead of being cut by a wrapped label."""
    field = QtWidgets.QLineEdit(str(path) if path else "")
    field.setReadOnly(True)
    field.setCursorPosition(0)
    field.setToolTip(field.text())
    return field


class QtModelHelp(QtWidgets.QGroupBox):
    """One catalog model: found or not (and where), what to download, where to put it."""

    def __init__(self, model: KnownModel, parent: QtWidgets.QWidget | None = None):
        super().__init__(model.name, parent)
        self.model = model
        self.status = QtWidgets.QLabel()
        self.found_at = path_field()
        self.download = QtWidgets.QLabel(_download_text(model))
        self.download.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextBrowserInteraction)
        self.place = QtWidgets.QLabel(_place_text(model))
        self.place_path = path_field(where_to_put(model))
        layout = QtWidgets.QVBoxLayout(self)
        status_row = QtWidgets.QHBoxLayout()
        status_row.addWidget(self.status)
        status_row.addWidget(self.found_at, 1)
        layout.addLayout(status_row)
        for widget in (self.download, self.place, self.place_path):
            layout.addWidget(widget)
        self.pip = None
        if not running_frozen():  # from Python there is a shorter way
            self.pip = QtWidgets.QLabel(f"Or, with Python: <tt>{html.escape(model.install)}</tt>")
            self.pip.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(self.pip)

    def show_location(self, location: Path | None) -> None:
        self.found_at.setVisible(location is not None)
        if location is None:
            self.status.setText(f'<span style="color:{MISSING_COLOUR}">Not found yet.</span>')
        else:
            self.status.setText(f'<span style="color:{FOUND_COLOUR}">✓ Found:</span>')
            self.found_at.setText(str(location))
            self.found_at.setCursorPosition(0)
            self.found_at.setToolTip(str(location))


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
        self.folders = QtWidgets.QLabel(f"The app looks in {where}, then in the models' Python packages:")
        self.folder_fields = [path_field(folder) for folder in folders]
        others = QtWidgets.QLabel(OTHER_MODELS)
        others.setWordWrap(True)
        self.message = QtWidgets.QLabel()
        self.message.setObjectName("getModelsMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        action = QtWidgets.QDialogButtonBox.ButtonRole.ActionRole
        self.open_folder_button = buttons.addButton("&Open models folder", action)
        self.open_folder_button.setToolTip("Make the models folder if needed and show it in the file manager")
        self.look_again_button = buttons.addButton("&Look again", action)
        self.look_again_button.setToolTip("Look for the models' files again and update the model list")
        self.open_folder_button.clicked.connect(self.open_models_folder)
        self.look_again_button.clicked.connect(self.look_again)
        buttons.rejected.connect(self.close)

        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(intro)
        for help_box in self.models.values():
            layout.addWidget(help_box)
        for widget in (self.folders, *self.folder_fields, others, self.message):
            layout.addWidget(widget)
        layout.addWidget(buttons)
        self.setMinimumWidth(720)  # a models folder's usual path fits its box whole
        self._show_found()

    def look_again(self) -> None:
        """Look for the files again, show what was found and have the window's model list show it too."""
        before, self.found = self.found, installed_models()
        self._show_found()
        self._refresh_model_list()
        new = [name for name in self.found if name not in before]
        gone = [name for name in before if name not in self.found]
        if new:
            self._say(f"Found {' and '.join(new)}: choose {'it' if len(new) == 1 else 'them'} "
                                 f"in the model list.")
        elif gone:
            self._say(f"{' and '.join(gone)}: the files are no longer where they were.")

    def open_models_folder(self) -> None:
        """Show the user's models folder in the file manager, making it first."""
        folder = user_models_folder()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            reason = "something that is not a folder is in the way" if isinstance(error, FileExistsError) \
                else (error.strerror or str(error))
            self._say(f"Cannot make the models folder {folder}: {reason}.")
            return
        if not folder.is_dir():
            self._say(f"Cannot make the models folder {folder}: something that is not a folder is "
                                 f"in the way.")
            return
        if open_with_desktop(QtCore.QUrl.fromLocalFile(str(folder))):
            self._say(f"Opened {folder}: put the files there, then come back here.")
        else:
            self._say(f"No file manager could be started; the models folder is {folder}")

    def _open_link(self, url: str) -> None:
        if not open_with_desktop(QtCore.QUrl(url)):
            self._say(f"No web browser could be started; the address is {url}")

    def _show_found(self) -> None:
        for name, help_box in self.models.items():
            help_box.show_location(self.found.get(name))
        self._fit_height()

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self._fit_height()

    def _fit_height(self) -> None:
        """Grow to the height the texts need at the present width. Left to itself the dialog may open, or
        stay after a line is added, at its minimum height, where the two-line download texts are
        squeezed into one."""
        needed = self.layout().totalHeightForWidth(max(self.width(), self.minimumWidth()))
        if self.height() < needed:
            self.resize(max(self.width(), self.minimumWidth()), needed)

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
