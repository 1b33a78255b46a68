"""The controller's half for an encoder–decoder (BART): a source text (the sentence), a target text, and
which of its three kinds of attention the main views show (engine/pretrained/encoder_decoder_view.py).

An encoder–decoder opens as any real model does (the same worker, progress, Cancel and messages); while
it is open `real_model` is it seen through the chosen part, whose layers and heads are that part's,
and `pretrained_trace` the last run seen through it. Switching the part runs nothing: the run holds
all three. Editing the source or the target, or switching a head off, runs the model again on the
worker; `ablated` is then the part shown's heads off, `heads_off` those of every part. The readings
(words, hidden tokens, rollout) read the part shown as any real model's layer is read
(pretrained_display.shown_trace: cross-attention per axis, and no rollout for it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6 import QtCore

from .controller_pretrained import PretrainedControls
from .engine import EngineError, Options, Trace
from .pretrained_display import shown_trace

if TYPE_CHECKING:  # types only: the modules load once an encoder–decoder is opened
    from .engine.pretrained.encoder_decoder_view import EncoderDecoderPart, EncoderDecoderTrace

CROSS = "cross"  # the part shown when one opens: the alignment of target and source (as the engine's CROSS)
TARGET_STOPPED = "Stopped before the model read this target: change a text to run it again"
EMPTY_TARGET = "The target is empty: type the text the decoder reads in the Target box"
TARGET_NOTE_CHARS = 60  # of the target, in the line saying what is shown
WRITE_TARGET_LANE = "write target"


@dataclass(frozen=True)
class WrittenTarget:
    """A target the model wrote: for which source, its tokens as written, with which heads off, and the
    indices of the tokens its files forced."""

    source: str
    ids: tuple[int, ...]
    off: frozenset[tuple[str, int, int]]
    forced: frozenset[int]


def as_a_box_holds_it(text: str) -> str:
    """`text` with each half of a character (a lone surrogate: a byte that was not UTF-8, read in) as
    U+FFFD, the character that stands for one. A target starts as the source text, and the Target box
    cannot hold half a character (Qt's line edit drops it), so it showed another target than the one
    the model read."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class EncoderDecoderControls(PretrainedControls):
    """The target text and the part shown of an encoder–decoder (the Controller subclasses this)."""

    target_changed = QtCore.Signal(str)
    part_changed = QtCore.Signal(str)   # "encoder", "decoder" or "cross"
    target_written_changed = QtCore.Signal()  # a target written, the count of it the views read, or Write's error

    def _init_pretrained(self, background: bool) -> None:
        super()._init_pretrained(background)
        self._target = ""
        self._part = CROSS
        self._opening_target = ""
        self._opening_part = CROSS
        self._heads_off: frozenset[tuple[str, int, int]] = frozenset()
        self._written_target: WrittenTarget | None = None  # when the model wrote the target (write_target)
        self._target_shown: int | None = None  # how many of its tokens the views read (None: all of them)
        self._write_error = ""

    @property
    def is_encoder_decoder(self) -> bool:
        return self._real_model is not None and self._real_model.is_encoder_decoder

    @property
    def target(self) -> str:
        """The text the encoder–decoder's decoder reads ("" until one is opened)."""
        return self._target

    @property
    def heads_off(self) -> frozenset[tuple[str, int, int]]:
        """Every part's heads switched off, as (part, layer, head), 0-based."""
        return self._heads_off

    @property
    def part(self) -> str:
        """Which attention of an encoder–decoder the main views show: "encoder", "decoder" or "cross"."""
        return self._part

    def open_pretrained(self, name_or_path: str, sentence: str | None = None, *, target: str | None = None,
                        part: str | None = None) -> None:
        """As for any real model. An encoder–decoder reads `target` and shows `part` when they are given
        (a view file, the last session); else its target stays as it is, or starts as the source (BART
        is a denoising autoencoder: the target it is trained to write for a text is the text), and the
        part shown stays."""
        if part is not None:
            _check_part(part)
        text = self._sentence if sentence is None else sentence
        target = None if target is None else as_a_box_holds_it(target)
        if target is not None and target != self._target and self.is_encoder_decoder:
            self._target = target  # the box shows it while the model loads (and a target typed meanwhile wins)
            self.target_changed.emit(target)
        self._opening_target = (target if target is not None else self._target if self.is_encoder_decoder
                                else as_a_box_holds_it(text))
        self._opening_part = self._part if part is None else part
        super().open_pretrained(name_or_path, sentence)

    @property
    def target_written(self) -> WrittenTarget | None:
        """The target as the model wrote it for the source shown (read as it wrote it); None for a target
        typed, or one written for another source (then read as its text is tokenised)."""
        written = self._written_target
        return written if written is not None and written.source == self._sentence else None

    @property
    def target_shown(self) -> int:
        """How many tokens of a written target the views read up to and score (1 … all): the last row
        is the one that chose token `target_shown`. 0 with no target written."""
        written = self.target_written
        return 0 if written is None else self._target_shown or len(written.ids)

    @property
    def write_error(self) -> str:
        """Why the last Write wrote nothing ("" when it did, or none was asked)."""
        return self._write_error

    def target_choice(self) -> tuple[int, int, bool] | None:
        """(index, token id, written?) of the target token the views' last row scored: the token it chose
        with a target written, the typed target's last token otherwise; None before a run."""
        ptrace = self._ptrace if self.is_encoder_decoder else None
        if ptrace is None or ptrace.result.scored is None:
            return None
        written = self.target_written
        if written is not None and ptrace.result.target.ids[1:].tolist() == list(written.ids[:self.target_shown - 1]):
            return self.target_shown - 1, ptrace.result.scored, True
        return ptrace.n - 1, ptrace.result.scored, False

    @property
    def target_read(self) -> str:
        """The target the views read: the text written before the token shown, or the whole target."""
        written = self.target_written
        if written is None or self._target_shown is None:
            return self._target
        tokenizer = self._real_model.tokenizer
        return tokenizer.decode([i for i in written.ids[:self._target_shown - 1] if i not in tokenizer.special_ids])

    @property
    def target_ids_read(self) -> tuple[int, ...] | None:
        """A written target's tokens up to the one shown (run as written); None for a target typed."""
        written = self.target_written
        return None if written is None else written.ids[:self.target_shown]

    def set_target(self, target: str) -> None:
        """The encoder–decoder's target; the model reads both texts again on the worker (a Write still
        going is dropped: what was typed wins)."""
        target = as_a_box_holds_it(target)
        if target == self._target:
            return
        self._target, self._written_target, self._target_shown, self._write_error = target, None, None, ""
        self.target_changed.emit(target)
        self.target_written_changed.emit()
        if self.is_encoder_decoder:
            if self._runner is not None:
                self._runner.drop(WRITE_TARGET_LANE)
            self._run_real()

    def show_target_written(self, count: int) -> None:
        """The views read a written target up to its token `count` (clamped to 1 … all), whose choice
        their last row made, and list the candidates it was chosen from; the model reads it on the worker."""
        written = self.target_written
        if written is None:
            return
        count = max(1, min(int(count), len(written.ids)))
        if count == self.target_shown:
            return
        self._target_shown = None if count == len(written.ids) else count
        self.target_written_changed.emit()
        self._run_real()

    def write_target(self, tokens: int) -> None:
        """The model writes a target for the source (encoder_decoder_write.py: greedy, the files' forced
        tokens applied, the heads switched off staying off), at most `tokens` of them, on the worker;
        the Target box then holds it and the views show the decoder reading it as it wrote it."""
        if not self.is_encoder_decoder:
            return
        model, source, off, before = self._real_model, self._sentence, self._heads_off, self._target
        self._write_error = ""
        self.target_written_changed.emit()

        def write(progress):
            from .engine.pretrained.encoder_decoder_write import write_target
            from .engine.pretrained.generate import GenerationSettings

            return write_target(model.model, source, GenerationSettings(tokens=tokens), off, progress)

        runner = self._worker()
        if runner is None:
            try:
                self._take_target_written(write(None), before)
            except EngineError as error:
                self._target_write_failed(model.name, str(error))
            return
        # a lane of its own: a run of an edit still going ends first, and its views stay if this fails
        runner.submit(WRITE_TARGET_LANE, write, lambda generation: self._take_target_written(generation, before),
                      lambda message: self._target_write_failed(model.name, message))

    def _take_target_written(self, generation, before: str) -> None:
        """A target written came back: kept when the source, the heads and the target are still the ones it
        was written from (a target typed meanwhile wins)."""
        if (not self.is_encoder_decoder or generation.source_text != self._sentence
                or generation.off != self._heads_off or self._target != before):
            return
        self._target = generation.written
        self._written_target = WrittenTarget(generation.source_text, tuple(int(i) for i in generation.ids),
                                             generation.off, frozenset(i for i, s in enumerate(generation.steps)
                                                                       if s.forced))
        self._target_shown = None
        self.target_changed.emit(self._target)
        self.target_written_changed.emit()
        self._run_real()

    def _target_write_failed(self, name: str, message: str) -> None:
        """Write wrote nothing: why, in the target box and the status line ("" after Cancel: nothing to say);
        the target and the views stay as they were."""
        self._write_error = self._failure_message(name, message) if message else ""
        if self._write_error:
            self._set_status(self._write_error)
        self.target_written_changed.emit()

    def set_part(self, part: str) -> None:
        """Show the encoder's, the decoder's or the cross-attention (its own layers and heads)."""
        from .engine.pretrained.encoder_decoder_view import EncoderDecoderPart

        _check_part(part)
        if not self.is_encoder_decoder or part == self._part:
            return
        self._part = part
        model = EncoderDecoderPart(self._real_model.model, part)
        self._real_model = model
        self._ptrace = self._ptrace.with_part(model) if self._ptrace is not None else None
        self._layer = min(self._layer, model.n_layers - 1)
        self._options = _options_of(model)
        self._ablated = _pairs_of(self._heads_off, part)
        self._recompute((self.real_model_changed, model), (self.options_changed, self._options),
                        (self.pretrained_trace_changed, self._ptrace), (self.layer_changed, self._layer),
                        (self.ablation_changed, self._ablated), (self.part_changed, part))

    # --- the hooks of PretrainedControls ---------------------------------------------------------------
    def _loader(self, source: str, text: str):
        """An encoder–decoder folder opens here, reading `text` and the target; any other model as before.
        Which it is, is found on the worker (it reads config.json)."""
        plain = super()._loader(source, text)
        target, part = self._opening_target, self._opening_part

        def load(progress):
            from .engine.pretrained.encoder_decoder import is_encoder_decoder_folder, open_encoder_decoder
            from .engine.pretrained.encoder_decoder_view import EncoderDecoderPart

            if not is_encoder_decoder_folder(source):
                return plain(progress)
            model = EncoderDecoderPart(open_encoder_decoder(source, lambda f, t: progress(0.8 * f, t)), part)
            return (model, *_run_pair(model, text, target, frozenset()))

        return load

    def _enter_real(self, source, text, model, ptrace, error, forward_ms) -> None:
        self._heads_off = frozenset()  # every head on in a model just opened
        self._written_target, self._target_shown, self._write_error = None, None, ""
        if model.is_encoder_decoder:
            # a target typed while it loaded (another encoder–decoder was open) wins, as a sentence does
            self._target = self._target if self.is_encoder_decoder else self._opening_target
            self._part = model.part
        super()._enter_real(source, text, model, ptrace, error, forward_ms)
        if model.is_encoder_decoder:
            self._options = _options_of(model)
            self.options_changed.emit(self._options)
            self.target_changed.emit(self._target)
            self.part_changed.emit(self._part)
            if ptrace is not None and ptrace.text == self._sentence and ptrace.target != self.target_read:
                self._run_real()  # (a stale text is run again by the one-text models' half)

    def _run_real(self) -> None:
        if not self.is_encoder_decoder:
            super()._run_real()
            return
        model, source, target, off, written = self._real_model, self._sentence, self.target_read, \
            self._heads_off, self.target_ids_read
        runner = self._worker()
        if runner is None:
            self._accept_pair(_run_pair(model, source, target, off, written))
            return
        runner.submit("run", lambda _progress: _run_pair(model, source, target, off, written), self._accept_pair,
                      lambda message: self._accept_forward(None, self._failure_message(model.name, message), 0.0)
                      if message else self._after_cancelled_forward())

    def _accept_pair(self, result: tuple[EncoderDecoderTrace | None, str, float]) -> None:
        """A run came back: seen through the part chosen now (it may have changed while it ran)."""
        ptrace, error, forward_ms = result
        if ptrace is not None and self.is_encoder_decoder:
            ptrace = ptrace.with_part(self._real_model)
        self._accept_forward(ptrace, error, forward_ms)

    def _after_cancelled_forward(self) -> None:
        """As for any real model; a changed target says the model has not read it, and heads switched
        off or on go back to the shown run's."""
        ptrace = self._ptrace if self.is_encoder_decoder else None
        if ptrace is not None and ptrace.target != self.target_read:
            self._accept_forward(None, TARGET_STOPPED, 0.0)
            return
        if ptrace is not None and ptrace.text == self._sentence and ptrace.off != self._heads_off:
            self._heads_off, self._ablated = ptrace.off, ptrace.ablated
            self.ablation_changed.emit(self._ablated)
            return
        super()._after_cancelled_forward()

    def _real_trace(self) -> tuple[Trace | None, str]:
        if not self.is_encoder_decoder:
            return super()._real_trace()
        self._real_note = ""
        if self._ptrace is None or self._real_error:
            return None, self._real_error or "Running the model…"
        trace, reading = shown_trace(self._ptrace, self._layer, self._real_view)
        # the bar's line and a figure's caption say which texts, then what the reading did
        self._real_note = "; ".join(filter(None, (_part_note(self._ptrace), reading)))
        return trace, ""

    def _describe_real(self, trace: Trace) -> str:
        if not self.is_encoder_decoder:
            return super()._describe_real(trace)
        from .engine.pretrained.encoder_decoder_view import PARTS

        model, ptrace = self._real_model, self._ptrace
        rows = "source" if model.part == "encoder" else "target"  # the run's own tokens, whatever the reading shows
        size = f"{ptrace.n} target × {len(ptrace.key_tokens)} source tokens" if ptrace.key_tokens is not None else \
            f"{ptrace.n} {rows} tokens"
        parts = [model.name, PARTS[model.part], size, f"layer {self._layer + 1} of {model.n_layers}",
                 f"{model.n_heads} heads of d_k = {trace.heads[0].d_k}"]
        if ptrace.off:
            parts.append(f"{len(ptrace.off)} head{'s' if len(ptrace.off) != 1 else ''} off "
                         f"({len(ptrace.ablated)} in this attention)")
        text = " · ".join(parts) + f" — {self._timing_note()}"
        if ptrace.encoded.cut is not None:
            text += f". Source cut: {ptrace.encoded.cut.describe()}"
        if ptrace.result.target_cut is not None:
            text += f". Target cut: {ptrace.result.target_cut.describe()}"
        return text

    def set_ablated(self, pairs) -> None:
        """Switch these (layer, head) pairs of the part shown off (and its others back on); the heads of
        the other parts stay as they are."""
        if not self.is_encoder_decoder:
            super().set_ablated(pairs)
            return
        pairs = frozenset((int(lay), int(h)) for lay, h in pairs)
        if pairs == self._ablated:
            return
        part = self._part
        self._heads_off = frozenset(t for t in self._heads_off if t[0] != part) | {(part, *p) for p in pairs}
        self._ablated = pairs
        self.ablation_changed.emit(pairs)
        self._run_real()


def _check_part(part: str) -> None:
    from .engine.pretrained.encoder_decoder_view import PARTS

    if part not in PARTS:
        raise ValueError(f"the part shown is one of {', '.join(PARTS)}, not {part!r}")


def _options_of(model: EncoderDecoderPart) -> Options:
    return Options(scale=True, causal=model.part == "decoder", positional=False, heads=model.n_heads)


def _part_note(ptrace: EncoderDecoderTrace) -> str:
    """Which attention of the two texts is shown, in one line."""
    target = " ".join(ptrace.target.split())
    target = target if len(target) <= TARGET_NOTE_CHARS else target[:TARGET_NOTE_CHARS - 1].rstrip() + "…"
    return {"encoder": "the encoder's self-attention over the source",
            "decoder": f"the decoder's causal self-attention over the target “{target}”",
            "cross": f"cross-attention: the target “{target}” reads the source"}[ptrace.part]


def _pairs_of(off: frozenset[tuple[str, int, int]], part: str) -> frozenset[tuple[int, int]]:
    return frozenset((layer, head) for named, layer, head in off if named == part)


def _run_pair(model: EncoderDecoderPart, source: str, target: str, off: frozenset[tuple[str, int, int]],
              written: tuple[int, ...] | None = None) -> tuple[EncoderDecoderTrace | None, str, float]:
    """One run of both texts with the heads `off` (`written`: the target's tokens as the model wrote them),
    its error and milliseconds: a text the model cannot read is an error to show (on the worker: it
    touches no state of the controller)."""
    from .engine.pretrained.encoder_decoder_view import EncoderDecoderTrace

    if source.strip() and not target.strip() and written is None:  # (an empty source: the engine's message)
        return None, EMPTY_TARGET, 0.0
    started = time.perf_counter()
    try:
        result = model.model.run(source, target, off, written)
    except EngineError as error:
        return None, str(error), 0.0
    return (EncoderDecoderTrace(model.name, source, target, result, model, off), "",
            (time.perf_counter() - started) * 1000)
