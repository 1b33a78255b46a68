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
from dataclasses import dataclass, replace

import numpy as np

from ..errors import OptionsError, SentenceError
from ..pretrained.progress import Progress, report
from .cache import CensusCache, cache_key
from .entropy import uniform_entropy
from .induction import repeated_span
from .measures import BY_KEY, CensusSettings, TextFacts, layer_scores
from .result import CensusResult
from .texts import CensusText, TextSource


class _Tally:
    """Running sums, counts and best texts of every measure: (measures, layers, heads) arrays, updated
    once per text (a text's scores of every layer are gathered first)."""

    def __init__(self, layers: int, heads: int, measures: tuple[str, ...]):
        self.measures = measures
        self.row = {m: i for i, m in enumerate(measures)}
        shape = (len(measures), layers, heads)
        self.sums = np.zeros(shape)
        self.counts = np.zeros(shape, dtype=np.int64)
        self.best = np.full(shape, -np.inf)
        self.best_text = np.full(shape, -1, dtype=np.int64)
        self.examples: dict[int, str] = {}

    def blank(self) -> np.ndarray:
        """One text's scores, to fill: NaN where the text does not inform a measure."""
        return np.full(self.sums.shape, np.nan)

    def add(self, scores: np.ndarray, text_index: int, text: str) -> None:
        """Count one text's scores, and keep the text if some head scored best on it."""
        finite = np.isfinite(scores)
        self.sums += np.where(finite, scores, 0.0)
        self.counts += finite
        better = finite & (scores > self.best)
        if better.any():
            self.best[better] = scores[better]
            self.best_text[better] = text_index
            self.examples[text_index] = text
            referenced = set(np.unique(self.best_text).tolist())
            for index in [i for i in self.examples if i not in referenced]:
                del self.examples[index]

    def grids(self, table: np.ndarray) -> dict[str, np.ndarray]:
        return {m: table[i] for m, i in self.row.items()}

    def means(self) -> dict[str, np.ndarray]:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.grids(np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan))

    def renumbered_examples(self) -> tuple[list[str], dict[str, np.ndarray]]:
        """The kept texts as a list, and the best-text indices pointing into it."""
        order = sorted(self.examples)
        lookup = np.full(max(order, default=0) + 2, -1, dtype=np.int64)  # index −1 reads the last entry: −1
        lookup[order] = np.arange(len(order))
        return [self.examples[i] for i in order], self.grids(lookup[self.best_text])


def run_census(subject, source: TextSource, settings: CensusSettings | None = None,
               progress: Progress | None = None) -> CensusResult:
    """Every measure of `settings` of every head of `subject` over `source`'s texts. A measure that does
    not apply to the subject's heads (subject.not_applicable) is not measured and the result says why;
    OptionsError when none of those asked for applies."""
    settings = settings or CensusSettings()
    started = time.perf_counter()
    not_applicable = {key: why for key, why in subject.not_applicable.items() if key in settings.measures}
    measured = tuple(key for key in settings.measures if key not in not_applicable)
    if not measured:
        raise OptionsError(f"none of the measures asked for applies to {subject.name}: "
                           + "; ".join(f"{BY_KEY[key].title}, {why}" for key, why in not_applicable.items()))
    tally = _Tally(subject.n_layers, subject.n_heads, measured)
    reading = replace(settings, measures=measured)
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
        scores = tally.blank()
        for layer in range(subject.n_layers):
            for measure, values in layer_scores(run.layer(layer), facts, reading).items():
                scores[tally.row[measure], layer] = values
        tally.add(scores, index, item.text)
        texts += 1
        truncated += run.truncated
        tokens += run.n
        uniform_total += uniform_entropy(run.n_keys or run.n, subject.causal)
    report(progress, 1.0, "done")
    examples, best_text = tally.renumbered_examples()
    return CensusResult(
        subject.name, subject.n_layers, subject.n_heads, source.label, settings, texts, skipped, truncated,
        tokens, tally.means(), tally.grids(tally.counts), tally.grids(tally.best), best_text, examples,
        uniform_total / texts if texts else None, time.perf_counter() - started, not_applicable=not_applicable)


def _facts(run, item: CensusText, causal: bool) -> TextFacts:
    start = repeated_span(run.ids, item.period) if item.kind == "repeat" else None
    return TextFacts.of(run.ids, run.labels, run.special, causal, item.period, start, run.patterns)


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
