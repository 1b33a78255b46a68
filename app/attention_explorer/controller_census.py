"""The head census's state in the window: which texts and settings, the result, the measure the grid
shows, the chosen head, and the effect of switching top heads off; the work runs on a worker thread.

The census window's views draw from here and call its setters, as the main views do with the
Controller. It follows the main controller's model: a census belongs to the model it measured, so
opening another model (or editing a toy one) drops the result and stops a running census. Opening a
head puts its best example in the main window's sentence and shows that layer and head there.

An encoder–decoder's census measures the attention the main window shows (its encoder's, its decoder's
or cross-attention): choosing another there is another census, and a head opened shows its best
example as both source and target, as the census read it.
"""

from __future__ import annotations

import copy
from pathlib import Path

from PySide6 import QtCore

from .engine.census import (
    MEASURE_KEYS,
    CensusCache,
    CensusSettings,
    ablation_effect,
    builtin_battery,
    cached_census,
    default_cache_folder,
    read_texts_file,
    subject_for,
)
from .pretrained_worker import BackgroundRunner

DEFAULT_MEASURE = "induction_stripe"


class CensusControls(QtCore.QObject):
    result_changed = QtCore.Signal(object)     # CensusResult, or None
    measure_changed = QtCore.Signal(str)
    selected_changed = QtCore.Signal(object)   # (layer, head) 0-based, or None
    effect_changed = QtCore.Signal(object)     # AblationEffect, or None
    busy_changed = QtCore.Signal(bool)
    progress_changed = QtCore.Signal(float, str)
    message_changed = QtCore.Signal(str)       # what happened last, in one line ("" for nothing to say)

    def __init__(self, controller, cache_folder: Path | None = None, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.controller = controller
        self.cache = CensusCache(cache_folder or default_cache_folder())
        self._result = None
        self._effect = None
        self._measure = DEFAULT_MEASURE
        self._selected: tuple[int, int] | None = None
        self._message = ""
        self._texts_file: str | None = None
        self._result_texts: str | None = None  # the text file the result was measured on (None: the battery)
        self._settings = CensusSettings()
        # made with the first census (see _worker): a worker hands the cycle collector to the GUI thread
        # (gc_policy), which a window opened, or built while idle, and never run has no need of
        self._runner: BackgroundRunner | None = None
        for signal in (controller.model_changed, controller.real_model_changed, controller.options_changed):
            signal.connect(self._on_model_changed)
        controller.model_edited.connect(self._drop_result)
        app = QtCore.QCoreApplication.instance()
        if app is not None:  # quitting stops a census at its next layer instead of waiting for the last text
            app.aboutToQuit.connect(self.cancel)
        self._model_key = self._current_model_key()

    # --- state ----------------------------------------------------------------------------------
    @property
    def result(self):
        return self._result

    @property
    def effect(self):
        return self._effect

    @property
    def measure(self) -> str:
        return self._measure

    @property
    def selected(self) -> tuple[int, int] | None:
        return self._selected

    @property
    def message(self) -> str:
        return self._message

    @property
    def result_texts(self) -> str | None:
        """The text file the shown result read (None: the built-in battery), whatever is chosen since."""
        return self._result_texts

    @property
    def texts_file(self) -> str | None:
        """The user's text file the next census reads, or None for the built-in battery."""
        return self._texts_file

    @property
    def settings(self) -> CensusSettings:
        return self._settings

    @property
    def busy(self) -> bool:
        return self._runner is not None and self._runner.busy

    def model_name(self) -> str:
        """The model, and for an encoder–decoder which of its attentions (the census subject's name)."""
        c = self.controller
        return subject_for(c.real_model).name if c.real_model is not None else c.model.name

    def has_loss(self) -> bool:
        """Whether switching heads off can be read on a next-token loss (a real decoder is open)."""
        return self.controller.real_model is not None and self.controller.real_model.is_decoder

    # --- setters --------------------------------------------------------------------------------
    def set_measure(self, measure: str) -> None:
        if measure not in MEASURE_KEYS:
            raise ValueError(f"no census measure {measure!r}")
        if measure != self._measure:
            self._measure = measure
            self.measure_changed.emit(measure)

    def set_selected(self, head: tuple[int, int] | None) -> None:
        if head != self._selected:
            self._selected = head
            self.selected_changed.emit(head)

    def set_texts_file(self, path: str | None) -> None:
        self._texts_file = path

    def set_settings(self, settings: CensusSettings) -> None:
        self._settings = settings

    def run(self) -> None:
        """Run the census (or take it from the cache) on the main window's model, on the worker."""
        subject = self._subject()
        texts_file, settings, cache = self._texts_file, self._settings, self.cache

        def work(progress):
            source = read_texts_file(texts_file) if texts_file else builtin_battery(subject, settings.seed)
            return cached_census(subject, source, settings, cache, progress), texts_file

        self._set_message(f"Measuring every head of {subject.name}…")
        self._worker().submit("census", work, self._on_census_done, self._on_failed)

    def ablate(self, k: int) -> None:
        """Switch off the `k` top heads of the shown measure, on the census's texts, and read the loss."""
        if self._result is None:
            return
        subject, result, measure = self._subject(), self._result, self._measure
        texts_file, seed = self._texts_file, self._settings.seed

        def work(progress):
            source = read_texts_file(texts_file) if texts_file else builtin_battery(subject, seed)
            return ablation_effect(subject, result, measure, k, source, seed, progress=progress)

        self._set_message(f"Switching off the top {k} heads and reading the loss…")
        self._worker().submit("ablate", work, self._on_effect_done, self._on_failed)

    def cancel(self) -> None:
        if self._runner is not None:
            self._runner.cancel()

    def wait_idle(self, msecs: int = -1) -> bool:
        return self._runner is None or self._runner.wait(msecs)

    def _worker(self) -> BackgroundRunner:
        if self._runner is None:
            self._runner = BackgroundRunner(self)
            self._runner.busy_changed.connect(self.busy_changed)
            self._runner.progress_changed.connect(self.progress_changed)
        return self._runner

    def open_head(self, layer: int, head: int) -> None:
        """Select the head and show it in the main window on the text where it fires most."""
        self.set_selected((layer, head))
        example = self._result.best_example(self._measure, layer, head) if self._result is not None else None
        if example is not None:
            self.controller.set_sentence(example[0])
            if self.controller.is_encoder_decoder:  # the census read each text as source and target
                self.controller.set_target(example[0])
        self.controller.show_layer_head(layer, head)

    def switch_off_in_window(self) -> None:
        """The heads of the last ablation switched off in the main window (its model view shows them)."""
        if self._effect is not None and self.controller.is_real:
            self.controller.set_ablated(self._effect.heads)

    # --- the worker's answers -------------------------------------------------------------------
    def _subject(self):
        c = self.controller
        if c.real_model is not None:
            return subject_for(c.real_model)
        return subject_for(copy.deepcopy(c.model), c.options)  # the editor may change the model meanwhile

    def _on_census_done(self, answer) -> None:
        census, self._result_texts = answer
        self._result, self._effect = census.result, None
        result = census.result
        when = "by an earlier run, kept in the cache" if census.from_cache else ""
        note = f"; {census.cache_note}" if census.cache_note else ""
        self._set_message(f"{result.texts} texts, {result.tokens:,} tokens, measured in {result.seconds:.1f} s"
                          f"{' ' + when if when else ''}{note}")
        if census.result.skipped:
            self._set_message(self._message + f"; {census.result.skipped} texts gave no tokens and were skipped")
        if self._measure in result.not_applicable and result.measures:  # (cross-attention: no induction)
            self.set_measure(result.measures[0])
        self.result_changed.emit(self._result)
        self.effect_changed.emit(None)

    def _on_effect_done(self, effect) -> None:
        self._effect = effect
        self._set_message(f"Switched off the top {len(effect.heads)} heads: what the model loses is in the box above")
        self.effect_changed.emit(effect)

    def _on_failed(self, message: str) -> None:
        self._set_message(message or "Cancelled; what was shown stays")

    def _set_message(self, text: str) -> None:
        if text != self._message:
            self._message = text
            self.message_changed.emit(text)

    def _current_model_key(self) -> tuple:
        c = self.controller
        return (id(c.real_model), id(c.model), c.options) if c.real_model is None else (id(c.real_model),)

    def _on_model_changed(self, *_) -> None:
        """Another model, or other options: its census is not this one."""
        key = self._current_model_key()
        if key != self._model_key:
            self._model_key = key
            self._drop_result()

    def _drop_result(self, *_) -> None:
        self.cancel()
        if self._result is not None or self._effect is not None:
            self._result, self._effect, self._selected = None, None, None
            self.result_changed.emit(None)
            self.effect_changed.emit(None)
            self.selected_changed.emit(None)
            self._set_message(f"Run the census again for {self.model_name()}: the model changed")
