"""The controller's part for a decoder that writes: Generate, Stop, and a scrubber over what it wrote.

A generation runs on the worker's "write" lane (generate.py, keeping its decoder's layer inputs). The
text box holds the prompt and what is written so far, token by token; the views show "the text so
far" at the scrubber's step: the prompt and the first k tokens written, as the trace of a forward
over them (generation_trace.py, made from the kept inputs, never by running the model again), with
its last row pinned (the token whose query chose the next one) and the next-token list holding the
candidates the next token was chosen from. While it writes, the views follow the newest token: the
worker makes the newest trace between two tokens when the window has taken the last one.

A generation stays on screen until the text is edited or another model opens. Generate again while
it is shown writes from the same prompt with the heads now switched off; when those differ, the
generation before is kept beside it (`compared`), so the two continuations can be read side by side.
Scrubbing needs the heads the generation was written with (its traces are made with them).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING

from PySide6 import QtCore

from .controller_encoder_decoder import EncoderDecoderControls
from .engine.errors import EngineError
from .engine.lazy_trace import made_fields
from .engine.memory import release_free_memory
from .scrub_ahead import ScrubAhead
from .window_turn import WindowTurn

if TYPE_CHECKING:
    from .engine.pretrained.generate import Generation
    from .engine.pretrained.generation_trace import SharedProjections
    from .engine.pretrained.real_trace import PretrainedTrace
    from .engine.pretrained.sampling import Sampling

POLL_MS = 30            # how often the window looks for new tokens while one is written
FOLLOW_MS = 200         # the views follow the newest token at most this often, and take at most a third of the
                        # time (the worker's making of the text so far with the views' drawing of it)
ACTING_S = 0.3          # the user acted this recently: the views hold the text so far they show, so what is under
FOLLOW_AT_LEAST_S = 1.0  # the pointer stays put and answers at once; but they follow at least this often
TRACES_KEPT = 8         # texts so far kept made, for scrubbing back and forth...
# ...while their thumbnails and sink sums take at most this, else two: from about 250 SmolLM2 tokens a text's
# thumbnails alone are 17 MiB, and eight kept at 1,000 tokens held 110 MiB more to save 20 ms of a step back
TRACES_KEPT_BYTES = 48 * 1024 * 1024
RELEASE_WHILE_WRITING_S = 1.0  # free memory handed back this often while the views follow a text so far
RELEASE_WHILE_WRITING_FROM = 256  # of this many tokens or more (below, the heaps stay small)
WRITE_LANE = "write"


def _summary_bytes(trace: PretrainedTrace) -> int:
    """What a text so far's thumbnails and sink sums take (those made of whole blocks of rows are views of
    the whole text's, and take nothing: counted all the same)."""
    return trace.forward_result.thumbnails.nbytes + trace.forward_result.sinks.nbytes


class _Mailbox:
    """Between the writing worker and the window: Stop, and the newest text so far, made on the worker
    after the next token once the window asks for one."""

    def __init__(self):
        self._lock = threading.Lock()
        self.stop = False
        self.ended = False  # the writing is over: what it makes now is the whole text, handed over with it
        self.generation: Generation | None = None
        self._wanted = True
        self._made: tuple[int, PretrainedTrace, float] | None = None

    def want(self) -> None:
        with self._lock:
            self._wanted = True

    def wanted(self) -> bool:
        with self._lock:
            return self._wanted and not self.stop

    def put(self, written: int, trace: PretrainedTrace, made_ms: float) -> None:
        with self._lock:
            self._made, self._wanted = (written, trace, made_ms), False

    def take(self) -> tuple[int, PretrainedTrace, float] | None:
        with self._lock:
            made, self._made = self._made, None
            return made


class GenerationControls(EncoderDecoderControls):
    """Generate, Stop and the scrubber, for the Controller (which subclasses this)."""

    generation_changed = QtCore.Signal(object)   # the Generation on screen (written or being written), or None
    generating_changed = QtCore.Signal(bool)
    written_shown_changed = QtCore.Signal(int)   # how many written tokens the views' text so far holds

    def _init_generation(self) -> None:
        self._generation: Generation | None = None
        self._compared: Generation | None = None
        self._mailbox: _Mailbox | None = None       # of the generation being written
        self._written_shown = 0
        self._following = True                      # the views follow the newest token
        self._traces: OrderedDict[int, PretrainedTrace] = OrderedDict()
        self._made_ms: dict[int, float] = {}         # how long each text so far took to make, by tokens written
        self._ahead = ScrubAhead()                  # the scrubber's next step, made on the worker meanwhile
        self._ahead_at = 0                          # ...with this many tokens written, once the window is idle
        self._ahead_timer = QtCore.QTimer(self)
        self._ahead_timer.setSingleShot(True)
        self._ahead_timer.setInterval(0)            # fires once every event waiting has been handled
        self._ahead_timer.timeout.connect(self._make_ahead)
        self._shared: tuple[Generation, SharedProjections] | None = None  # see _shared_projections
        self._generation_error = ""
        # the generation on screen as the one being written began, and the one beside it: on screen again when
        # that one is stopped before it has read its prompt (_write_failed, _back_to); let go once it ends
        self._before_writing: tuple[Generation | None, Generation | None] = (None, None)
        self._read_when_written = False             # the heads changed while it wrote: read the text once it ends
        self._next_follow = 0.0                     # when the views may next follow the newest token
        self._followed_at = 0.0                     # when they last did
        self._released_at = 0.0                     # when free memory was last handed back while writing
        # the generation (not kept alive by this) and the count of its tokens that the text box holds
        self._text_of: tuple[weakref.ref, int] | None = None
        self._poll = QtCore.QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._take_written)
        self._turn = WindowTurn(self)               # the worker writing waits while the user acts

    # --- read-only state -------------------------------------------------------------------------
    @property
    def generation(self) -> Generation | None:
        return self._generation

    @property
    def compared(self) -> Generation | None:
        """The generation before the one shown, from the same prompt with other heads off, or None."""
        return self._compared

    @property
    def generating(self) -> bool:
        return self._mailbox is not None

    @property
    def written_shown(self) -> int:
        return self._written_shown

    @property
    def written_ready(self) -> int:
        """How many written tokens the scrubber can reach now."""
        return 0 if self._generation is None else (_ready(self._generation) or 0)

    @property
    def generation_error(self) -> str:
        """Why the last Generate wrote nothing ("" when it did)."""
        return self._generation_error

    def shown_choice(self) -> tuple[int, int] | None:
        """(index, token id) of the written token the views' text so far was followed by, when they
        show a text so far of the generation and a token was written after it."""
        generation, shown = self._generation, self._written_shown
        if generation is None or shown >= len(generation.steps) or not self._shows_text_so_far():
            return None
        return shown, generation.steps[shown].token_id

    def _shows_text_so_far(self) -> bool:
        """The views draw a text so far of the generation (not a forward after the heads changed)."""
        from .engine.pretrained.generation_trace import written_in

        return self._ptrace is not None and written_in(self._ptrace) == self._written_shown

    def can_generate(self) -> bool:
        model = self._real_model
        return model is not None and model.is_decoder and self._mailbox is None and not self.loading

    def room_to_write(self) -> int:
        """How many tokens the model's context leaves after the text shown (its prompt, with a generation)."""
        model, ptrace = self._real_model, self._ptrace
        if model is None or ptrace is None:
            return 0
        prompt = len(self._generation.prompt_ids) if self._generation is not None else ptrace.n
        return max(0, model.max_tokens - prompt)

    def can_scrub(self) -> bool:
        """The generation shown was written with the heads now switched off (its texts so far are)."""
        generation = self._generation
        return generation is not None and generation.settings.ablate == self._ablated

    # --- setters ------------------------------------------------------------------------------------
    def generate(self, tokens: int, sampling: Sampling | None = None, chat: bool = False) -> None:
        """Write up to `tokens` tokens after the text, each picked by `sampling` (greedy when None), the
        text put into the model's chat template first when `chat`; or, while a generation is shown, again
        after its prompt with the heads now switched off."""
        from .engine.pretrained.generate import GenerationSettings, generate
        from .engine.pretrained.sampling import Sampling

        if not self.can_generate():
            return
        model, shown = self._real_model, self._generation
        self._before_writing, self._read_when_written = (shown, self._compared), False
        prompt = shown.prompt if shown is not None else self._sentence
        settings = GenerationSettings(tokens=max(1, int(tokens)), sampling=sampling or Sampling(), chat=chat,
                                      ablate=self._ablated)
        if shown is not None and shown.prompt == prompt and _differs(shown.settings, settings):
            self._compared = shown
        elif shown is None or shown.prompt != prompt:
            self._compared = None
        mailbox = _Mailbox()
        self._mailbox, self._following, self._generation_error = mailbox, True, ""
        self._followed_at = time.perf_counter()  # FOLLOW_AT_LEAST_S counts from here
        self._traces.clear()
        self._made_ms.clear()
        self._forget_ahead()
        self._shared = None

        def on_step(_step) -> None:  # on the worker: the newest text so far, when the window took the last
            if mailbox.wanted():
                _make_newest(model, mailbox)

        def write(progress):
            generation = generate(model, prompt, settings, lambda f, t: progress(f, t) and not mailbox.stop,
                                  on_step, keep_reader=True, on_start=lambda g: setattr(mailbox, "generation", g),
                                  between_layers=turn.wait)
            mailbox.ended = True
            _make_newest(model, mailbox)
            return generation

        runner, turn = self._worker(), self._turn
        self.generating_changed.emit(True)
        if runner is None:  # a controller without a worker (tests, the command line): all at once
            try:
                self._written(write(lambda _f, _t: True))
            except EngineError as error:
                self._write_failed(str(error))
            return
        self._poll.start()
        turn.watch(True)
        runner.submit(WRITE_LANE, write, self._written, self._write_failed)

    def stop_generating(self) -> None:
        """Stop writing after the token being written; what was written stays."""
        if self._mailbox is not None:
            self._mailbox.stop = True

    def show_written(self, written: int) -> None:
        """The scrubber: show the text so far with `written` tokens written (clamped to those read). Nothing
        while the generation has not read its prompt yet (Generate again pressed a moment ago: the step
        back of the scrubber still showing the last generation's count had raised an error)."""
        if self._generation is None or not self.can_scrub() or _ready(self._generation) is None:
            return
        ready = self.written_ready
        written = max(0, min(int(written), ready))
        self._following = self._mailbox is not None and written == ready
        if written != self._written_shown or not self._shows_text_so_far():
            back = written < self._written_shown
            self._show(written, self._trace_of(written), None)
            self._make_ahead_soon(written - 1 if back else written + 1)

    def _make_ahead_soon(self, written: int) -> None:
        """Make the text so far with `written` tokens ahead once the window has drawn what it shows now: begun
        at once, the worker's Python took turns with the window's own drawing, and a step back at 1,000
        tokens took longer, not shorter (90 against 75 ms, steps taken back to back)."""
        self._ahead_at = written
        self._ahead_timer.start()

    def _forget_ahead(self) -> None:
        self._ahead_timer.stop()
        self._ahead.forget(self._runner)

    def _make_ahead(self) -> None:
        """The text so far a step further, made on the worker while the user looks at this one (ScrubAhead):
        only for an ended generation (while one is written the worker writes) that the scrubber can step
        through (written with the heads now switched off), and a step not kept made."""
        runner, generation, written = self._worker(), self._generation, self._ahead_at
        if (runner is None or generation is None or self._mailbox is not None or written in self._traces
                or not 0 <= written <= self.written_ready or not self.can_scrub()):
            return
        step = self.step_trace  # the layer's own trace shown now: what the views made of it they will read again
        read = ((), ()) if step is None or self._head >= len(step.heads) else (
            made_fields(step), made_fields(step.heads[self._head]))
        self._ahead.start(runner, self._real_model, generation, written, self._shared_projections(),
                          (self._layer, self._head), read)

    # --- the writing, back on the GUI thread ----------------------------------------------------------
    def _take_written(self) -> None:
        """Poll: the text box follows every token written; the views the newest text so far made."""
        mailbox = self._mailbox
        if mailbox is None or mailbox.generation is None or mailbox.ended:
            return  # (the whole text made as it ended is shown once, with the end: _written)
        self._follow_text(mailbox.generation)
        made = mailbox.take()
        if made is not None:
            written, trace, made_ms = made
            self._made_ms[written] = made_ms
            self._keep_trace(written, trace)
            if self._following:
                started = self._followed_at = time.perf_counter()
                self._show(written, trace, made_ms)
                # the worker's making of it counts too: it holds up the writing (0.9 s at 1,000 tokens)
                took = time.perf_counter() - started + made_ms / 1000
                self._next_follow = time.perf_counter() + max(FOLLOW_MS / 1000 - took, 2 * took)
                self._release_while_writing(trace.n)
        elif self._following and time.perf_counter() >= self._next_follow and self._views_may_follow():
            mailbox.want()

    def _views_may_follow(self) -> bool:
        """Not while the user acts on the window (ACTING_S), for FOLLOW_AT_LEAST_S at most: a new text so far
        moves every word of the heatmap and the arcs under a pointer that stays still, and a hover that came
        while the views redrew for it waited for that (SmolLM2 at 64 tokens: the slowest tenth of hovers
        while it writes took 34 ms, against 16 in the median)."""
        return (self._turn.since_input_s() >= ACTING_S
                or time.perf_counter() - self._followed_at >= FOLLOW_AT_LEAST_S)

    def _release_while_writing(self, n: int) -> None:
        """Hand free memory back about once a second while the views follow a longer text so far: each
        text so far the worker makes, and the views' matrices of the one before, leave glibc's heaps
        full of free blocks that the next sizes do not fit, and the window grew by their sum
        (release_free_memory: a few milliseconds). The release after a long trace is replaced
        (Controller._release_memory_soon) waits a second with nothing replaced: never while writing."""
        now = time.perf_counter()
        if n >= RELEASE_WHILE_WRITING_FROM and now - self._released_at >= RELEASE_WHILE_WRITING_S:
            release_free_memory()
            self._released_at = now

    def _written(self, generation: Generation) -> None:
        """Done (or stopped with Stop): the views on all of it, made on the worker as it ended."""
        mailbox = self._mailbox
        self._end_writing()
        self._before_writing = (None, None)  # (held, it kept the last generation's reader alive)
        self._follow_text(generation)
        made = mailbox.take() if mailbox is not None else None
        if made is not None:
            self._made_ms[made[0]] = made[2]
            self._keep_trace(made[0], made[1])
        if self._read_held_back():
            return
        written = self.written_ready
        fresh = made is not None and made[0] == written
        self._show(written, self._trace_of(written), made[2] if fresh else None)
        self._make_ahead_soon(written - 1)  # the first step back, and the projections every step shares

    def _write_failed(self, message: str) -> None:
        """Cancel in the status bar (""), or an error: what was written stays, if anything was."""
        mailbox = self._mailbox
        self._end_writing()
        before, self._before_writing = self._before_writing, (None, None)
        generation = mailbox.generation if mailbox is not None else None
        if generation is not None:  # the worker may write one more token before it hears: keep what is here
            generation = _stopped_copy(generation, self._real_model)
        if generation is None or _ready(generation) is None:
            self._back_to(*before)
            self._read_held_back()
            if message:  # said in the panel and the status line; the views keep the text they show
                self._generation_error = message
                self._set_status(message)
                self.generation_changed.emit(self._generation)
            return
        self._follow_text(generation)
        if self._read_held_back():
            return
        written = self.written_ready
        self._show(written, self._trace_of(written), None)
        self._make_ahead_soon(written - 1)

    def _run_real(self) -> None:
        """While a decoder writes, the text is read (a head switched off, which stops the writing) once the
        writing has ended, all that was written with it: read at once, it was the text as it stood at the
        click, and the views drew that under the text box holding the rest (_read_held_back)."""
        if self._mailbox is not None:
            self._read_when_written = True
            return
        super()._run_real()

    def _read_held_back(self) -> bool:
        """The writing has ended: the reading _run_real held back, if any, now. Whether there was one."""
        if not self._read_when_written:
            return False
        self._read_when_written = False
        self._run_real()
        return True

    def _back_to(self, before: Generation | None, compared: Generation | None) -> None:
        """A generation stopped (or failed) before it read its prompt has nothing to show: the views never left
        the text the window showed as it began, and the panel, the text box and the scrubber go back to
        the generation shown then, `before`, and the one beside it (they had taken the new, empty
        generation, and a step back read it under the old views)."""
        self._compared = compared
        if before is not None:
            self._follow_text(before)
        elif self._generation is not None:
            self._generation = None
            self.generation_changed.emit(None)

    def _end_writing(self) -> None:
        self._poll.stop()
        self._turn.watch(False)
        self._mailbox = None
        self.generating_changed.emit(False)

    def _follow_text(self, generation: Generation) -> None:
        """The generation on screen, and the text box holding its prompt and every token written so far."""
        if generation is not self._generation:
            self._generation = generation
            self.generation_changed.emit(generation)
        count = len(generation.steps)
        if self._text_of is not None and self._text_of[0]() is generation and self._text_of[1] == count:
            return  # no token written since the last look, every POLL_MS (decoding them all again: 0.4 ms)
        self._text_of = (weakref.ref(generation), count)
        text = generation.prompt + self._real_model.tokenizer.decode([s.token_id for s in generation.steps])
        if text != self._sentence:
            self._sentence = text
            self.sentence_changed.emit(text)

    def _trace_of(self, written: int) -> PretrainedTrace:
        from .engine.pretrained.generation_trace import trace_so_far

        ahead = self._ahead.take(self._runner, self._generation, written) if self._mailbox is None else None
        trace = self._traces.get(written)
        if trace is None and ahead is not None:
            trace, self._made_ms[written] = ahead
        if trace is None:
            started = time.perf_counter()
            trace = trace_so_far(self._real_model, self._generation, written, self._shared_projections())
            self._made_ms[written] = (time.perf_counter() - started) * 1000
        # the status line says how long this text so far took to make, wherever and whenever it was made
        self._forward_ms = self._made_ms.get(written, self._forward_ms)
        self._keep_trace(written, trace)
        return trace

    def _keep_trace(self, written: int, trace: PretrainedTrace) -> None:
        """Keep the text so far with `written` tokens as the newest of those kept for scrubbing (TRACES_KEPT,
        fewer of a long text: TRACES_KEPT_BYTES).
        Every text so far the views followed while writing was kept until it ended (each holds its
        thumbnails and up to 48 MiB of projections): 5 GB at 400 tokens of SmolLM2. Those not on
        screen keep only their thumbnails (_let_go_off_screen)."""
        self._traces[written] = trace
        self._traces.move_to_end(written)
        while len(self._traces) > TRACES_KEPT or (
                len(self._traces) > 2 and sum(map(_summary_bytes, self._traces.values())) > TRACES_KEPT_BYTES):
            self._traces.popitem(last=False)
        self._let_go_off_screen(trace, self._ptrace)

    def _let_go_off_screen(self, *spared: PretrainedTrace | None) -> None:
        """The texts so far kept for scrubbing, but for `spared`, keep only their thumbnails: a layer of one
        shown again is made again (at 1,000 SmolLM2 tokens each held 10 MB of the layer last shown)."""
        for kept in self._traces.values():
            if all(kept is not trace for trace in spared):
                kept.let_go_of_caches()

    def _shared_projections(self) -> SharedProjections | None:
        """The projections of the ended generation's whole text, which its texts so far share (None
        while it is written: its text grows)."""
        from .engine.pretrained.generation_trace import SharedProjections

        generation = self._generation
        if self._mailbox is not None or generation is None or not generation.stopped or generation.reader is None:
            return None
        if self._shared is None or self._shared[0] is not generation:
            self._shared = (generation, SharedProjections(self._real_model, generation))
        return self._shared[1]

    def _show(self, written: int, trace: PretrainedTrace, made_ms: float | None) -> None:
        """The views on the text so far with `written` tokens, its last row pinned; `made_ms`: how long
        the worker took to make it (None: _trace_of timed it, or it was made before)."""
        self._written_shown = written
        self._ptrace, self._real_error = trace, ""
        self._let_go_off_screen(trace)  # the text shown until now too
        if made_ms is not None:
            self._forward_ms = made_ms
        self._recompute((self.pretrained_trace_changed, trace), (self.written_shown_changed, written),
                        pin_last_row=True)

    def _timing_note(self) -> str:
        generation = self._generation
        if generation is None or not self._shows_text_so_far():
            return super()._timing_note()
        of = "" if self._mailbox is not None else f" of {len(generation.steps)}"  # still writing: the count grows
        return (f"{self._written_shown}{of} written tokens, made from the kept layer inputs in "
                f"{self._forward_ms:.0f} ms")

    # --- what ends a generation on screen ------------------------------------------------------------
    def _drop_generation(self) -> None:
        """The text was edited or another model opened: the generation (and the one compared) goes."""
        if self._mailbox is not None and self._runner is not None:
            self._runner.drop(WRITE_LANE)
            self._end_writing()
        self._read_when_written = False  # whoever dropped it reads the text (an edit) or opens another model
        self._before_writing = (None, None)
        if self._generation is not None or self._compared is not None:
            self._generation = self._compared = None
            self._shared = None
            self._traces.clear()
            self._made_ms.clear()
            self._forget_ahead()
            self._written_shown = 0
            self.generation_changed.emit(None)


def _differs(before, now) -> bool:
    """Two generations' settings differ in more than the count of tokens: worth reading side by side."""
    return (before.ablate, before.sampling, before.chat) != (now.ablate, now.sampling, now.chat)


def _stopped_copy(generation: Generation, model) -> Generation:
    """The generation as it stands, stopped: its own list of the steps written so far."""
    from dataclasses import replace

    from .engine.pretrained.generate import CANCELLED

    steps = list(generation.steps)
    return replace(generation, steps=steps, stopped=CANCELLED,
                   written=model.tokenizer.decode([step.token_id for step in steps]))


def _ready(generation: Generation) -> int | None:
    """How many written tokens a text so far can hold now (None: not even the prompt is read)."""
    from .engine.pretrained.generation_trace import written_so_far  # loaded with the real models

    return written_so_far(generation)


def _make_newest(model, mailbox: _Mailbox) -> None:
    """On the worker: the newest text so far of the generation being written, for the window."""
    from .engine.pretrained.generation_trace import trace_so_far

    generation = mailbox.generation
    written = None if generation is None else _ready(generation)
    if written is None:
        return
    started = time.perf_counter()
    trace = trace_so_far(model, generation, written)
    mailbox.put(written, trace, (time.perf_counter() - started) * 1000)
