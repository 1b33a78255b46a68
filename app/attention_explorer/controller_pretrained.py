"""The controller's half for real pretrained models (every family of engine/pretrained/families): open
one, pick its layer, switch heads off, read it as words, without specials or as rollout.

A real model is the second kind of model beside the toy ones. While one is open, `Controller.trace` is
the chosen layer's Trace (see pretrained_display.shown_trace), so every view that draws a toy model's
trace draws the layer unchanged; `pretrained_trace` holds every layer and head for the model view.

A controller made with `background=True` (the window) loads and runs on a worker thread: it answers
hovers meanwhile, a newer sentence or ablation supersedes a running forward, and a failed or cancelled
load leaves the current model as it was and says so through `load_failed`. Without it (the command
line, most tests) open_model and every setter finish before they return and open_model raises
ModelError, as for a toy model.
"""

from __future__ import annotations

import contextlib
import gc
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtCore

from .engine import EngineError, ModelError, Options, Trace
from .engine.memory import OWN_PAGES_FROM_TOKENS, release_free_memory
from .engine.steps import step_index
from .engine.tokenizer import Word
from .pretrained_display import RealView, shown_trace

if TYPE_CHECKING:  # types only: the modules load once a real model is opened
    from .engine.pretrained import PretrainedModel, PretrainedTrace
    from .pretrained_worker import BackgroundRunner

LOAD_CANCELLED = "Loading was cancelled"
FORWARD_STOPPED = "Stopped before the model read this text: change the text to run it again"
OPENING_STEP = "softmax"  # where the step timeline stands when a real model opens
RELEASE_AFTER_MS = 1000   # after a model or a long text is let go: memory handed back this much later


class PretrainedControls(QtCore.QObject):
    """The real-model state and setters of the Controller (which subclasses this)."""

    real_model_changed = QtCore.Signal(object)     # PretrainedModel, or None when a toy model is back
    pretrained_trace_changed = QtCore.Signal(object)  # PretrainedTrace (every layer and head), or None
    layer_changed = QtCore.Signal(int)             # 0-based
    ablation_changed = QtCore.Signal(object)       # frozenset of (layer, head), 0-based
    real_view_changed = QtCore.Signal(object)      # RealView
    busy_changed = QtCore.Signal(bool)             # a load or forward runs on the worker
    progress_changed = QtCore.Signal(float, str)   # how far it is, and what it does
    load_failed = QtCore.Signal(str)               # a background load failed or was cancelled: why

    def _init_pretrained(self, background: bool) -> None:
        self._real_model: PretrainedModel | None = None
        self._ptrace: PretrainedTrace | None = None
        self._real_error = ""
        self._real_note = ""
        self._forward_ms = 0.0
        self._chip_words: tuple[Word, ...] = ()  # the last tokens' chips, kept for the same tokens again
        self._layer = 0
        self._ablated: frozenset[tuple[int, int]] = frozenset()
        self._real_view = RealView()
        self._background = background
        self._runner: BackgroundRunner | None = None  # made by _worker() when a real model is first opened
        self._release_timer = QtCore.QTimer(self)
        self._release_timer.setSingleShot(True)
        self._release_timer.setInterval(RELEASE_AFTER_MS)
        self._release_timer.timeout.connect(_collect_and_release)

    # --- read-only state -------------------------------------------------------------------------
    @property
    def real_model(self) -> PretrainedModel | None:
        """The open real model, or None while a toy model is shown."""
        return self._real_model

    @property
    def is_real(self) -> bool:
        return self._real_model is not None

    @property
    def pretrained_trace(self) -> PretrainedTrace | None:
        """Every layer and head of the last forward of the real model (None for toy models)."""
        return self._ptrace if self._real_model is not None else None

    @property
    def layer(self) -> int:
        """The layer the main views show (0-based; always 0 for a toy model)."""
        return self._layer

    @property
    def ablated(self) -> frozenset[tuple[int, int]]:
        """The (layer, head) pairs switched off, 0-based."""
        return self._ablated

    @property
    def real_view(self) -> RealView:
        return self._real_view

    @property
    def display_note(self) -> str:
        """What merging, hiding or rollout did to the shown layer, in one line ("" when none is on)."""
        return self._real_note if self._real_model is not None else ""

    @property
    def busy(self) -> bool:
        return self._runner is not None and self._runner.busy

    @property
    def loading(self) -> bool:
        """A real model is being opened on the worker (the current model stays until it is in)."""
        return self._runner is not None and self._runner.has_job("load")

    # --- setters --------------------------------------------------------------------------------
    def open_pretrained(self, name_or_path: str, sentence: str | None = None) -> None:
        """Open a real model (list name, HF folder or .gguf file) and run the sentence through it.

        In the background the current model stays until the new one has loaded and run; a failure
        or a cancel keeps it and emits load_failed. Otherwise ModelError is raised at once."""
        from .engine.pretrained.catalog import listed_name

        text = self._sentence if sentence is None else sentence
        source = listed_name(str(name_or_path))  # "smollm2-135m" is shown and kept as the model list names it
        load = self._loader(source, text)
        runner = self._worker()
        if runner is None:
            self._enter_real(source, text, *load(lambda _f, _t: True))
            return
        before = self._sentence
        # typed while it loaded: the newest sentence wins, and runs once the model is in
        runner.submit("load", load, lambda result: self._enter_real(
                                source, text if self._sentence == before else self._sentence, *result),
                            lambda message: self.load_failed.emit(self._load_message(source, message)))

    def _loader(self, source: str, text: str):
        """The work of opening `source` and reading `text` with it, for the worker: it touches no state
        of the controller (what it needs is read now, on the GUI thread)."""
        view = self._real_view

        def load(progress) -> tuple[PretrainedModel, PretrainedTrace | None, str, float]:
            from .engine.pretrained import open_pretrained  # the readers and the forward load here, not at start

            model = open_pretrained(source, lambda f, t: progress(0.8 * f, t))
            # a model that cannot run is not opened; a text it cannot read opens it with the reason shown
            ptrace, error, forward_ms = self._forward(model, text, frozenset(), lambda f, t: progress(0.8 + 0.2 * f, t),
                                                      model_errors=False)
            if ptrace is not None:
                shown_trace(ptrace, 0, view)  # what the views will draw first, tried before anything switches
            return model, ptrace, error, forward_ms

        return load

    def cancel_load(self) -> None:
        """Forget a load still running, without a word: another model was chosen meanwhile, and the
        last choice wins."""
        if self._runner is not None:
            self._runner.drop("load")

    def set_layer(self, layer: int) -> None:
        """Show layer `layer` (0-based, clamped) of the real model in the main views."""
        if self._real_model is None:
            return
        layer = max(0, min(layer, self._real_model.n_layers - 1))
        if layer != self._layer:
            self._layer = layer
            self._recompute((self.layer_changed, layer))

    def show_layer_head(self, layer: int, head: int) -> None:
        """Open one cell of the model view in the main views."""
        self.set_layer(layer)
        self.set_head(head)

    def set_ablated(self, pairs) -> None:
        """Switch these (layer, head) pairs off (and every other back on); the model runs again."""
        pairs = frozenset((int(lay), int(h)) for lay, h in pairs)
        if self._real_model is None or pairs == self._ablated:
            return
        self._ablated = pairs
        self.ablation_changed.emit(pairs)
        self.stop_generating()  # what was written stays; the text is read again with these heads
        self._run_real()

    def toggle_ablated(self, layer: int, head: int) -> None:
        self.set_ablated(self._ablated ^ {(layer, head)})

    def set_real_view(self, view: RealView) -> None:
        """Read the layer as words, without specials or sinks, or as rollout."""
        if view != self._real_view:
            self._real_view = view
            self._recompute((self.real_view_changed, view))

    def update_real_view(self, **changes) -> None:
        self.set_real_view(self._real_view.with_changes(**changes))

    def cancel(self) -> None:
        """Stop a running load or forward; what is on screen stays."""
        if self._runner is not None:
            self._runner.cancel()

    def abandon(self) -> None:
        """Forget every running load and forward without a word: the app is quitting, and a message
        opened now would hold the quit up."""
        if self._runner is not None:
            self._runner.drop_all()

    def wait_idle(self, msecs: int = -1) -> bool:
        """Block until the worker is idle (closing the window; tests)."""
        return self._runner is None or self._runner.wait(msecs)

    # --- the controller's hooks ---------------------------------------------------------------------
    def _worker(self) -> BackgroundRunner | None:
        """The worker thread's runner for a background controller, made on first use so that a start
        on a toy model creates no thread; None for a controller that works in the caller's thread."""
        if self._background and self._runner is None:
            from .pretrained_worker import BackgroundRunner

            self._runner = BackgroundRunner(self)
            self._runner.busy_changed.connect(self.busy_changed)
            self._runner.progress_changed.connect(self.progress_changed)
        return self._runner

    def _leave_real(self) -> None:
        """A toy model replaces the real one, or a real one still loading: the last choice wins."""
        self.cancel_load()
        if self._real_model is None:
            return
        self._drop_generation()
        if self._runner is not None:
            self._runner.drop("run")
        self._real_model, self._ptrace, self._layer, self._ablated = None, None, 0, frozenset()
        self.real_model_changed.emit(None)
        self.pretrained_trace_changed.emit(None)
        self._release_memory_soon()

    def _release_memory_soon(self) -> None:
        """Give a closed model's (or a long text's) memory back once everything has let go of it: the
        views redraw in this pass, but a cancelled forward may still finish on the worker and the
        cycles of the old traces wait for the collector, so it is done a moment later, after a full
        collection, and again later if more is closed meanwhile (a long walk found 550 MB kept on a toy
        model after the release had run too early; malloc_trim then gave it all back)."""
        self._release_timer.start()

    def _run_real(self) -> None:
        """Run the current sentence through the real model again (after an edit or an ablation); the
        layers an ablation leaves alone are taken from the last forward of the same text."""
        model, text, ablated, previous = self._real_model, self._sentence, self._ablated, self._ptrace
        layer = self._layer  # its weights come with the forward (model.run's show_layer)
        if previous is not None:
            previous.let_go_of_caches()
            _release_around_forward(previous.n)
        runner = self._worker()
        if runner is None:
            result = self._forward(model, text, ablated, previous=previous, show_layer=layer)
            # the trace replaced goes once the controller lets go of it, before the views make the new
            # one's matrices: held here too, its layer inputs had set the peak beside the new ones
            del previous
            self._accept_forward(*result)
            return
        runner.submit("run", lambda progress: self._forward(model, text, ablated, progress, previous=previous,
                                                            show_layer=layer),
                            lambda result: self._accept_forward(*result),
                            lambda message: self._accept_forward(None, self._failure_message(model.name, message), 0.0)
                            if message else self._after_cancelled_forward())

    def _drop_generation(self) -> None:
        """Forget a generation on screen (controller_generation overrides it)."""

    def stop_generating(self) -> None:
        """Stop a generation being written (controller_generation overrides it)."""

    def _after_cancelled_forward(self) -> None:
        """A forward was cancelled. After a head was switched off, what is on screen stays and the heads
        go back to the shown forward's (a cancelled right-click left "1 head off" over next tokens made
        with none off). After the text changed, the text stays as typed and the views say the model has
        not read it (they had gone on showing the last text's tokens under the new one). A forward that
        failed before, and shows why in place of views, says so too: forty thousand letters typed over a
        text the model refused, then stopped, went on saying that text's fault (X11 walk, seed 110)."""
        if self._ptrace is None:
            if self._real_model is not None and self._real_error:
                self._accept_forward(None, FORWARD_STOPPED, 0.0)
            return
        if self._ptrace.text != self._sentence:
            self._accept_forward(None, FORWARD_STOPPED, 0.0)
        elif self._ablated != self._ptrace.ablated:
            self._ablated = self._ptrace.ablated
            self.ablation_changed.emit(self._ablated)

    @staticmethod
    def _forward(model, text, ablated, progress=None, model_errors: bool = True, previous=None, show_layer=None
                 ) -> tuple[PretrainedTrace | None, str, float]:
        """One forward, its error and milliseconds; bad text is an error to show, not a failure of the model.
        A model that fails on the text (ModelError) is an error to show too, unless `model_errors` is
        False (opening it: then it is not opened). (It may run on the worker: it touches no state of the
        controller.)"""
        started = time.perf_counter()
        try:
            ptrace = model.run(text, ablated, progress,
                               previous=previous if previous is not None and previous.model is model.weights else None,
                               show_layer=show_layer)
        except EngineError as error:
            if isinstance(error, ModelError) and not model_errors:
                raise
            return None, str(error), 0.0
        took_ms = (time.perf_counter() - started) * 1000
        if show_layer is not None:
            # the trace the views draw of that layer, made here rather than on the window's thread once
            # the forward is handed over (1.5 ms of an edit at 512 MiniLM tokens); the trace keeps it. A
            # layer it refuses (overflow) is not kept, and is refused again when a view asks for it
            with contextlib.suppress(EngineError):
                ptrace.layer_trace(show_layer)
        return ptrace, "", took_ms

    def _enter_real(self, source: str, text: str, model: PretrainedModel, ptrace: PretrainedTrace | None,
                    error: str, forward_ms: float) -> None:
        replaced = self._real_model is not None and self._real_model is not model
        self._drop_generation()
        if self._runner is not None:
            # a forward of the model shown until now (a head switched off while this one loaded) would land
            # on this one: its attention drawn under this model's name
            self._runner.drop("run")
        self._real_model, self._ptrace, self._real_error, self._forward_ms = model, ptrace, error, forward_ms
        self._layer, self._ablated = 0, frozenset()
        self._model_source = source
        self._sentence = text
        stale = ptrace is not None and ptrace.text != text
        self._options = Options(scale=True, causal=model.is_decoder, positional=False, heads=model.n_heads)
        # The steps open on the weights: the last step's tables are n × d_model products (width 384 or
        # 576: 150,000 cells, a second to lay out) where the toy models have a few dozen.
        self._step = step_index(OPENING_STEP)
        self._recompute((self.real_model_changed, model), (self.model_source_changed, source),
                        (self.sentence_changed, text), (self.options_changed, self._options),
                        (self.pretrained_trace_changed, ptrace), (self.layer_changed, 0),
                        (self.ablation_changed, self._ablated), (self.step_changed, self._step))
        if replaced:
            self._release_memory_soon()
        if stale:
            self._run_real()

    def _accept_forward(self, ptrace: PretrainedTrace | None, error: str, forward_ms: float) -> None:
        if ptrace is not None:
            _release_around_forward(ptrace.n)
        self._ptrace, self._real_error, self._forward_ms = ptrace, error, forward_ms
        self._recompute((self.pretrained_trace_changed, ptrace))

    def _real_trace(self) -> tuple[Trace | None, str]:
        """The shown layer of the last forward, or why there is none."""
        if self._ptrace is None:
            return None, self._real_error or "Running the model…"
        if self._real_error:  # the newest text failed (e.g. nothing typed): say why, draw nothing
            return None, self._real_error
        try:
            trace, self._real_note = shown_trace(self._ptrace, self._layer, self._real_view)
        except ModelError as error:  # this layer overflowed (damaged weights): say so in its place
            return None, str(error)
        return trace, ""

    def _real_words(self, trace: Trace | None) -> tuple[Word, ...]:
        """One chip per shown token: a real model's tokenizer knows every piece. Another layer or head
        of the same tokens gives the same tuple, which the chips see is theirs at once (2,048 new
        words made and compared a word at a time cost 2 ms of each layer change)."""
        tokens = list(trace.tokens) if trace else []
        if [word.text for word in self._chip_words] != tokens:
            self._chip_words = tuple(Word(token, True, 0, 0) for token in tokens)
        return self._chip_words

    def _describe_real(self, trace: Trace) -> str:
        model, ptrace = self._real_model, self._ptrace
        parts = [f"{model.name}", f"{ptrace.n} token{'s' if ptrace.n != 1 else ''}",
                 f"layer {self._layer + 1} of {model.n_layers}",
                 f"{model.n_heads} heads of d_k = {trace.heads[0].d_k}"]
        if model.n_kv_heads != model.n_heads:
            parts.append(f"{model.n_kv_heads} shared key/value heads")
        if self._ablated:
            parts.append(f"{len(self._ablated)} head{'s' if len(self._ablated) != 1 else ''} off")
        text = " · ".join(parts) + f" — {self._timing_note()}"
        if ptrace.encoded.cut is not None:
            text += f". Text cut: {ptrace.encoded.cut.describe()}"
        return text

    def _timing_note(self) -> str:
        kept = self._ptrace.read_from if self._ptrace is not None else 0
        if kept:  # a decoder's edit: the tokens before it were not read again (model.run's `previous`)
            return (f"forward in {self._forward_ms:.0f} ms, from token {kept + 1} on "
                    f"(the {kept} before it unchanged, their layer inputs kept)")
        return f"forward in {self._forward_ms:.0f} ms"

    @staticmethod
    def _load_message(source: str, message: str) -> str:
        if not message:
            return f"{LOAD_CANCELLED}: {Path(source).name} was not opened"
        return PretrainedControls._failure_message(Path(source).name, message)

    @staticmethod
    def _failure_message(name: str, message: str) -> str:
        """A ModelError names its file already; an error no check foresaw is told whose it was."""
        from .pretrained_worker import UNFORESEEN  # loaded with the worker that reported it

        return f"{name}: {message}" if message.startswith(UNFORESEEN) else message


def _collect_and_release() -> None:
    """On the GUI thread (where the app's cycle collection runs: gc_policy): every cycle freed, then the
    free memory handed back to the system."""
    gc.collect()
    release_free_memory()


def _release_around_forward(n: int) -> None:
    """Free memory handed back at once before and after a long text's forward: the forward adds every
    layer's input and thumbnail (156 MiB at 2,048 tokens of SmolLM2) and then the views the new trace's
    matrices, on top of what glibc keeps free from the views' last matrices and the forward's own
    temporaries, and the window's peak was their sum. Some tens of milliseconds, beside a forward of
    seconds; not below OWN_PAGES_FROM_TOKENS, where the forward takes a tenth of a second and the
    pages handed back were faulted in again after it (MiniLM at 512 tokens: an ablation 15 % slower).
    The release a moment later (_release_memory_soon) still follows."""
    if n >= OWN_PAGES_FROM_TOKENS:
        release_free_memory()
