"""Between a controller and a ViewState: what the window shows, captured as a state; a state opened in a
controller (for the command line, a dropped figure or a view file); and a private copy of a controller
for drawing one figure.

An export draws a fresh view of a copy, never the window's own views: the copy has no hovered word
(unless the user asks for the picture as on screen), so nothing the mouse did on its way to the Export
dialog lands in the file, and the window is left exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable

from . import engine
from .controller import LOOKED_AT, Controller
from .engine.model import model_from_dict, model_to_dict, model_to_json
from .engine.steps import STEP_KEYS, step_index
from .engine.trace import NORM_UNAVAILABLE
from .figure_census import CensusChoice
from .figure_state import COLORMAPS, COLOURED_VIEWS, Focus, ViewState
from .figure_text import FigureFacts
from .model_hash import source_sha256, text_sha256
from .pretrained_display import RealView

MAX_EMBEDDED_MODEL_CHARS = 256_000  # a toy model larger than this is named and hashed, not carried along


class FigureStateMismatch(engine.EngineError):
    """A state that does not fit the model it names (a head, layer or word that is not there)."""


class FigureController(Controller):
    """A controller for one figure: the same model, text, options, layer, reading, switched-off heads,
    head, matrix, colours and step as another, computing nothing it does not have to (a real model's
    forward is shared, not run again). The passing hover is left out: the copy pins `focus` (by default
    the pinned word)."""

    # The census a model-view figure is coloured by, when the window has it at hand (else measured or
    # read from the cache by figure_census.census_of)
    census_result = None
    census_texts: str | None = None

    @classmethod
    def copy_of(cls, source: Controller, *, focus: tuple[int, str] | None = ...) -> FigureController:
        copy = cls(source.model, source.sentence if not source.is_real else None,
                   source.options if not source.is_real else None)
        if source.is_real:
            copy._adopt_real(source)
        copy.set_matrix(source.matrix)
        copy.set_head(source.head)
        copy.set_colormap(source.colormap)
        copy.set_step(source.step)
        focus = pinned_focus(source) if focus is ... else focus
        if focus is not None:
            copy.set_pinned(*focus)
        return copy

    def _adopt_real(self, source: Controller) -> None:
        """The other controller's real model and forward, as they are (no load, no forward)."""
        self._real_model, self._ptrace, self._real_error = source.real_model, source.pretrained_trace, ""
        self._model_source, self._sentence, self._options = source.model_source, source.sentence, source.options
        self._layer, self._ablated, self._real_view = source.layer, source.ablated, source.real_view
        self._target, self._part, self._heads_off = source.target, source.part, source.heads_off  # encoder–decoders
        self._recompute()


def pinned_focus(controller: Controller) -> tuple[int, str] | None:
    """The pinned word and its role, or None."""
    return None if controller.pinned is None else (controller.pinned, controller.pinned_role)


def hovered_focus(controller: Controller) -> tuple[int, str] | None:
    """The word in focus as on screen: the hovered one, else the pinned one."""
    return None if controller.focus is None else (controller.focus, controller.focus_role)


# --- capture ---------------------------------------------------------------------------------------

def capture_state(controller: Controller, view: str, *, span: str | None = None, all_heads: bool = True,
                  strongest: int | None = None, grid: str | None = None,
                  focus: tuple[int, str] | None = ..., census: CensusChoice | None = None) -> ViewState:
    """What `controller` shows in `view`, with the view's own settings passed in (the heatmap's colour
    span, the arcs' heads and strongest lines) and the word in focus (by default the pinned one)."""
    trace = controller.trace
    chosen = pinned_focus(controller) if focus is ... else focus
    focus = None
    if chosen is not None and trace is not None:
        labels = trace.labels_of(chosen[1] == LOOKED_AT)
        focus = Focus(chosen[0], chosen[1], labels[chosen[0]]) if chosen[0] < len(labels) else None
    arcs = view == "arcs"  # each view's own settings only where they draw something
    # the text the drawn trace read: a real model's differs from the box while a forward is on its way,
    # and while a generation's text so far is shown (the box holds all that was written)
    ptrace = controller.pretrained_trace
    sentence = ptrace.text if ptrace is not None else controller.sentence
    common = dict(sentence=sentence, view=view, head=controller.head, matrix=controller.matrix,
                  focus=focus, colormap=controller.colormap if view in COLOURED_VIEWS else COLORMAPS[0],
                  span=span if view == "heatmap" else None,
                  step=STEP_KEYS[controller.step] if view == "steps" else None,
                  all_heads=all_heads or not arcs, strongest=strongest if arcs else None, grid=grid,
                  census=census if view == "model" and controller.is_real else None)
    if controller.is_real:
        reading = controller.real_view
        pair = controller.is_encoder_decoder  # its target as the drawn trace read it, and the attention shown
        return ViewState(model=controller.model_source, real=True, model_sha256=source_sha256(controller.model_source),
                         layer=controller.layer, ablated=tuple(sorted(controller.ablated)),
                         reading={"words": reading.merge_words, "hide_specials": reading.hide_specials,
                                  "hide_first": reading.hide_first, "rollout": reading.rollout},
                         target=(ptrace.target if ptrace is not None else controller.target) if pair else None,
                         part=controller.part if pair else None, **common)
    model = controller.model
    text = model_to_json(model)
    builtin = controller.model_source in engine.builtin_model_names()
    unchanged = builtin and text == model_to_json(engine.load_builtin(controller.model_source))  # no edits
    carried = None if unchanged or len(text) > MAX_EMBEDDED_MODEL_CHARS else model_to_dict(model)
    return ViewState(model=controller.model_source, model_sha256=text_sha256(text), toy_model=carried,
                     options=controller.options.to_dict(), **common)


# --- opening a state -------------------------------------------------------------------------------

def controller_for_state(state: ViewState) -> tuple[Controller, list[str]]:
    """A controller (working in this thread) showing `state`, and notes for the user (e.g. a model file
    that changed since the figure was made). Raises EngineError or ModelError when the state cannot be
    shown: a model that does not open, or a head, layer or word that is not there."""
    controller = Controller()
    try:
        notes = open_state(controller, state)
    except BaseException:
        controller.deleteLater()
        raise
    return controller, notes


def open_state(controller: Controller, state: ViewState, on_ready: Callable[[list[str]], None] | None = None
               ) -> list[str]:
    """Open `state` in `controller`. A background controller loads a real model on its worker: the
    layer, reading, heads and focus are set once it is in, and `on_ready(notes)` is called then (at once
    for a toy model or a controller that loads in this thread)."""
    notes = []
    if state.real:
        if state.model_sha256 and source_sha256(state.model) not in ("", state.model_sha256):
            notes.append(f"{state.model} has changed since this view was saved: its files give another hash")
        controller.open_model(state.model, state.sentence, target=state.target, part=state.part)
        if not controller.busy:  # loaded in this thread (or refused above): finish now
            apply_view(controller, state)
            if on_ready is not None:
                on_ready(notes)
            return notes
        _finish_when_loaded(controller, state, notes, on_ready)
        return notes
    if state.toy_model is not None:
        model = model_from_dict(state.toy_model)
    else:
        model = engine.resolve_model(state.model)
        if state.model_sha256 and text_sha256(model_to_json(model)) != state.model_sha256:
            notes.append(f"{state.model} has changed since this view was saved: its numbers give another hash")
    options = engine.Options(**state.options) if state.options is not None else model.default_options
    if options.heads not in model.allowed_heads():
        raise FigureStateMismatch(f"{options.heads} heads do not fit {model.name}")
    controller.set_model(model, state.model, state.sentence)
    controller.set_options(options)
    apply_view(controller, state)
    if on_ready is not None:
        on_ready(notes)
    return notes


def _finish_when_loaded(controller: Controller, state: ViewState, notes: list[str],
                        on_ready: Callable[[list[str]], None] | None) -> None:
    """Apply the rest of `state` once the worker has loaded the model; nothing more if the load fails
    (the window says why)."""
    def loaded(*_):
        stop()
        try:
            apply_view(controller, state)
        except engine.EngineError as exc:
            notes.append(f"the view could not be opened whole: {exc}")
        if on_ready is not None:
            on_ready(notes)

    def stop(*_):
        controller.real_model_changed.disconnect(loaded)
        controller.load_failed.disconnect(stop)

    controller.real_model_changed.connect(loaded)
    controller.load_failed.connect(stop)


def apply_view(controller: Controller, state: ViewState) -> None:
    """Everything after the model and text: layer, reading, switched-off heads, head, matrix, colours,
    step and the pinned word."""
    if controller.is_real:
        model = controller.real_model
        if not 0 <= state.layer < model.n_layers:
            raise FigureStateMismatch(f"{model.name} has {model.n_layers} layers, not {state.layer + 1}")
        bad = [(lay, h) for lay, h in state.ablated if not (0 <= lay < model.n_layers and 0 <= h < model.n_heads)]
        if bad:
            layer, head = bad[0]
            raise FigureStateMismatch(f"{model.name} has no head {head + 1} in layer {layer + 1} to switch off")
        controller.set_layer(state.layer)
        reading = state.reading
        controller.set_real_view(RealView(merge_words=reading["words"], hide_specials=reading["hide_specials"],
                                          hide_first=reading["hide_first"], rollout=reading["rollout"]))
        controller.set_ablated(state.ablated)
    if not 0 <= state.head < controller.options.heads:
        raise FigureStateMismatch(f"there are {controller.options.heads} heads here, not {state.head + 1}")
    controller.set_head(state.head)
    if not controller.matrix_available(state.matrix):
        raise FigureStateMismatch(NORM_UNAVAILABLE)
    controller.set_matrix(state.matrix)
    controller.set_colormap(state.colormap)
    controller.set_step(step_index(state.step) if state.step in STEP_KEYS else controller.final_step())
    if state.focus is not None:
        controller.set_pinned(focus_index(controller, state.focus), state.focus.role)


def focus_index(controller: Controller, focus: Focus) -> int:
    """The token `focus` names: its index when that token still carries its word, else the word itself
    (its label such as "the₂", or the first token that reads as it). A word looked at in cross-attention
    is one of the source's tokens, the columns."""
    trace = controller.trace
    columns = trace is not None and focus.role == LOOKED_AT and trace.key_tokens is not None
    labels = [] if trace is None else trace.labels_of(columns)
    if 0 <= focus.index < len(labels) and (not focus.word or labels[focus.index] == focus.word):
        return focus.index
    if focus.word:
        found = find_word(labels, [] if trace is None else trace.key_tokens if columns else trace.tokens, focus.word)
        if found is not None:
            return found
    shown = ", ".join(labels[:12]) + (", …" if len(labels) > 12 else "")
    raise FigureStateMismatch(f"there is no word {focus.word or focus.index + 1!r} to focus on here; "
                              f"the words are: {shown}")


def find_word(labels: list[str], tokens: list[str], word: str) -> int | None:
    """A word as a user types it: a label exactly ("the₂"), else the first token that reads as it,
    case aside ("the", "The", "ing" for "·ing")."""
    if word in labels:
        return labels.index(word)
    wanted = word.casefold()
    for i, token in enumerate(tokens):
        if token.casefold() == wanted or token.lstrip("·").casefold() == wanted:
            return i
    return None



def figure_facts(controller: Controller, visible: tuple[range, range] | None = None) -> FigureFacts:
    """What the caption says of the computation `controller` holds."""
    trace = controller.trace
    if trace is None:
        raise engine.EngineError(controller.error or "there is nothing to draw yet: type a text the model can read")
    d_k = trace.heads[0].d_k
    if controller.is_real:
        model = controller.real_model
        unit = "words" if controller.real_view.merge_words else "tokens"
        # the text named is an encoder–decoder's source: its own tokens (the note names the target)
        n = len(controller.pretrained_trace.encoded.labels) if controller.is_encoder_decoder else trace.n
        return FigureFacts(model.name, n, model.n_heads, d_k, unit, model.n_layers, None,
                           controller.display_note, visible=visible)
    return FigureFacts(controller.model.name, trace.n, trace.options.heads, d_k, "words", None,
                       trace.options.to_dict(), "", tuple(trace.unknown), visible)
