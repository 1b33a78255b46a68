"""The census grid as the model view's cells: which census a figure or a view file names, and its result.

The model view can colour its layers × heads cells by a census measure instead of the weights on the
text (views/model_view.py). A figure of it must draw the same again from its view state alone, in the
window or from the command line, so the state names the census, not its numbers: the measure, the
texts it ran on (the built-in battery with its seed, or a file) and the settings that change the
scores. The result comes from the census cache the window and `heads` share, or is measured again;
the same texts and settings give the same numbers. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .engine.census.measures import BY_KEY, DEFAULT_EPSILON, CensusSettings, keys_of


@dataclass(frozen=True)
class CensusChoice:
    """A census measure shown in the model view, and what its numbers were measured on."""

    measure: str                      # a measure key (BY_KEY)
    seed: int = 0                     # of the built-in battery's random sequences
    texts: str | None = None          # a text file the census read instead of the battery
    exclude_first: bool = False
    exclude_diagonal: bool = False
    sink_epsilon: float = DEFAULT_EPSILON

    @property
    def title(self) -> str:
        return BY_KEY[self.measure].title

    def settings(self) -> CensusSettings:
        """The census that gives this measure: its group's measures with these settings."""
        return CensusSettings(keys_of([BY_KEY[self.measure].group]), self.exclude_first, self.exclude_diagonal,
                              self.sink_epsilon, self.seed)

    def matches(self, settings: CensusSettings, texts: str | None) -> bool:
        """Whether a census run with `settings` on `texts` measured this (its other measures aside)."""
        return (self.measure in settings.measures and texts == self.texts and settings.seed == self.seed
                and settings.exclude_first == self.exclude_first
                and settings.exclude_diagonal == self.exclude_diagonal
                and float(settings.sink_epsilon) == float(self.sink_epsilon))

    @classmethod
    def of(cls, measure: str, settings: CensusSettings, texts: str | None) -> CensusChoice:
        return cls(measure, int(settings.seed), texts, bool(settings.exclude_first), bool(settings.exclude_diagonal),
                   float(settings.sink_epsilon))


def census_of(model, choice: CensusChoice, progress=None):
    """The CensusResult `choice` names for a real `model`: from the shared cache, else measured (and kept)."""
    from .engine.census import CensusCache, builtin_battery, cached_census, default_cache_folder, read_texts_file
    from .engine.census.subjects import subject_for

    subject = subject_for(model)
    settings = choice.settings()
    source = read_texts_file(choice.texts) if choice.texts else builtin_battery(subject, settings.seed)
    return cached_census(subject, source, settings, CensusCache(default_cache_folder()), progress).result
