"""Files onto the window: drop (or open) an exported figure, a view file, a model folder, a .gguf or a
model .json and it opens as it was; File ▸ Open recent; File ▸ Save view… and Open view….

Whatever is dropped is read as untrusted (view_file, engine.safe_read): one message names the file
and says what is wrong, and the window keeps what it had.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from .engine import EngineError, ModelError
from .export import ExportError
from .view_file import FIGURE_SUFFIXES, VIEW_SUFFIX

RECENT_KEY = "recent/paths"
MAX_RECENT = 10
OPEN_FILTER = ("Views, figures and models (*.aeview *.png *.svg *.pdf *.json *.gguf);;"
               "Attention Explorer view (*.aeview);;Exported figure (*.png *.svg *.pdf);;Model (*.json *.gguf)")

class WindowFiles(QtCore.QObject):
    """What attach_window_files added to the window: its drop target, its menu entries and recent list."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self._recent_memory: list[str] = []  # without settings (tests), remembered for this run
        window.setAcceptDrops(True)
        window.installEventFilter(self)
        self.open_view_action = window._action("Open &view or figure…", self.open_dialog, "Ctrl+Shift+O",
                                               "Open a saved view, or an exported PNG, SVG or PDF as it was made")
        self.save_view_action = window._action("Save &view…", self.save_dialog, "Ctrl+Alt+S",
                                               "Save what the window shows (model, text, layer, head, reading, "
                                               "focus) to reopen it later")
        self.recent_menu = QtWidgets.QMenu("Open &recent", window)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        file_menu = window.menus["File"]
        file_menu.insertActions(window.export_action, [self.open_view_action, self.save_view_action])
        file_menu.insertMenu(window.export_action, self.recent_menu)
        for signal in (window.controller.model_source_changed, window.controller.model_changed):
            signal.connect(self._remember_model)

    # --- dropping ---------------------------------------------------------------------------------
    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind in (QtCore.QEvent.Type.DragEnter, QtCore.QEvent.Type.DragMove):
            if _local_paths(event.mimeData()):
                event.acceptProposedAction()
                return True
        elif kind == QtCore.QEvent.Type.Drop:
            paths = _local_paths(event.mimeData())
            if paths:
                event.acceptProposedAction()
                self.open_path(paths[0])
                return True
        return super().eventFilter(watched, event)

    # --- opening ----------------------------------------------------------------------------------
    def open_path(self, path: str) -> bool:
        """Open a view file, a figure's view, or a model, whichever `path` is."""
        from .engine.safe_read import parse_json, read_user_text
        from .view_file import ViewFileError, is_view_json, read_view

        target = Path(path)
        suffix = target.suffix.lower()
        try:
            if target.is_dir() or suffix == ".gguf":
                return self._open_model(path)
            if suffix == ".json":
                data = parse_json(read_user_text(target, "JSON file"), target.name, "JSON file")
                if not is_view_json(data):
                    return self._open_model(path)
            if suffix in (VIEW_SUFFIX, ".json", *FIGURE_SUFFIXES):
                return self.open_view(read_view(target), path)
            raise ViewFileError(f"{target.name}: not a file this app opens: a view (.aeview), an exported figure "
                                "(.png, .svg, .pdf), a model (.json, .gguf) or a model folder")
        except (EngineError, OSError) as exc:
            self._refuse(str(exc))
            return False

    def open_view(self, state, path: str = "") -> bool:
        """Open a ViewState in the window (a real model loads in the background first)."""
        from .figure_controller import open_state

        window = self.window
        if not window.model_editor.confirm_discard("opening a view"):
            return False
        try:
            open_state(window.controller, state, lambda notes: self._opened(state, path, notes))
        except (EngineError, ModelError) as exc:
            self._refuse(str(exc))
            return False
        return True

    def _opened(self, state, path: str, notes: list[str]) -> None:
        """The views' own settings, the view brought into sight, and a line saying what opened."""
        window = self.window
        if state.span is not None:
            window.heatmap.set_colour_scale(state.span)
        window.arcs.all_heads.setChecked(state.all_heads or state.view != "arcs")
        if state.strongest is not None:
            window.arcs.strongest.setValue(state.strongest)
        if state.view == "model" and window.pretrained is not None:
            window.pretrained.dock.show()
            if state.census is not None and not window.pretrained.model_view.show_census_if_measured(state.census):
                notes = [*notes, f"its cells were coloured by the census's {state.census.title}: run View ▸ Head "
                                 f"census… on the same texts to colour them so"]
        elif state.view == "steps":
            window.steps_dock.show()
        if path:
            self.remember(path)
        message = f"Opened the view of {Path(path).name}" if path else "Opened the view"
        window.statusBar().showMessage(". ".join([message, *notes]), 10_000)

    def _open_model(self, path: str) -> bool:
        return self.window.open_model(path)  # it says why when it cannot

    def _refuse(self, message: str) -> None:
        QtWidgets.QMessageBox.warning(self.window, "Cannot open", f"{message}\n\nWhat the window shows is unchanged.")

    def open_dialog(self) -> None:
        from .export_files import last_folder, remember_folder

        settings = self.window.settings
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.window, "Open a view or a figure",
                                                        last_folder(settings, "open-view"), OPEN_FILTER)
        if path:
            remember_folder(settings, "open-view", path)
            self.open_path(path)

    # --- saving -----------------------------------------------------------------------------------
    def save_dialog(self) -> None:
        from .export_files import ask_save_path

        window = self.window
        if window.controller.trace is None:
            QtWidgets.QMessageBox.warning(window, "Nothing to save", window.controller.error or "Type a text first.")
            return
        exports = window._exports()
        path = ask_save_path(window, window.settings, "view", exports.default_stem("heatmap"), (VIEW_SUFFIX,),
                             VIEW_SUFFIX, "Save view")
        if path:
            self.save_view(path)

    def save_view(self, path: str) -> bool:
        from .view_file import write_view_file

        window = self.window
        try:
            write_view_file(path, window._exports().state_for("heatmap"))
        except ExportError as exc:
            QtWidgets.QMessageBox.warning(window, "Save failed", f"{exc}\n\nNothing was written.")
            return False
        self.remember(path)
        window.statusBar().showMessage(f"Saved the view as {Path(path).name}", 5000)
        return True

    # --- recent ------------------------------------------------------------------------------------
    def recent(self) -> list[str]:
        settings = self.window.settings
        if settings is None:
            return list(self._recent_memory)
        value = settings.value(RECENT_KEY)
        items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        return [item for item in items if isinstance(item, str)][:MAX_RECENT]

    def remember(self, path: str) -> None:
        entry = str(Path(path).resolve()) if Path(path).exists() else path
        items = [entry, *(item for item in self.recent() if item != entry)][:MAX_RECENT]
        if self.window.settings is None:
            self._recent_memory = items
        else:
            self.window.settings.setValue(RECENT_KEY, items)

    def _remember_model(self, *_):
        source = self.window.controller.model_source
        if Path(source).exists():  # a file or folder (not a built-in or listed model's name)
            self.remember(source)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        items = self.recent()
        for item in items:
            action = self.recent_menu.addAction(_shown_name(item))
            action.setToolTip(item)
            action.triggered.connect(lambda _=False, p=item: self.open_path(p))
        if not items:
            self.recent_menu.addAction("(nothing yet)").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear the list", self._clear_recent)

    def _clear_recent(self) -> None:
        if self.window.settings is None:
            self._recent_memory = []
        else:
            self.window.settings.remove(RECENT_KEY)


def _local_paths(mime: QtCore.QMimeData) -> list[str]:
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()] if mime.hasUrls() else []


def _shown_name(path: str) -> str:
    target = Path(path)
    return f"{target.name}  —  {target.parent}" if target.name else path


def attach_window_files(window) -> WindowFiles:
    return WindowFiles(window)

