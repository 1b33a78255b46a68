"""The window's exports: the Export dialog, the Save dialog behind it, the clipboard, and the files they
write. A figure is drawn from a copy of the window's state by a fresh view (figure.py), never from the
window's own views: the window is left exactly as it was, and the picture is the one the command line
would draw (the dialog shows that command).
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets

from .controller import LOOKED_AT
from .export import ExportCancelled, ExportError, write_matrix_csv, write_trace_json
from .export_files import ask_save_path
from .figure import WindowPart
from .figure_command import command_for
from .figure_controller import FigureController, capture_state, hovered_focus, pinned_focus
from .figure_options import FigureOptions, FigureSize
from .figure_state import ViewState
from .figure_text import default_file_stem
from .headless import destroy_now

GRIDS = {"grid-heads": "heads", "grid-layers": "layers"}
DEFAULT_SUFFIX = {"csv": ".csv", "json": ".json", "html": ".html"}
CLIPBOARD_OPTIONS = FigureOptions(size=FigureSize(scale=2))
UNSAVED_NOTE = "  # the model's unsaved edits are not in this command: save the model and use its file"


class WindowExport:
    """What MainWindow's export commands do (app.py attaches it and delegates)."""

    def __init__(self, window):
        self.window = window
        self._on_screen: tuple[int, str] | None = None  # the word in focus as the dialog opened

    def _focus(self, keep_hover: bool):
        """The word a figure pins: the pinned one, or (as on screen) the one in focus when the
        dialog opened: the mouse has left the view by the time Save is pressed."""
        if not keep_hover:
            return pinned_focus(self.window.controller)
        return self._on_screen if self._on_screen is not None else hovered_focus(self.window.controller)

    # --- what would be drawn ----------------------------------------------------------------------
    def state_for(self, kind: str, keep_hover: bool = False) -> ViewState:
        """The window's state for the figure `kind`, with the views' own settings."""
        window = self.window
        view = "heatmap" if kind in GRIDS or kind == "html" else kind
        return capture_state(window.controller, view, span=window.heatmap.colour_scale(),
                             all_heads=window.arcs.all_heads.isChecked(), strongest=window.arcs.strongest.value(),
                             grid=GRIDS.get(kind), focus=self._focus(keep_hover),
                             census=window.pretrained.model_view.census_choice())

    def figure_copy(self, focus: tuple[int, str] | None = ...) -> FigureController:
        """A controller for a figure of the window, with the census the model view shows at hand."""
        copy = FigureController.copy_of(self.window.controller, focus=focus)
        cells = self.window.pretrained.model_view.census_cells
        if cells is not None:
            copy.census_result, copy.census_texts = cells.result, cells.choice.texts
        return copy

    def window_part(self) -> WindowPart | None:
        """The rows and columns the window's heatmap shows, when it does not show them all."""
        heatmap = self.window.heatmap
        if heatmap.shown_matrix() is None or not heatmap.is_zoomable():
            return None
        rows, columns = heatmap.visible_cells()
        n_rows, n_cols = heatmap.shown_matrix().shape
        if (len(rows), len(columns)) == (n_rows, n_cols):
            return None
        x_range, y_range = heatmap.view.viewRange()
        return WindowPart(heatmap.size(), tuple(x_range), tuple(y_range), rows, columns)

    def visible_text(self) -> str:
        part = self.window_part()
        if part is None:
            return ""
        return (f"rows {part.rows.start + 1}–{part.rows.stop}, columns {part.columns.start + 1}–{part.columns.stop} "
                f"of {self.window.heatmap.shown_matrix().shape[0]}")

    def default_stem(self, kind: str) -> str:
        controller = self.window.controller
        name = controller.real_model.name if controller.is_real else controller.model.name
        return default_file_stem(self.state_for(kind), name)

    def command_for(self, choice) -> str:
        """The command line that makes the figure of the dialog's `choice`."""
        if self.window.controller.trace is None:
            return ""
        state = self.state_for(choice.kind, choice.options.keep_hover)
        if choice.options.visible_only:
            return ""  # the part on screen depends on the window: no command draws it
        text = command_for(state, choice.options, f"{self.default_stem(choice.kind)}{choice.suffix}")
        return text + (UNSAVED_NOTE if not state.real and self.window.model_editor.is_modified else "")

    # --- the dialogs ------------------------------------------------------------------------------
    def dialog(self, kind: str = "heatmap") -> None:
        from .views.export_dialog import EXPORT_KINDS, QtExportDialog

        window = self.window
        self._on_screen = hovered_focus(window.controller)
        dialog = QtExportDialog(window, kind if kind in EXPORT_KINDS else "heatmap", command_for=self.command_for,
                                visible_part=self.visible_text(), hovered=self._hovered_word())
        try:
            if dialog.exec() != QtWidgets.QDialog.DialogCode.Accepted:
                return
            choice = dialog.chosen()
            path = ask_save_path(window, window.settings, choice.kind, self.default_stem(choice.kind),
                                 EXPORT_KINDS[choice.kind][2], choice.suffix)
            if path:
                self.export_to(choice.kind, path, choice.options)
        finally:
            dialog.deleteLater()
            self._on_screen = None

    def _hovered_word(self) -> str:
        """The word under the mouse, "" when none: a word looked at may be another text's (an
        encoder–decoder's source, past the target's last token)."""
        controller = self.window.controller
        trace, hovered = controller.trace, controller.hovered
        if trace is None or hovered is None:
            return ""
        return trace.labels_of(controller.focus_role == LOOKED_AT)[hovered]

    # --- writing ----------------------------------------------------------------------------------
    def export_to(self, kind: str, path: str, options: FigureOptions) -> bool:
        """Write one export; on failure say why in a message box and return False."""
        window, controller = self.window, self.window.controller
        try:
            if controller.trace is None:
                raise ExportError(controller.error or "there is nothing to export yet")
            if kind == "csv":
                write_matrix_csv(path, controller.trace, controller.matrix, controller.head)
            elif kind == "json":
                write_trace_json(path, controller.trace)
            else:
                if kind in ("model", "grid-layers") and not controller.is_real:
                    raise ExportError("that figure shows a real model's layers: open one first")
                if not Path(path).suffix:
                    path += DEFAULT_SUFFIX.get(kind, ".png")
                self._write_figure(kind, path, options)
        except ExportCancelled:
            window.statusBar().showMessage("Export cancelled; nothing was written", 5000)
            return False
        except ExportError as exc:
            QtWidgets.QMessageBox.warning(window, "Export failed", f"{exc}\n\nNothing was written.")
            return False
        window.statusBar().showMessage(f"Exported {Path(path).name}", 5000)
        return True

    def _write_figure(self, kind: str, path: str, options: FigureOptions) -> None:
        from .engine import EngineError
        from .figure_files import write_figure
        from .views.export_progress import QtExportProgress

        state = self.state_for(kind, options.keep_hover)
        part = self.window_part() if options.visible_only and kind == "heatmap" else None
        copy = self.figure_copy(focus=self._focus(options.keep_hover))
        progress = QtExportProgress(f"the {kind} as an animated GIF", self.window) \
            if Path(path).suffix.lower() == ".gif" else None
        try:
            write_figure(copy, state, options, path, window_part=part, progress=progress)
        except EngineError as exc:
            raise ExportError(str(exc)) from None
        finally:
            if progress is not None:
                progress.close()
                progress.deleteLater()
            destroy_now(copy)

    def copy_image(self, kind: str = "heatmap") -> None:
        """The figure of `kind` on the clipboard, as an image at 2×."""
        from .figure_files import clipboard_image

        window = self.window
        if window.controller.trace is None:
            return
        kind = kind if kind in ("heatmap", "arcs", "steps", "model", "bars") else "heatmap"
        copy = self.figure_copy()
        try:
            image = clipboard_image(copy, self.state_for(kind), CLIPBOARD_OPTIONS)
        except ExportError as exc:
            QtWidgets.QMessageBox.warning(window, "Copy failed", str(exc))
            return
        finally:
            destroy_now(copy)
        QtWidgets.QApplication.clipboard().setImage(image)
        window.statusBar().showMessage("Image copied to the clipboard", 4000)
