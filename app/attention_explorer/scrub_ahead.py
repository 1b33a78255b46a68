"""The scrubber's next step made ahead: while the window shows a text so far of an ended generation, the
worker makes the one a step further in the direction the scrubber last moved (the step before the last
once a generation ends), and with it the trace the views draw of the layer shown (about 1 ms of a step's
64 SmolLM2 tokens on the window's thread), its weights of the head on screen, and each model-view cell's
largest weight.

At 1,000 SmolLM2 tokens a text so far takes about 20 ms to make and its shown layer's weights a few more,
a third of a step back; made while the window draws the step before, the next step only draws. The first
step back after a generation also makes the whole text's projections, which every text so far shares:
about a second at 1,000 tokens, made ahead as soon as the generation ends. The
window asks for the step it needs with `take`: a step made is handed over, a step being made is waited
for (it is already on its way, and making it again beside it would only share the cores), and a step
not started yet is dropped and made by the window as before. The job is quiet on the worker (no busy
cursor, no progress, no Cancel for it) and is superseded by the next one; a step it could not make
(an error of any kind) is simply made by the window, which then says why.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine.pretrained.generate import Generation
    from .engine.pretrained.generation_trace import SharedProjections
    from .engine.pretrained.model import PretrainedModel
    from .engine.pretrained.real_trace import PretrainedTrace
    from .pretrained_worker import BackgroundRunner

AHEAD_LANE = "scrub ahead"
WAIT_S = 5.0  # at most this long for a step on its way (a text so far past the shared budget: about 1 s)


@dataclass(eq=False)
class _Making:
    """One text so far being made ahead: which, and (once `done`) the trace, None if it failed, and how long
    it took to make."""
    generation: Generation
    written: int
    started: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    trace: PretrainedTrace | None = None
    made_ms: float = 0.0


class ScrubAhead:
    """At most one text so far made ahead of the scrubber, on the runner's quiet lane."""

    def __init__(self):
        self._making: _Making | None = None

    def start(self, runner: BackgroundRunner, model: PretrainedModel, generation: Generation, written: int,
              shared: SharedProjections | None, shown: tuple[int, int],
              read: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())) -> None:
        """Make the text so far with `written` tokens of `generation`, its trace of the layer of `shown`
        (layer, head), that head's weights in it, and the lazy fields in `read` (of the layer's trace,
        of the head's: lazy_trace.made_fields), which the views read of the text shown now and will
        read of this one (at 1,000 tokens the mask, the Steps dock's masked scores and the moved norms:
        5.6 ms of a step); the one made ahead before is forgotten."""
        from .engine.pretrained.generation_trace import trace_so_far

        making = _Making(generation, written)
        self._making = making

        def work(progress):
            making.started.set()
            begun = time.perf_counter()
            try:
                # the whole text's projections first, a layer at a time, stopping when dropped: the first
                # step back after a generation makes them all (a second at 1,000 SmolLM2 tokens)
                length = len(generation.prompt_ids) + written  # the text so far's tokens
                for layer in range(model.n_layers if shared is not None else 0):
                    if not progress(layer / model.n_layers, ""):
                        return
                    shared(layer, length)
                trace = trace_so_far(model, generation, written, shared)
                layer_trace = trace.layer_trace(shown[0])  # kept by the trace for the views (its memo)
                trace.head_weights(*shown)
                for owner, names in zip((layer_trace, layer_trace.heads[shown[1]]), read, strict=True):
                    for name in names:
                        getattr(owner, name)  # made and kept by its owner
                trace.thumbnail_tops()  # what the model view's cells are coloured up to
                making.made_ms = (time.perf_counter() - begun) * 1000
                making.trace = trace
            finally:
                making.done.set()

        runner.submit(AHEAD_LANE, work, lambda _result: None, lambda _message: None, quiet=True)

    def take(self, runner: BackgroundRunner | None, generation: Generation, written: int
             ) -> tuple[PretrainedTrace, float] | None:
        """The text so far with `written` tokens of `generation`, and the ms it took to make, if it was made
        ahead or is being made (then waited for), else None; whatever else was on its way is dropped."""
        making, self._making = self._making, None
        if making is None:
            return None
        if making.generation is not generation or making.written != written or not making.started.is_set():
            self.forget(runner)
            return None
        if not making.done.wait(WAIT_S) or making.trace is None:
            return None
        return making.trace, making.made_ms

    def forget(self, runner: BackgroundRunner | None) -> None:
        """The generation went (an edit, another model, Generate again): nothing made ahead is wanted."""
        self._making = None
        if runner is not None:
            runner.drop(AHEAD_LANE)
