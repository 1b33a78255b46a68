"""Ablation meets census: switch off the top heads of a measure and see what the model loses.

The effect is read on the next-token loss (decoders only): −ln p of each next token, in nats. On a
random sequence written twice the first copy cannot be predicted (its words are random) and the
second can, by copying: the token after the earlier occurrence. Induction heads do that copying, so
switching them off should raise the second copy's loss and leave the first copy's alone; that is
the classic check (Olsson et al. 2022, "In-context Learning and Induction Heads"). The same number of
random other heads switched off (seeded) is the control: it says how much any k heads matter.

Losses on a repeat are split at the copies: the first copy's tokens after its first, and the second
copy's tokens after its first (the first token of each copy follows nothing it could be copied from).
Other texts give one mean over all their tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OptionsError, SentenceError
from ..pretrained.progress import Progress, report
from .induction import repeated_span
from .measures import BY_KEY
from .result import CensusResult
from .texts import TextSource

ABLATION_TEXTS = 16   # texts read (each three times: as it is, top heads off, random heads off)


@dataclass(frozen=True)
class LossSplit:
    """Mean next-token losses (nats); None where no text of that kind was read."""

    repeat_first: float | None
    repeat_second: float | None
    other: float | None

    def to_dict(self) -> dict:
        return {"repeat_first_copy": self.repeat_first, "repeat_second_copy": self.repeat_second,
                "other_texts": self.other}


@dataclass(frozen=True)
class AblationEffect:
    measure: str
    heads: tuple[tuple[int, int], ...]          # switched off, 0-based
    control_heads: tuple[tuple[int, int], ...]  # as many random other heads
    before: LossSplit
    after: LossSplit
    control: LossSplit
    texts: int

    def to_dict(self) -> dict:
        def named(heads):
            return [{"layer": layer + 1, "head": head + 1} for layer, head in heads]

        return {"measure": self.measure, "heads": named(self.heads), "control_heads": named(self.control_heads),
                "texts": self.texts, "loss_before": self.before.to_dict(), "loss_after": self.after.to_dict(),
                "loss_control": self.control.to_dict()}

    def lines(self) -> list[str]:
        """The effect in a few lines, as the window and the CLI say it."""
        heads = ", ".join(f"L{layer + 1} H{head + 1}" for layer, head in self.heads)
        out = [f"The {len(self.heads)} top heads of {BY_KEY[self.measure].title} switched off: {heads}.",
               f"Next-token loss in nats over {self.texts} texts: as it is → those heads off "
               f"(→ {len(self.heads)} random other heads off)"]
        for name, pick in (("repeated sequences, first copy", "repeat_first"),
                           ("repeated sequences, second copy", "repeat_second"), ("other texts", "other")):
            values = [getattr(split, pick) for split in (self.before, self.after, self.control)]
            if values[0] is not None:
                out.append(f"  {name}: {values[0]:.2f} → {values[1]:.2f} (→ {values[2]:.2f})")
        return out


def ablation_effect(subject, result: CensusResult, measure: str, k: int, source: TextSource, seed: int = 0,
                    max_texts: int = ABLATION_TEXTS, progress: Progress | None = None) -> AblationEffect:
    """Switch off the `k` top heads of `measure` in `result` and compare the loss on the first
    `max_texts` texts of `source` with the heads on, off, and `k` random other heads off."""
    if not subject.has_loss:
        raise OptionsError(f"{subject.name} has no next-token head (only decoders do), so switching heads off "
                           f"cannot be read on a next-token loss")
    total = subject.n_layers * subject.n_heads
    if not 1 <= k < total:
        raise OptionsError(f"the number of heads to switch off must be between 1 and {total - 1}, got {k}")
    heads = tuple(result.top_heads(measure, k))
    others = [(layer, head) for layer in range(subject.n_layers) for head in range(subject.n_heads)
              if (layer, head) not in heads]
    rng = np.random.default_rng(seed)
    control = tuple(sorted(others[i] for i in rng.choice(len(others), size=len(heads), replace=False)))
    conditions = (frozenset(), frozenset(heads), frozenset(control))
    sums = np.zeros((3, 3))   # condition × (first copy, second copy, other)
    counts = np.zeros(3)
    texts = 0
    items = _chosen_texts(source, max_texts)
    for index, item in enumerate(items):
        report(progress, index / len(items), f"text {index + 1} of {len(items)}")
        try:
            runs = [subject.next_token_losses(item.text, ablate) for ablate in conditions]
        except SentenceError:
            continue
        losses = [loss for _ids, loss in runs]
        start = repeated_span(runs[0][0], item.period) if item.kind == "repeat" else None
        for condition, loss in enumerate(losses):
            for part, value in _parts(loss, start, item.period).items():
                sums[condition, part] += value
        for part in _parts(losses[0], start, item.period):
            counts[part] += 1
        texts += 1
    report(progress, 1.0, "done")

    def split(condition: int) -> LossSplit:
        means = [float(sums[condition, p] / counts[p]) if counts[p] else None for p in range(3)]
        return LossSplit(*means)

    return AblationEffect(measure, heads, control, split(0), split(1), split(2), texts)


def _chosen_texts(source: TextSource, max_texts: int) -> list:
    """Up to `max_texts` texts, half of them repeats when there are enough (the battery's first
    sequences and first sentences; a user's first texts). Reading stops once enough are found."""
    repeats, others = [], []
    for item in source.texts():
        pool = repeats if item.kind == "repeat" else others
        if len(pool) < max_texts:
            pool.append(item)
        if len(others) >= max_texts and (len(repeats) >= max_texts // 2 or item.kind != "repeat"):
            break
    take_repeats = min(len(repeats), max(max_texts // 2, max_texts - len(others)))
    return repeats[:take_repeats] + others[:max_texts - take_repeats]


def _parts(loss: np.ndarray, start: int | None, period: int) -> dict[int, float]:
    """A text's mean losses by part: 0 the first copy, 1 the second (repeats), 2 the whole (others).
    Entry t of `loss` is the loss of token t + 1."""
    if start is None:
        return {2: float(loss.mean())} if loss.size else {}
    first = loss[start:start + period - 1]
    second = loss[start + period:start + 2 * period - 1]
    return {0: float(first.mean()), 1: float(second.mean())}
