"""Running a census: every text through the model once, every measure of every layer, kept as
running sums, so memory holds one text's forward at a time whatever the number of texts.

    result = run_census(subject, source, settings, progress)
    cached = cached_census(subject, source, settings, CensusCache(folder), progress)  # or from the cache

`subject` is a census subject (subjects.py), `source` a TextSource (the battery or a user's file),
`progress(fraction, text) -> bool` hears of every text and every layer of its forward and may
cancel (engine.pretrained.progress: Cancelled is raised). Besides the means, each head keeps the
text it scored highest on for each measure; only those texts are kept, at most one per head and
measure.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import SentenceError
from ..pretrained.progress import Progress, report
from .cache import CensusCache, cache_key
from .entropy import uniform_entropy
from .induction import repeated_span
from .measures import CensusSettings, TextFacts, layer_scores
from .result import CensusResult
from .texts import CensusText, TextSource


class _Tally:
    """Running sums, counts and best texts of every measure, (layers, heads) each."""

    def __init__(self, layers: int, heads: int, measures: tuple[str, ...]):
        shape = (layers, heads)
        self.sums = {m: np.zeros(shape) for m in measures}
        self.counts = {m: np.zeros(shape, dtype=np.int64) for m in measures}
        self.best = {m: np.full(shape, -np.inf) for m in measures}
        self.best_text = {m: np.full(shape, -1, dtype=np.int64) for m in measures}
        self.examples: dict[int, str] = {}

    def add(self, layer: int, scores: dict[str, np.ndarray], text_index: int) -> None:
        for measure, values in scores.items():
            finite = np.isfinite(values)
            self.sums[measure][layer, finite] += values[finite]
            self.counts[measure][layer, finite] += 1
            better = finite & (values > self.best[measure][layer])
            self.best[measure][layer, better] = values[better]
            self.best_text[measure][layer, better] = text_index

    def keep_examples(self, text_index: int, text: str) -> None:
        """Keep `text` if some head scored best on it, and drop the texts no head points at any more."""
        referenced = set(np.unique(np.concatenate([b.ravel() for b in self.best_text.values()])).tolist())
        if text_index in referenced:
            self.examples[text_index] = text
        for index in [i for i in self.examples if i not in referenced]:
            del self.examples[index]

    def means(self) -> dict[str, np.ndarray]:
        with np.errstate(invalid="ignore", divide="ignore"):
            return {m: np.where(self.counts[m] > 0, self.sums[m] / np.maximum(self.counts[m], 1), np.nan)
                    for m in self.sums}

    def renumbered_examples(self) -> tuple[list[str], dict[str, np.ndarray]]:
        """The kept texts as a list, and the best-text indices pointing into it."""
        order = sorted(self.examples)
        new = {old: i for i, old in enumerate(order)}
        lookup = np.vectorize(lambda old: new.get(int(old), -1), otypes=[np.int64])
        return [self.examples[i] for i in order], {m: lookup(b) if b.size else b for m, b in self.best_text.items()}


def run_census(subject, source: TextSource, settings: CensusSettings | None = None,
               progress: Progress | None = None) -> CensusResult:
    settings = settings or CensusSettings()
    started = time.perf_counter()
    tally = _Tally(subject.n_layers, subject.n_heads, settings.measures)
    texts = skipped = truncated = tokens = 0
    uniform_total = 0.0
    for index, item in enumerate(source.texts()):
        def within(fraction: float, _text: str, index: int = index) -> bool | None:
            return None if progress is None else progress((index + fraction) / source.count,
                                                          f"text {index + 1} of {source.count}")

        report(progress, index / source.count, f"text {index + 1} of {source.count}")
        try:
            run = subject.run(item.text, progress=within)
        except SentenceError:  # nothing the model can read (e.g. no word a toy model knows)
            skipped += 1
            continue
        if run.n < 2:  # one token looks only at itself: no measure says anything
            skipped += 1
            continue
        facts = _facts(run, item, subject.causal)
        for layer in range(subject.n_layers):
            tally.add(layer, layer_scores(run.layer(layer), facts, settings), index)
        tally.keep_examples(index, item.text)
        texts += 1
        truncated += run.truncated
        tokens += run.n
        uniform_total += uniform_entropy(run.n, subject.causal)
    report(progress, 1.0, "done")
    examples, best_text = tally.renumbered_examples()
    return CensusResult(
        subject.name, subject.n_layers, subject.n_heads, source.label, settings, texts, skipped, truncated,
        tokens, tally.means(), tally.counts, tally.best, best_text, examples,
        uniform_total / texts if texts else None, time.perf_counter() - started)


def _facts(run, item: CensusText, causal: bool) -> TextFacts:
    start = repeated_span(run.ids, item.period) if item.kind == "repeat" else None
    return TextFacts.of(run.ids, run.labels, run.special, causal, item.period, start)


@dataclass(frozen=True)
class CachedCensus:
    result: CensusResult
    from_cache: bool
    cache_note: str    # why the result could not be kept ("" when it was, or came from the cache)


def cached_census(subject, source: TextSource, settings: CensusSettings, cache: CensusCache | None,
                  progress: Progress | None = None) -> CachedCensus:
    """The census of `subject` on `source`: from `cache` when it holds one for the same weights,
    texts and settings, else run and stored there (a cache that cannot be written is said, not fatal)."""
    report(progress, 0.0, "reading the model's files")
    fingerprint = subject.fingerprint()
    key = cache_key(fingerprint, source.digest, settings)
    cached = cache.load(key) if cache is not None else None
    if cached is not None:
        report(progress, 1.0, "done")
        return CachedCensus(cached, True, "")
    result = run_census(subject, source, settings, progress)
    result.fingerprint = fingerprint
    note = ""
    if cache is not None:
        try:
            cache.store(key, result)
        except OSError as error:
            note = f"the result was not kept for next time ({cache.folder}: {error.strerror or error})"
    return CachedCensus(result, False, note)
