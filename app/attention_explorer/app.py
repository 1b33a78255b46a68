"""The main window and the one place where the controller and the views are wired together."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from . import __version__
from .application import APP_NAME
from .controller import Controller
from .editing import ModelEditor
from .engine import SQUARE_MATRICES, ModelError
from .engine.steps import ARCS_FROM_STEP, STEPS, heatmap_matrix, step_index
from .labs.lesson_list import LESSONS
from .pretrained_window import attach_pretrained
from .resources_path import resource_path
from .settings import restore_settings, save_settings
from .views import theme
from .views.arc_diagram import QtArcDiagram
from .views.chips_area import QtChipsArea
from .views.elided_label import ElidedLabel
from .views.get_models_dialog import show_get_models
from .views.heatmap import QtHeatmap
from .views.layout_seals import LayoutSeal
from .views.model_editor import model_editor_dock
from .views.options_bar import MATRIX_NAMES, QtOptionsBar
from .views.row_bars import QtRowBars
from .views.sentence_box import QtSentenceBox
from .views.step_gate import QtStepGate
from .views.step_timeline import QtStepTimeline
from .views.token_chips import QtTokenChips
from .window_files import attach_window_files

if TYPE_CHECKING:
    from .labs.lessons_window import QtLessonsWindow
    from .views.tour import QtTour

SHORTCUTS = (
    ("Ctrl+E", "Export the heatmap, the arcs, the matrix or the trace"),
    ("Ctrl+Shift+C", "Copy the heatmap as an image"),
    ("Ctrl+O", "Open a model file"),
    ("Ctrl+S / Ctrl+Shift+S", "Save the model / save it as a new file"),
    ("Ctrl+Z / Ctrl+Shift+Z", "Undo / redo an edit of the model"),
    ("Esc", "Unpin the pinned word; in the sentence box (or Enter): done typing"),
    ("Space", "Play or pause the steps (while not typing in the sentence)"),
    ("← / →", "Step back / forward"),
    ("Home / End", "First / last step"),
    ("+ / − / 0", "Zoom a long sentence's heatmap in, out, or fit it all (after a click on it)"),
    ("Page Up / Down", "Move a zoomed heatmap by rows; with Shift, by columns"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
)


FRAME_PX = (10, 48)     # what a window's frame and title bar usually add around it
SHORT_WINDOW_PX = 900   # in a window less tall than this the step tables start folded away
STEPS_DOCK_PX = 340     # the steps dock's height with its tables: every row of a short sentence
STEPS_DOCK_SHARE = 0.4  # ... but never more of the window's height than this


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self, controller: Controller, settings: QtCore.QSettings | None = None):
        super().__init__()
        # smooth curves and bars in every plot of the app; a curve drawn as one path, never as segments
        # from an array's memory (views/line_array.first_of says why that can crash)
        pg.setConfigOptions(antialias=True, segmentedLineMode="off")
        self.controller = controller
        self.settings = settings
        self.setWindowTitle(APP_NAME)
        icon = resource_path("icons", "attention-explorer.svg")
        if icon.exists():
            self.setWindowIcon(QtGui.QIcon(str(icon)))

        self.sentence_box = QtSentenceBox(controller)
        self.chips = QtTokenChips(controller)
        # one line in the status bar, cut with … at the window's edge (the full text is its tooltip): a
        # wrapping line would change the height of everything above it as the sentence changes, and one
        # cut without a mark read as whole ("Left out (unknown): …, day, lo" on a long sentence)
        self.status_line = ElidedLabel(controller.status)
        self.status_line.setObjectName("statusLine")
        self.heatmap = QtHeatmap(controller)
        self.row_bars = QtRowBars(controller)
        self.arcs = QtArcDiagram(controller)
        self.options_bar = QtOptionsBar(controller)
        self.model_editor = ModelEditor(controller, self)
        self.model_editor_dock = model_editor_dock(self.model_editor, self)
        self.timeline = QtStepTimeline(controller)
        self.views = {"heatmap": self.heatmap, "arcs": self.arcs, "steps": self.timeline}
        self.lessons_window: QtLessonsWindow | None = None  # built on first use: start-up stays fast
        self._window_export = None  # made on the first export (window_export)

        # the bars beside the heatmap, not under it: a square heatmap leaves width to spare and needs the height
        left = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        left.addWidget(QtStepGate(controller, self.heatmap, step_index("scores"),
                                  f"The heatmap appears at the scores step (step {step_index('scores') + 1}): "
                                  "before it there is no word-to-word matrix to show."))
        left.addWidget(QtStepGate(controller, self.row_bars, ARCS_FROM_STEP,
                                  f"The bars appear at the softmax step (step {ARCS_FROM_STEP + 1}), "
                                  "with the weights they show."))
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 2)
        self.splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(QtStepGate(controller, self.arcs, ARCS_FROM_STEP,
                                           f"Arcs appear at the softmax step (step {ARCS_FROM_STEP + 1}): "
                                           "they draw the attention weights, which do not exist yet."))
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        central = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(central)
        layout.setContentsMargins(10, 8, 10, 4)
        layout.addWidget(self.sentence_box)
        layout.addWidget(QtChipsArea(self.chips))  # up to three rows of chips, scrolling beyond
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.steps_dock = QtWidgets.QDockWidget("Steps", self)
        self.steps_dock.setObjectName("stepsDock")
        self.steps_dock.setWidget(self.timeline)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, self.steps_dock)
        # the docks on the right (the model view, its next tokens and generation; the model editor) run
        # the window's full height, and the Steps dock lies under the views only: under both, a
        # decoder's right column needed more than 720 pixels and its model view kept one row of cells
        self.setCorner(QtCore.Qt.Corner.BottomRightCorner, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        # The step tables need about 330 px; in a window under SHORT_WINDOW_PX tall they would leave
        # the heatmap cells too small to read, so there the dock shows its controls and strip only, and
        # one click on "Tables" opens them. A tab would hide the strip that drives the heatmap; a strip
        # keeps it in sight. Once the reader folds or opens the tables, the window leaves them so.
        self._tables_follow_size = True
        self._dock_fitted = settings is not None and settings.contains("window/state")  # the reader's sizes stay
        self.timeline.tables_button.clicked.connect(self._on_tables_clicked)
        self.timeline.tables_shown_changed.connect(self._fit_steps_dock)
        # there from the start, and sealed (layout_seals.LayoutSeal): a message never lays out the window again
        self.statusBar().addWidget(LayoutSeal(self.status_line), 1)
        # closing the timeline leaves the finished computation on screen, not a half-played one
        self.steps_dock.toggleViewAction().toggled.connect(self._on_steps_dock_toggled)

        self._build_actions()
        self._build_menus_and_toolbar()
        self._attach_context_menus()
        controller.status_changed.connect(self._on_status_changed)
        controller.error_changed.connect(self._on_status_changed)
        controller.step_changed.connect(self._on_step_changed)
        self._on_status_changed()
        self.options_bar.model_requested.connect(self.open_model)  # asks first if there are unsaved edits
        self.model_editor.document_changed.connect(self._update_title)
        self._update_title()
        hints = QtGui.QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._on_color_scheme_changed)
        self.resize(self._first_size())
        self.tour: QtTour | None = None  # built when first shown
        # a first launch (nothing saved yet) opens with the tour, once
        self._tour_pending = settings is not None and not settings.allKeys()
        self.pretrained = attach_pretrained(self)  # the model view, layer bar and progress of real models
        self.files = attach_window_files(self)  # drop a figure or model here, Open recent, Save view…
        if settings is not None:
            restore_settings(settings, controller, self)
            # a model is remembered as soon as it opens, not only at closing: a crash, a kill or a power
            # cut later still brings it back, and a run can be checked from its settings file
            controller.model_source_changed.connect(lambda _source: save_settings(settings, controller, self))

    def _on_steps_dock_toggled(self, shown: bool) -> None:
        """The reader closed the steps: the finished computation, not a half-played one, stays on screen.
        (Not while the window itself goes: its docks hide with it, and the controller may be gone.)"""
        if not shown and self.isVisible():
            self.controller.set_step(self.controller.final_step())

    def _on_tables_clicked(self) -> None:
        self._tables_follow_size = False

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self._tables_follow_size:
            self.timeline.set_tables_shown(event.size().height() >= SHORT_WINDOW_PX)

    def _fit_steps_dock(self, tables_shown: bool) -> None:
        """Folded: the strip's height. Open: room for the step's tables, but never more than
        STEPS_DOCK_SHARE of the window, so the heatmap and arcs never starve (the tables scroll instead;
        a floor above that share left a 110-pixel heatmap on a 720-pixel screen)."""
        height = self.timeline.sizeHint().height()
        if tables_shown:
            height = min(max(STEPS_DOCK_PX, self.timeline.wanted_height()), int(self.height() * STEPS_DOCK_SHARE))
        self.resizeDocks([self.steps_dock], [height], QtCore.Qt.Orientation.Vertical)

    @staticmethod
    def _first_size() -> QtCore.QSize:
        """The screen, less room for the window's frame, up to 1600 × 1050: the heatmap, arcs and steps
        all need room (a step's three tables fill 1390 pixels)."""
        screen = QtGui.QGuiApplication.primaryScreen()
        available = screen.availableGeometry().size() if screen else QtCore.QSize(1280, 820)
        return QtCore.QSize(min(1600, available.width() - FRAME_PX[0]), min(1050, available.height() - FRAME_PX[1]))

    # --- actions, menus, toolbar ----------------------------------------------------------------
    def _action(self, text: str, slot, shortcut=None, tip: str = "") -> QtGui.QAction:
        action = QtGui.QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QtGui.QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.setToolTip(tip or text)
        action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action("&Open model…", self.open_model_dialog, QtGui.QKeySequence.StandardKey.Open,
                                        "Open a model file: a toy model (JSON) or a real model (.gguf)")
        self.export_action = self._action("&Export…", self.export_dialog, "Ctrl+E",
                                          "Export the heatmap, arcs or step as PNG/SVG, the steps as GIF, "
                                          "the matrix as CSV, the trace as JSON")
        self.quit_action = self._action("&Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)
        self.copy_action = self._action("&Copy image", self.copy_image, "Ctrl+Shift+C",
                                        "Copy the heatmap to the clipboard as an image")
        self.shortcuts_action = self._action("&Keyboard shortcuts", self.show_shortcuts, "F1")
        self.about_action = self._action("&About Attention Explorer", self.show_about)
        self.tour_action = self._action("&Tour", self.show_tour, tip="A short tour of the window")

    def _build_menus_and_toolbar(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.open_action, self.model_editor.save_action, self.model_editor.save_as_action])
        file_menu.addAction(self.export_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addActions([self.model_editor.undo_action, self.model_editor.redo_action])
        edit_menu.addSeparator()
        edit_menu.addAction(self.copy_action)
        view_menu = bar.addMenu("&View")
        view_menu.addAction(self.model_editor_dock.toggleViewAction())
        self.colormap_actions = self._exclusive_menu(view_menu.addMenu("&Colour map"), theme.COLORMAPS,
                                                     {n: n for n in theme.COLORMAPS}, self.controller.set_colormap,
                                                     self.controller.colormap_changed, lambda: self.controller.colormap)
        self.matrix_actions = self._exclusive_menu(view_menu.addMenu("&Matrix"), SQUARE_MATRICES, MATRIX_NAMES,
                                                   self.controller.set_matrix, self.controller.matrix_changed,
                                                   lambda: self.controller.matrix)
        self.controller.trace_changed.connect(lambda *_: self.matrix_actions["norm"].setEnabled(
            self.controller.matrix_available("norm")))  # a real model's words or rollout have no norms
        view_menu.addAction(self.steps_dock.toggleViewAction())
        lessons_menu = bar.addMenu("&Lessons")
        self.lesson_actions = {}
        for key, title in LESSONS:
            self.lesson_actions[key] = lessons_menu.addAction(title)
            self.lesson_actions[key].triggered.connect(lambda _=False, k=key: self.show_lesson(k))
        help_menu = bar.addMenu("&Help")
        help_menu.addActions([self.tour_action, self.shortcuts_action])
        help_menu.addAction("Get &models…", lambda: show_get_models(self))  # the real models, without Python
        help_menu.addAction(self.about_action)
        # kept by name for the parts that add to them: a menu looked up again through its QAction
        # (action.menu()) came back as an already deleted object in PySide6 6.10
        self.menus = {"File": file_menu, "Edit": edit_menu, "View": view_menu, "Lessons": lessons_menu,
                      "Help": help_menu}

        self.toolbar = toolbar = self.addToolBar("Options")
        toolbar.setObjectName("optionsToolbar")
        toolbar.setMovable(False)
        toolbar.addWidget(self.options_bar)
        toolbar.addSeparator()
        toolbar.addAction(self.export_action)
        toolbar.addAction(self.copy_action)

    def _exclusive_menu(self, menu, names, labels, setter, changed_signal, current) -> dict[str, QtGui.QAction]:
        group = QtGui.QActionGroup(menu)
        actions = {}
        for name in names:
            action = menu.addAction(labels[name])
            action.setCheckable(True)
            action.setChecked(name == current())
            action.triggered.connect(lambda _=False, n=name: setter(n))
            group.addAction(action)
            actions[name] = action
        changed_signal.connect(lambda n: actions[n].setChecked(True))
        return actions

    def _attach_context_menus(self) -> None:
        for name, view in self.views.items():
            widget = view.export_widget()
            if isinstance(widget, pg.GraphicsView):
                widget.scene().sigMouseClicked.connect(lambda event, n=name: self._on_view_clicked(n, event))
            else:  # a plain widget (the step panel): Qt's own context-menu request
                widget.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
                widget.customContextMenuRequested.connect(lambda _pos, n=name: self.pop_up(self.view_context_menu(n)))

    def _on_view_clicked(self, name: str, event) -> None:
        if event.button() != QtCore.Qt.MouseButton.RightButton:
            return
        event.accept()
        self.pop_up(self.view_context_menu(name))

    def pop_up(self, menu: QtWidgets.QMenu) -> None:
        """Every context menu of the window opens here. Each right-click makes a new menu, a child of the
        window: deleted once it closes, or every menu ever shown would stay, with its native window and
        its backing-store image."""
        try:
            self.run_menu(menu)
        finally:
            menu.deleteLater()

    def run_menu(self, menu: QtWidgets.QMenu) -> None:
        """The menu at the pointer until an entry is chosen or it is dismissed (tests choose here)."""
        menu.exec(QtGui.QCursor.pos())

    def view_context_menu(self, name: str) -> QtWidgets.QMenu:
        menu = QtWidgets.QMenu(self)
        menu.addAction("Export image…", lambda: self.export_dialog(name))
        menu.addAction("Copy image", lambda: self.copy_image(name))
        if name == "heatmap":
            menu.addAction("Export every head side by side…", lambda: self.export_dialog("grid-heads"))
            menu.addAction("Export as an interactive web page…", lambda: self.export_dialog("html"))
        menu.addAction("Export shown matrix as CSV…", lambda: self.export_dialog("csv"))
        return menu

    # --- commands -------------------------------------------------------------------------------
    def open_model_dialog(self) -> None:
        from .export_files import last_folder, remember_folder

        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Open model", last_folder(self.settings, "model"),
            "Models (*.json *.gguf);;Attention Explorer model (*.json);;Real model (*.gguf)")
        if path:
            remember_folder(self.settings, "model", path)
            self.open_model(path)

    def open_model(self, path: str) -> bool:
        if not self.model_editor.confirm_discard("opening another model"):
            return False
        try:
            self.controller.open_model(path)
        except ModelError as exc:
            QtWidgets.QMessageBox.warning(self, "Cannot open model", f"{exc}\n\nThe current model is unchanged.")
            return False
        return True

    # Exporting and the tour are imported on first use: the window's first paint does not wait for
    # them (Qt's SVG module, the export dialogs). Their logic lives in window_export.
    def export_dialog(self, kind: str = "heatmap") -> None:
        self._exports().dialog(kind)

    def export_to(self, kind: str, path: str, scale: int = 1, transparent: bool = False, options=None) -> bool:
        """Write one export (the dialog passes its FigureOptions; without, the view alone at `scale`)."""
        from .figure_options import FigureOptions, FigureSize

        if options is None:
            options = FigureOptions(theme="transparent-light" if transparent else "light", caption=False,
                                    size=FigureSize(scale=scale))
        return self._exports().export_to(kind, path, options)

    def copy_image(self, kind: str = "heatmap") -> None:
        self._exports().copy_image(kind)

    def _exports(self):
        from .window_export import WindowExport

        if self._window_export is None:
            self._window_export = WindowExport(self)
        return self._window_export

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{key}</b>&nbsp;&nbsp;</td><td>{what}</td></tr>" for key, what in SHORTCUTS)
        QtWidgets.QMessageBox.information(self, "Keyboard shortcuts", f"<table>{rows}</table>")

    def show_tour(self) -> None:
        from .views.tour import QtTour, main_window_stops

        if self.tour is None:
            self.tour = QtTour(self, main_window_stops(self))
        self.tour.start()

    def showEvent(self, event: QtGui.QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if not self._dock_fitted:  # the tables can be measured only once they are laid out
            self._dock_fitted = True
            QtCore.QTimer.singleShot(0, self, lambda: self._fit_steps_dock(self.timeline.tables_shown()))
        if self._tour_pending:
            self._tour_pending = False
            self.settings.setValue("tour/seen", True)
            QtCore.QTimer.singleShot(0, self, self.show_tour)  # once the window has its final layout

    def show_about(self) -> None:
        QtWidgets.QMessageBox.about(
            self, f"About {APP_NAME}",
            f"<h3>{APP_NAME} {__version__}</h3>"
            "<p>The self-attention layer of the Transformer, softmax(QKᵀ/√d<sub>k</sub>)·V, computed exactly "
            "(float64) on your own sentence and drawn as a heatmap and arcs.</p>"
            "<p>After Vaswani et al., “Attention Is All You Need”, 2017.</p>")

    def show_lesson(self, key: str) -> None:
        """Open the lessons window on lesson `key`; it shares this window's controller."""
        if self.lessons_window is None:
            from .labs.lessons_window import QtLessonsWindow  # the lessons load when first opened
            from .lesson_export import attach_lesson_export

            self.lessons_window = QtLessonsWindow(self.controller, self)
            self.lesson_export = attach_lesson_export(self.lessons_window, self.settings)  # Ctrl+E there
        self.lessons_window.show_lesson(key)

    # --- window events --------------------------------------------------------------------------
    def _on_step_changed(self, step: int) -> None:
        """The timeline drives the heatmap: the scores of the step's stage, the weights from softmax on."""
        matrix = heatmap_matrix(STEPS[step].key)
        if matrix is not None:
            self.controller.set_matrix(matrix)

    def _on_status_changed(self, *_):
        error = self.controller.error
        self.status_line.set_full_text(error or self.controller.status)
        color = "#E03131" if error else theme.muted().name(QtGui.QColor.NameFormat.HexArgb)
        if self.status_line.styleSheet() != f"color:{color};":  # a new style sheet re-polishes and re-lays out
            self.status_line.setStyleSheet(f"color:{color};")

    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.model_editor.document_name()}[*] — {APP_NAME}")
        self.setWindowModified(self.model_editor.is_modified)

    def _on_color_scheme_changed(self, *_):
        for graphics in (self.heatmap.graphics, self.row_bars.graphics, self.arcs.graphics):
            if graphics is not None:  # the bars' plot is built after the first paint
                graphics.setBackground(theme.background())
        self.controller.refresh()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 - Qt API
        if event.key() == QtCore.Qt.Key.Key_Escape and self.controller.pinned is not None:
            self.controller.set_pinned(None)
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:  # noqa: N802 - Qt API
        if not self.model_editor.confirm_discard("closing"):
            event.ignore()
            return
        if self.settings is not None:
            save_settings(self.settings, self.controller, self)
        super().closeEvent(event)
