"""The head census window: choose the texts, run the census on the main window's model (on a worker,
with progress and Cancel), look at the grid and the ranked heads, switch the top heads off and read
the next-token loss, and export the grid (PNG, SVG, PDF) or the table (CSV).

Opened from View ▸ Head census… (views/census_menu). Everything it shows comes from the census
controls (controller_census); the window only lays out and asks.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from ..controller_census import CensusControls
from ..engine.census import BY_KEY, MEASURES, census_csv
from ..export import ExportError, write_text
from ..export_files import ask_save_path, last_folder, remember_folder
from .census_view import QtCensusView

BATTERY, TEXT_FILE = "battery", "file"
EXPORT_TYPES = (".png", ".svg", ".pdf", ".csv")  # the first three the grid, the last the table
ABLATION_HINT = "Switching heads off is read on the next-token loss, which only a real decoder (such as SmolLM2) has"


class QtCensusWindow(QtWidgets.QMainWindow):
    def __init__(self, controller, parent: QtWidgets.QWidget | None = None, cache_folder: Path | None = None,
                 settings: QtCore.QSettings | None = None):
        super().__init__(parent)
        self.setWindowTitle("Head census")
        self.settings = settings  # where the dialogs remember their folders
        self.census = CensusControls(controller, cache_folder, self)
        self.view = QtCensusView(self.census)

        self.texts_box = QtWidgets.QComboBox()
        self.texts_box.addItem("Built-in battery", BATTERY)
        self.texts_box.addItem("Text file…", TEXT_FILE)
        self.texts_box.setToolTip("What the census reads: random sequences written twice and sentences of our own, "
                                  "or your file (one text per line, or paragraphs separated by a blank line)")
        self.texts_box.activated.connect(self._on_texts_chosen)
        self.seed_box = QtWidgets.QSpinBox()
        self.seed_box.setRange(0, 2 ** 31 - 1)
        self.seed_box.setPrefix("seed ")
        self.seed_box.setToolTip("The seed of the battery's random sequences")
        self.seed_box.valueChanged.connect(
            lambda seed: self.census.set_settings(replace(self.census.settings, seed=seed)))
        self.exclude_first_box = QtWidgets.QCheckBox("without the first token")
        self.exclude_first_box.setToolTip("Pattern scores (induction, previous, duplicate) leave out the weight on "
                                          "the first token, where most heads park theirs (TransformerLens's "
                                          "exclude_bos)")
        self.exclude_first_box.toggled.connect(
            lambda on: self.census.set_settings(replace(self.census.settings, exclude_first=on)))
        self.exclude_diagonal_box = QtWidgets.QCheckBox("without the diagonal")
        self.exclude_diagonal_box.setToolTip("Pattern scores leave out each token's weight on itself "
                                             "(TransformerLens's exclude_current_token)")
        self.exclude_diagonal_box.toggled.connect(
            lambda on: self.census.set_settings(replace(self.census.settings, exclude_diagonal=on)))
        self.epsilon_box = QtWidgets.QDoubleSpinBox()
        self.epsilon_box.setRange(0.0, 0.99)
        self.epsilon_box.setSingleStep(0.05)
        self.epsilon_box.setValue(self.census.settings.sink_epsilon)
        self.epsilon_box.setPrefix("sink ε ")
        self.epsilon_box.setToolTip("A head sinks when the first token's mean weight is above ε (Gu et al.: 0.3)")
        self.epsilon_box.valueChanged.connect(
            lambda value: self.census.set_settings(replace(self.census.settings, sink_epsilon=value)))
        self.run_button = QtWidgets.QPushButton("Run census")
        self.run_button.clicked.connect(self.census.run)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.census.cancel)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(260)
        self.measure_box = QtWidgets.QComboBox()
        for measure in MEASURES:
            self.measure_box.addItem(measure.title, measure.key)
        self.measure_box.setCurrentIndex(self.measure_box.findData(self.census.measure))
        self.measure_box.activated.connect(lambda i: self.census.set_measure(self.measure_box.itemData(i)))
        self.measure_note = QtWidgets.QLabel("")
        self.measure_note.setWordWrap(True)
        self.export_button = QtWidgets.QPushButton("Export…")
        self.export_button.setToolTip("The grid as PNG, SVG or PDF, or every head's scores as CSV")
        self.export_button.clicked.connect(self.export_dialog)

        self.ablate_count = QtWidgets.QSpinBox()
        self.ablate_count.setRange(1, 64)
        self.ablate_count.setValue(3)
        self.ablate_count.setPrefix("top ")
        self.ablate_button = QtWidgets.QPushButton("Switch them off")
        self.ablate_button.clicked.connect(lambda: self.census.ablate(self.ablate_count.value()))
        self.apply_button = QtWidgets.QPushButton("Switch them off in the main window")
        self.apply_button.setToolTip("The main window's model view shows them crossed out; right-click a head "
                                     "there to switch it back on")
        self.apply_button.clicked.connect(self.census.switch_off_in_window)
        # a box of its own, five lines tall: a wrapped label squeezed by the grid lost its last lines
        self.effect_box = QtWidgets.QPlainTextEdit()
        self.effect_box.setObjectName("censusEffect")
        self.effect_box.setReadOnly(True)
        self.effect_box.setPlaceholderText("Run the census, then switch its top heads off to see what the model "
                                             "loses on the next-token loss (decoders)")
        lines = self.effect_box.fontMetrics().lineSpacing()
        self.effect_box.setFixedHeight(lines * 5 + 2 * self.effect_box.frameWidth() + 8)
        self.message = QtWidgets.QLabel("")
        self.message.setWordWrap(True)

        top = QtWidgets.QHBoxLayout()
        for widget in (QtWidgets.QLabel("Texts:"), self.texts_box, self.seed_box, self.exclude_first_box,
                       self.exclude_diagonal_box, self.epsilon_box, self.run_button, self.cancel_button, self.progress):
            top.addWidget(widget)
        top.addStretch(1)
        shown = QtWidgets.QHBoxLayout()
        for widget in (QtWidgets.QLabel("Colour by:"), self.measure_box):
            shown.addWidget(widget)
        shown.addWidget(self.measure_note, 1)
        shown.addWidget(self.export_button)
        ablation = QtWidgets.QHBoxLayout()
        for widget in (QtWidgets.QLabel("Switch off the"), self.ablate_count,
                       QtWidgets.QLabel("heads of the measure shown:"), self.ablate_button, self.apply_button):
            ablation.addWidget(widget)
        ablation.addStretch(1)
        body = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(body)
        layout.addLayout(top)
        layout.addLayout(shown)
        layout.addWidget(self.view, 1)
        layout.addLayout(ablation)
        layout.addWidget(self.effect_box)
        layout.addWidget(self.message)
        self.setCentralWidget(body)
        self.resize(1000, 700)

        self.census.busy_changed.connect(self._show_busy)
        self.census.progress_changed.connect(self._show_progress)
        self.census.message_changed.connect(self.message.setText)
        self.census.measure_changed.connect(self._on_measure_changed)
        self.census.result_changed.connect(self._update_controls)
        self.census.effect_changed.connect(self._on_effect_changed)
        controller.real_model_changed.connect(self._update_controls)
        controller.model_changed.connect(self._update_controls)
        self._show_busy(False)
        self._on_measure_changed(self.census.measure)
        self._update_controls()

    # --- controls -------------------------------------------------------------------------------
    def _on_texts_chosen(self, index: int) -> None:
        if self.texts_box.itemData(index) != TEXT_FILE:
            self.census.set_texts_file(None)
            return
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Texts for the census",
                                                        last_folder(self.settings, "census-texts"),
                                                        "Text files (*.txt);;All files (*)")
        if path:
            remember_folder(self.settings, "census-texts", path)
            self.choose_texts_file(path)
        else:
            self.texts_box.setCurrentIndex(self.texts_box.findData(BATTERY) if self.census.texts_file is None
                                           else self.texts_box.count() - 1)

    def choose_texts_file(self, path: str) -> None:
        """Read `path` on the next run (it is checked then, on the worker; a bad file is said there)."""
        self.census.set_texts_file(path)
        while self.texts_box.count() > 2:
            self.texts_box.removeItem(2)
        self.texts_box.addItem(Path(path).name, path)
        self.texts_box.setCurrentIndex(2)

    def _show_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.run_button.setEnabled(not busy)
        if busy:
            self.progress.setValue(0)
        self._update_controls()

    def _show_progress(self, fraction: float, text: str) -> None:
        self.progress.setValue(round(fraction * 1000))
        self.progress.setFormat(f"{text} %p%")

    def _on_measure_changed(self, measure: str) -> None:
        self.measure_box.setCurrentIndex(self.measure_box.findData(measure))
        self.measure_note.setText(BY_KEY[measure].finds)

    def _update_controls(self, *_) -> None:
        has_result, busy = self.census.result is not None, self.census.busy
        self.setWindowTitle(f"Head census — {self.census.model_name()}")
        can_ablate = has_result and self.census.has_loss() and not busy
        self.ablate_button.setEnabled(can_ablate)
        self.ablate_button.setToolTip("" if self.census.has_loss() else ABLATION_HINT)
        self.apply_button.setEnabled(self.census.effect is not None and self.census.controller.is_real)
        self.export_button.setEnabled(has_result)

    def _on_effect_changed(self, effect) -> None:
        self.effect_box.setPlainText("\n".join(effect.lines()) if effect is not None else "")
        self._update_controls()

    # --- export ---------------------------------------------------------------------------------
    def export_dialog(self) -> None:
        if self.census.result is None:
            return
        stem = f"census-{self.census.model_name().split()[0]}-{self.census.measure}"
        path = ask_save_path(self, self.settings, "census", stem, EXPORT_TYPES, ".png", "Export the census")
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> bool:
        """The grid as .png, .svg or .pdf, every head's scores as .csv; a failure is said in a message box."""
        from ..image_export import export_view_file

        suffix = Path(path).suffix.lower()
        try:
            if self.census.result is None:
                raise ExportError("there is no census to export yet: run it first")
            if suffix == ".csv":
                write_text(path, census_csv(self.census.result))
            elif suffix in EXPORT_TYPES:
                export_view_file(self.view, path, title=f"Head census — {self.census.model_name()}")
            else:
                raise ExportError(f"the census is written as .png, .svg, .pdf or .csv, not {suffix or 'no ending'}")
        except ExportError as exc:
            QtWidgets.QMessageBox.warning(self, "Export failed", f"{exc}\n\nNothing was written.")
            return False
        self.statusBar().showMessage(f"Exported {Path(path).name}", 5000)
        return True

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:  # noqa: N802 - Qt API
        self.census.cancel()  # a census nobody looks at stops at its next text
        super().closeEvent(event)
