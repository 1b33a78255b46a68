"""The controller: the one object that holds the app's state, runs the engine and publishes the trace.

Views never compute attention: they call setters here and redraw from the signals. Every setter
compares before it emits, so a view updating itself from a signal cannot start a feedback loop.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6 import QtCore

from . import engine
from .controller_generation import GenerationControls
from .engine import SQUARE_MATRICES, EngineError, ModelError, Options, ToyModel, Trace
from .engine.lazy_trace import let_go, made_items
from .engine.steps import LAST_STEP, STEPS, skip_reason

LOOKING = "looking"      # the focused word as the one looking: its row of the weights, where it looks
LOOKED_AT = "looked_at"  # the focused word as the one looked at: its column, who looks at it
FOCUS_ROLES = (LOOKING, LOOKED_AT)
LONG_TEXT_TOKENS = 512  # a trace this long that is replaced gives its memory back (n × n matrices per head)
STEP_MATRICES = ("scores", "scaled", "masked")  # made for a step's tables, let go on leaving it (long texts)
HEAD_LET_GO = (*SQUARE_MATRICES, "output")  # what a long text's heads not shown let go of


class Controller(GenerationControls):
    """State: model, sentence, options, trace, hovered/pinned token and their roles, matrix shown, head,
    colour map, step; for a real model also its layer, switched-off heads and reading (controller_pretrained).

    `background=True` (the window) loads and runs real models on a worker thread; toy models always
    compute at once."""

    model_changed = QtCore.Signal(object)      # ToyModel
    model_edited = QtCore.Signal(object)       # the same ToyModel, its numbers, words or names changed in place
    model_source_changed = QtCore.Signal(str)
    sentence_changed = QtCore.Signal(str)
    options_changed = QtCore.Signal(object)    # Options
    trace_changed = QtCore.Signal(object)      # Trace, or None when there is nothing to show
    error_changed = QtCore.Signal(str)         # "" when the last computation succeeded
    status_changed = QtCore.Signal(str)        # one line saying what ran
    pinned_changed = QtCore.Signal(object)     # token index or None; also sent when only its role changed
    focus_changed = QtCore.Signal(object)      # hovered, else pinned: the word every view highlights;
                                               # also sent when only the role changed (see focus_role)
    matrix_changed = QtCore.Signal(str)
    head_changed = QtCore.Signal(int)
    colormap_changed = QtCore.Signal(str)
    step_changed = QtCore.Signal(int)          # index into engine.steps.STEPS: where the step timeline stands

    def __init__(self, model: ToyModel | None = None, sentence: str | None = None, options: Options | None = None,
                 parent: QtCore.QObject | None = None, background: bool = False):
        super().__init__(parent)
        self._init_pretrained(background)
        self._init_generation()
        self._model = model or engine.load_builtin(engine.catalog.DEFAULT_MODEL)
        self._model_source = self._model.name
        self._sentence = self._model.default_sentence if sentence is None else sentence
        self._options = self._model.default_options if options is None else options
        self._trace: Trace | None = None
        self._words: tuple[engine.Word, ...] = ()
        self._error = ""
        self._status = ""
        self._hovered: int | None = None
        self._hovered_role = LOOKING
        self._hover_source: object = None  # the view (or part) the hovered word came from
        self._pinned: int | None = None
        self._pinned_role = LOOKING
        self._matrix = "weights"
        self._head = 0
        self._colormap = "viridis"
        self._step = LAST_STEP
        self._recompute()
        self._step = self.final_step()  # the app opens on the finished computation, never a skipped step

    # --- read-only state -------------------------------------------------------------------------
    @property
    def model(self) -> ToyModel:
        return self._model

    @property
    def model_source(self) -> str:
        """A built-in model's name, or the path of the file it came from."""
        return self._model_source

    @property
    def sentence(self) -> str:
        return self._sentence

    @property
    def options(self) -> Options:
        return self._options

    @property
    def trace(self) -> Trace | None:
        return self._trace

    @property
    def step_trace(self) -> Trace | None:
        """What the step timeline writes out: the trace itself, or, for a real model's layer read as
        words, without some tokens or rolled out, the layer's own computation the reading was made from
        (a reading's weights are no softmax of any scores, so the steps cannot show them as one)."""
        trace = self._trace
        return trace.reading.source if trace is not None and trace.reading is not None else trace

    @property
    def words(self) -> tuple[engine.Word, ...]:
        """Every typed word with its place in the sentence and whether the model knows it."""
        return self._words

    @property
    def error(self) -> str:
        return self._error

    @property
    def status(self) -> str:
        return self._status

    @property
    def hovered(self) -> int | None:
        return self._hovered

    @property
    def pinned(self) -> int | None:
        return self._pinned

    @property
    def pinned_role(self) -> str:
        """The pinned word's role (LOOKING when nothing is pinned), whatever is hovered meanwhile."""
        return self._pinned_role

    @property
    def focus(self) -> int | None:
        return self._hovered if self._hovered is not None else self._pinned

    @property
    def focus_role(self) -> str:
        """LOOKING or LOOKED_AT: whether the focused word is shown as the one looking (its row, where it
        looks) or the one looked at (its column, who looks at it). The hovered word's role, else the
        pinned word's; LOOKING when nothing is focused."""
        if self._hovered is not None:
            return self._hovered_role
        if self._pinned is not None:
            return self._pinned_role
        return LOOKING

    @property
    def matrix(self) -> str:
        return self._matrix

    @property
    def head(self) -> int:
        return self._head

    @property
    def colormap(self) -> str:
        return self._colormap

    @property
    def step(self) -> int:
        return self._step

    def final_step(self) -> int:
        """The last step that applies to this model and these options: the finished computation. A
        one-head model has no W_O, so its last step is skipped and the one before it is final."""
        return self._final_step(self._trace)

    @staticmethod
    def _final_step(trace: Trace | None) -> int:
        if trace is None:
            return LAST_STEP
        return max((i for i, step in enumerate(STEPS) if not skip_reason(trace, step.key)), default=LAST_STEP)

    # --- setters --------------------------------------------------------------------------------
    def set_model(self, model: ToyModel, source: str | None = None, sentence: str | None = None) -> None:
        """Switch model; its default sentence and options come with it unless a sentence is given."""
        self._leave_real()
        self._model = model
        self._model_source = source or model.name
        self._options = model.default_options
        self._sentence = model.default_sentence if sentence is None else sentence
        self._recompute((self.model_changed, model), (self.sentence_changed, self._sentence),
                        (self.options_changed, self._options))

    def open_model(self, name_or_path: str, sentence: str | None = None, *, target: str | None = None,
                   part: str | None = None) -> None:
        """Load a built-in model by name or a model file, or a real model (its list name, an HF folder or a
        .gguf file: see open_pretrained; an encoder–decoder reads `target` and shows `part`, which any
        other model leaves aside); ModelError leaves the current model as it was."""
        if engine.catalog.is_pretrained_source(name_or_path):
            self.open_pretrained(name_or_path, sentence, target=target, part=part)
            return
        if self.loading and not self.is_real and name_or_path == self._model_source and sentence is None:
            self.cancel_load()  # the toy model shown, chosen back while a real one loads: it stays as it is
            return
        model = engine.resolve_model(name_or_path)
        source = name_or_path if name_or_path in engine.builtin_model_names() else str(Path(name_or_path))
        self.set_model(model, source, sentence)

    def set_sentence(self, sentence: str) -> None:
        if sentence == self._sentence:
            return
        self._drop_generation()  # an edited text is no longer what the model wrote
        self._sentence = sentence
        if self.is_real:  # the forward may run on the worker: the new trace comes when it is done
            self.sentence_changed.emit(sentence)
            self._run_real()
            return
        self._recompute((self.sentence_changed, sentence))

    def set_options(self, options: Options) -> None:
        if options == self._options:
            return
        if self.is_real:
            raise engine.OptionsError("a real model's scaling, mask, positions and heads are its own")
        if options.heads not in self._model.allowed_heads():
            raise engine.OptionsError(f"{options.heads} heads do not split d_proj = {self._model.d_proj}; "
                                      f"choose one of {self._model.allowed_heads()}")
        self._options = options
        self._recompute((self.options_changed, options))

    def update_options(self, **changes) -> None:
        self.set_options(self._options.with_changes(**changes))

    def set_hovered(self, index: int | None, role: str = LOOKING, source: object = None) -> None:
        """The word under the mouse, as the one looking or the one looked at; None when the mouse left.
        An index past the last word (a view hovered while the sentence shrank) counts as None.

        `source` is what was hovered (a view, or a part of one). The mouse leaving one part clears
        the hover only if that part set it: moving from a heatmap cell onto its row's label, the label
        hears of the mouse before the cell hears it left, and the cell's "left" would otherwise clear
        the label's word in every view."""
        if index is None and source is not None and self._hover_source is not source:
            return
        index, role = self._checked(index, role)
        self._hover_source = source if index is not None else None
        if (index, role) == (self._hovered, self._hovered_role):
            return
        old_focus = self._focus_key()
        self._hovered, self._hovered_role = index, role
        self._emit_focus_if_changed(old_focus)

    def set_pinned(self, index: int | None, role: str = LOOKING) -> None:
        """The word kept in focus when the mouse is elsewhere (a click), or None."""
        index, role = self._checked(index, role)
        if (index, role) == (self._pinned, self._pinned_role):
            return
        old_focus = self._focus_key()
        self._pinned, self._pinned_role = index, role
        self.pinned_changed.emit(index)
        self._emit_focus_if_changed(old_focus)

    def toggle_pinned(self, index: int, role: str = LOOKING) -> None:
        """Click a word to pin it; click it again in the same role to unpin (in the other role: switch)."""
        same = (index, role) == (self._pinned, self._pinned_role)
        self.set_pinned(None if same else index, role)

    def set_matrix(self, name: str) -> None:
        if name not in SQUARE_MATRICES:
            raise ValueError(f"the heatmap shows one of {', '.join(SQUARE_MATRICES)}, not {name!r}")
        if self._trace is not None and not self._trace.has_matrix(name, self._head):
            self.matrix_changed.emit(self._matrix)  # not in this trace (see matrix_available): the choice goes back
            return
        if name != self._matrix:
            self._matrix = name
            self.matrix_changed.emit(name)

    def matrix_available(self, name: str) -> bool:
        """Whether the heatmap can show `name` now (a real model's words or rollout have no norms)."""
        return self._trace is None or self._trace.has_matrix(name, self._head)

    def set_head(self, index: int) -> None:
        index = max(0, min(index, self._options.heads - 1))
        if index != self._head:
            self._head = index
            self._let_go_of_other_heads()
            self.head_changed.emit(index)

    def set_colormap(self, name: str) -> None:
        if name != self._colormap:
            self._colormap = name
            self.colormap_changed.emit(name)

    def set_step(self, index: int) -> None:
        """Move the step timeline. The steps are the same for every trace (a step that is off stays in
        place, shown as skipped), so an index stays meaningful when the trace changes; it is clamped here."""
        index = max(0, min(index, LAST_STEP))
        if index != self._step:
            self._step = index
            self._let_go_of_step_matrices()
            self.step_changed.emit(index)

    def _let_go_of_step_matrices(self) -> None:
        """A long text's scores, scaled and masked scores, made for the step being left, are let go: the
        next step makes again those it shows. Stepping through them at 8,192 tokens kept 268 MB a matrix
        and head (over a gigabyte for one head). The weights and the heatmap's matrix stay."""
        if self._trace is None or self._trace.n < LONG_TEXT_TOKENS:
            return
        names = [name for name in STEP_MATRICES if name != self._matrix]
        for head in made_items(self._trace.heads):
            let_go(head, names)

    def _let_go_of_other_heads(self) -> None:
        """A long text's heads other than the one shown let go of the n × n matrices and outputs made
        for them, in the trace shown and in the layer's own trace a reading was made from: clicking
        through the heads of a 2,048-token layer kept 32 MB a head (weights and a step's scores), and
        they were still held while an ablation's forward ran beside them, at the window's peak. A head
        shown again makes them again (a real model's weights from the engine's cache while it has them)."""
        if self._trace is None or self._trace.n < LONG_TEXT_TOKENS:
            return
        traces = [self._trace] if self._trace.reading is None else [self._trace, self._trace.reading.source]
        for trace in traces:
            for head in made_items(trace.heads):
                if head.index != self._head:
                    let_go(head, HEAD_LET_GO)

    def set_model_source(self, source: str) -> None:
        """Where the current model now lives, e.g. the file it was just saved as."""
        if source != self._model_source:
            self._model_source = source
            self.model_source_changed.emit(source)

    def notify_model_edited(self) -> None:
        """The model was edited in place: recompute, and tell the views that show it."""
        self._recompute((self.model_edited, self._model))

    def refresh(self) -> None:
        """Recompute with the same state (e.g. after the colour scheme changed)."""
        self._recompute()

    # --- the one place the engine runs ----------------------------------------------------------
    def _retokenize(self) -> None:
        """The typed words of the current sentence and model; none for a sentence the engine refuses
        for its length (a pasted megabyte would otherwise become a hundred thousand chips, and each
        key typed into a 5,000-word sentence would restyle 5,000 of them)."""
        if self.is_real:
            return  # set from the shown trace in _recompute
        if len(self._sentence) > engine.MAX_SENTENCE_CHARS:
            self._words = ()
            return
        try:
            self._words = engine.tokenize(self._sentence, self._model.vocabulary).words
        except EngineError:  # text that is not valid Unicode: no words; the computation says why
            self._words = ()
        if len(self._words) > engine.MAX_SENTENCE_WORDS:
            self._words = ()

    def _recompute(self, *changes: tuple[QtCore.SignalInstance, object], pin_last_row: bool = False) -> None:
        """Run the engine on the current state. `changes` are the (signal, value) pairs that say what
        changed; they are emitted once the words, trace, head, focus and step all fit the new state,
        so a view reading the controller in its slot never mixes the new model with the old trace.
        `pin_last_row`: the new trace's last row is pinned with it (a generation's token being
        written), so the views hear of the focus once, not of the old one dropped and then the new."""
        started = time.perf_counter()
        was_final = self._step == self._final_step(self._trace)
        self._retokenize()
        if self.is_real:
            trace, error = self._real_trace()
            self._words = self._real_words(trace)
        else:
            try:
                trace = engine.run(self._model, self._sentence, self._options)
                error = ""
            except (EngineError, ModelError) as exc:
                trace, error = None, str(exc)
        elapsed_ms = (time.perf_counter() - started) * 1000
        before = (self._head, (self._pinned, self._pinned_role), self._focus_key(), self._step, self._matrix)
        if self._trace is not None and trace is not self._trace and self._trace.n >= LONG_TEXT_TOKENS:
            self._release_memory_soon()  # a long text's n × n matrices go: their memory back to the system
        self._trace = trace
        self._head = max(0, min(self._head, self._options.heads - 1))  # fewer heads than before: clamp
        if not self.matrix_available(self._matrix):  # e.g. norms, and then Words switched on
            self._matrix = "weights"
        self._clear_tokens_out_of_range()
        if pin_last_row and trace is not None:
            self._pinned, self._pinned_role = trace.n - 1, LOOKING
        if was_final and trace is not None:  # e.g. two heads now: W_O applies and finishes the computation
            self._step = max(0, min(self._final_step(trace), LAST_STEP))
        for signal, value in changes:
            signal.emit(value)
        self._set_error(error)
        if trace is None:
            self._set_status(error)
        else:
            self._set_status(self._describe_real(trace) if self.is_real else self._describe(trace, elapsed_ms))
        # All the state fits the new trace before anyone hears of it, and the trace is announced
        # first: a view that redraws on a head, focus or step change already has its trace.
        self.trace_changed.emit(trace)
        self._emit_changes_since(before)

    def _emit_changes_since(self, before: tuple) -> None:
        head, pinned, focus, step, matrix = before
        if self._matrix != matrix:
            self.matrix_changed.emit(self._matrix)
        if self._head != head:
            self.head_changed.emit(self._head)
        if (self._pinned, self._pinned_role) != pinned:
            self.pinned_changed.emit(self._pinned)
        if self._focus_key() != focus:
            self.focus_changed.emit(self.focus)
        if self._step != step:
            self.step_changed.emit(self._step)

    def _clear_tokens_out_of_range(self) -> None:
        """After the sentence shrank (or failed), a hovered or pinned index past the last word is dropped
        (quietly: _recompute announces the changes once the new trace is out)."""
        if self._hovered is not None and self._hovered >= self._token_count(self._hovered_role):
            self._hovered, self._hovered_role = None, LOOKING
        if self._pinned is not None and self._pinned >= self._token_count(self._pinned_role):
            self._pinned, self._pinned_role = None, LOOKING

    def _token_count(self, role: str = LOOKING) -> int:
        """How many words a focus in `role` may point at: the rows', or the columns' (cross-attention's
        columns are another text's tokens)."""
        if not self._trace:
            return 0
        return self._trace.n_keys if role == LOOKED_AT else self._trace.n

    def _checked(self, index: int | None, role: str) -> tuple[int | None, str]:
        if role not in FOCUS_ROLES:
            raise ValueError(f"a focus role is one of {', '.join(FOCUS_ROLES)}, not {role!r}")
        if index is None or not 0 <= index < self._token_count(role):
            return None, LOOKING
        return index, role

    def _focus_key(self) -> tuple[int | None, str]:
        return self.focus, self.focus_role

    def _emit_focus_if_changed(self, old_focus: tuple[int | None, str]) -> None:
        if self._focus_key() != old_focus:
            self.focus_changed.emit(self.focus)

    def _set_error(self, error: str) -> None:
        if error != self._error:
            self._error = error
            self.error_changed.emit(error)

    def _set_status(self, status: str) -> None:
        if status != self._status:
            self._status = status
            self.status_changed.emit(status)

    @staticmethod
    def _describe(trace: Trace, elapsed_ms: float) -> str:
        opts = trace.options
        d_k = trace.heads[0].d_k
        parts = [f"{trace.n} word{'s' if trace.n != 1 else ''}",
                 f"{opts.heads} head{'s' if opts.heads != 1 else ''} of d_k = {d_k}",
                 f"scaled by √{d_k}" if opts.scale else "not scaled",
                 "causal mask" if opts.causal else "no mask",
                 "positional encoding" if opts.positional else "no positions"]
        text = " · ".join(parts) + f" — computed in {elapsed_ms:.2f} ms"
        if trace.unknown:
            text += f". Left out (unknown): {', '.join(trace.unknown)}"
        return text
