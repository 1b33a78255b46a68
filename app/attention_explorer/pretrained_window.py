"""The main window's parts for real models: the model view and next-token dock, the layer/reading bar,
progress with Cancel in the status bar, the message when a load fails, and the toy-model controls
switched off (with a tooltip saying why) while a real model is open.

Kept out of app.py so the window module stays about the toy models' layout; MainWindow calls
attach_pretrained once, after its own menus and docks exist.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from .views.census_menu import CensusLauncher
from .views.generation_panel import QtGenerationPanel
from .views.layout_seals import PaneSeal
from .views.model_view import QtModelView
from .views.next_tokens import QtNextTokens
from .views.pretrained_bar import QtPretrainedBar
from .views.target_box import QtTargetBox
from .window_generation import export_generation

REAL_MODEL_NOTE = "A real model's weights are its own: open a toy model to change this"
DOCK_MIN_PX, DOCK_SHARE = 340, 0.27   # the model view's first width: a share of the window's
LESSONS_NOTE = "The lessons use the toy models: open one to start a lesson"
FOLDER_HINT = "Open a real model's folder (config.json, *.safetensors and tokenizer.json)"
BUSY_SHOWN_AFTER_MS = 400  # a forward still running this long gets its progress bar and Cancel


class PretrainedParts(QtCore.QObject):
    """What attach_pretrained added to the window, for the window, its tests and the tour."""

    def __init__(self, window):  # the MainWindow (only the launcher may import its module)
        super().__init__(window)
        self.window = window
        controller = window.controller
        self.model_view = QtModelView(controller)
        self.next_tokens = QtNextTokens(controller)
        self.next_tokens.candidates.customContextMenuRequested.connect(self._copy_candidates)
        self.generation = QtGenerationPanel(controller)
        self.generation.export_requested.connect(lambda: export_generation(window))
        self.bar = QtPretrainedBar(controller)
        self.target_box = QtTargetBox(controller)
        window.centralWidget().layout().insertWidget(1, self.target_box)  # under the sentence box: the source

        self.body = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        # the model view's caption takes a line more for a note, and its grid gives the height back: sealed
        for index, part in enumerate((PaneSeal(self.model_view), self.next_tokens, self.generation)):
            self.body.addWidget(part)
            self.body.setStretchFactor(index, 4 if index == 0 else 1)
        self.dock = QtWidgets.QDockWidget("Model view", window)
        self.dock.setObjectName("modelViewDock")
        self.dock.setWidget(self.body)
        window.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()

        window.addToolBarBreak()
        self.toolbar = window.addToolBar("Real model")
        self.toolbar.setObjectName("realModelToolbar")
        self.toolbar.setMovable(False)
        self.toolbar.addWidget(self.bar)
        self.toolbar.hide()

        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(220)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop loading or running the model; what is shown stays")
        self.cancel_button.clicked.connect(controller.cancel)
        window.statusBar().addPermanentWidget(self.progress)
        window.statusBar().addPermanentWidget(self.cancel_button)
        self._busy_timer = QtCore.QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_SHOWN_AFTER_MS)
        self._busy_timer.timeout.connect(lambda: self._show_busy_now(True))  # stopped when the job ends
        self._show_busy(False)

        self.open_folder_action = window._action("Open model &folder…", self.open_folder_dialog, tip=FOLDER_HINT)
        window.menus["File"].insertAction(window.model_editor.save_action, self.open_folder_action)
        window.menus["View"].addAction(self.dock.toggleViewAction())
        self.census = CensusLauncher(window, window.menus["View"])  # View ▸ Head census… (views/census_window)
        self.census.built.connect(self.model_view.set_census_source)

        controller.busy_changed.connect(self._show_busy)
        controller.progress_changed.connect(self._show_progress)
        controller.load_failed.connect(self._on_load_failed)
        controller.real_model_changed.connect(self._on_real_model_changed)
        app = QtWidgets.QApplication.instance()
        if app is not None:  # quitting never waits for a load (the worker is a daemon) nor says it was stopped
            app.aboutToQuit.connect(controller.abandon)
        window.views["model"] = self.model_view
        self._editor_was_open = False
        self._on_real_model_changed(controller.real_model)

    def open_folder_dialog(self) -> None:
        from .export_files import last_folder, remember_folder

        settings = self.window.settings
        path = QtWidgets.QFileDialog.getExistingDirectory(self.window, FOLDER_HINT,
                                                          last_folder(settings, "model-folder"))
        if path:
            remember_folder(settings, "model-folder", path)  # the folder that holds it: where its siblings are
            self.window.open_model(path)

    def _copy_candidates(self, point: QtCore.QPoint) -> None:
        """A right-click on the next tokens: their copy menu, opened where the window opens every menu."""
        menu = self.next_tokens.candidates.copy_menu(point, self.window)
        if menu is not None:
            self.window.pop_up(menu)

    def _show_busy(self, busy: bool) -> None:
        """The progress bar and Cancel, at once while a model is being opened, else once a job has run for
        BUSY_SHOWN_AFTER_MS. Each word typed runs a forward of a few to a few hundred milliseconds: shown
        for each, the bar and the button came and went in a flash, and the window's thread laid out and
        painted the status bar twice, and its progress at each layer, while the forward ran on the
        worker (SmolLM2 at 12 tokens, medians of three runs in turns: a head switched off 109 → 104 ms,
        a word typed 82 → 76; at 128 tokens 327 → 317 and 157 → 149)."""
        self._busy_timer.stop()
        if busy and not self.progress.isVisibleTo(self.window):
            # a job starts at 0, set while hidden: QProgressBar.setValue repaints a shown bar at once
            self.progress.setValue(0)
        if busy and not self.window.controller.loading:
            self._busy_timer.start()
        else:
            self._show_busy_now(busy)

    def _show_busy_now(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)

    def _show_progress(self, fraction: float, text: str) -> None:
        """Drawn with the rest of the window on the next paint: QProgressBar.setValue repaints at once,
        outside it (a decoder writing moved it at every token: 1 ms each, among the hovers)."""
        self.progress.setUpdatesEnabled(False)
        self.progress.setValue(round(fraction * 1000))
        self.progress.setFormat(f"{text} %p%")
        self.progress.setUpdatesEnabled(True)  # asks for one ordinary repaint

    def _on_load_failed(self, message: str) -> None:
        QtWidgets.QMessageBox.warning(self.window, "Cannot open model",
                                      f"{message}\n\nThe current model is unchanged.")

    def _on_real_model_changed(self, model) -> None:
        """Toy-only controls off (with the reason as their tooltip) while a real model is open."""
        real = model is not None
        self.toolbar.setVisible(real)
        if real and not self.dock.isVisible():  # room for a row of a dozen heads' thumbnails
            self.dock.show()
            width = max(DOCK_MIN_PX, int(self.window.width() * DOCK_SHARE))
            self.window.resizeDocks([self.dock], [width], QtCore.Qt.Orientation.Horizontal)
            parts = [self.next_tokens.sizeHint().height(), self.generation.sizeHint().height()]
            self.body.setSizes([max(1, self.body.height() - sum(parts)), *parts])  # the rest to the model view
        window = self.window
        editor = window.model_editor
        for action in (editor.save_action, editor.save_as_action):
            action.setEnabled(not real)
        editor.undo_action.setEnabled(not real and editor.undo_stack.canUndo())
        editor.redo_action.setEnabled(not real and editor.undo_stack.canRedo())
        self._put_editor_away(real)
        # the lessons teach with the toy models' own words and switches
        for action in window.lesson_actions.values():
            action.setEnabled(not real)
            action.setToolTip(LESSONS_NOTE if real else action.text())
        if real and window.lessons_window is not None:
            window.lessons_window.hide()


    def _put_editor_away(self, real: bool) -> None:
        """The model editor edits toy models: beside a real model its dock goes (it took a third of the
        window from the model view) and its menu entry says why; it comes back with a toy model."""
        dock, toggle = self.window.model_editor_dock, self.window.model_editor_dock.toggleViewAction()
        if real and toggle.isEnabled():
            self._editor_was_open = dock.isVisible()
            dock.hide()
        elif not real and not toggle.isEnabled() and self._editor_was_open:
            dock.show()
        toggle.setEnabled(not real)
        toggle.setToolTip(REAL_MODEL_NOTE if real else toggle.text())
        toggle.setStatusTip(REAL_MODEL_NOTE if real else "")


def attach_pretrained(window) -> PretrainedParts:
    return PretrainedParts(window)
