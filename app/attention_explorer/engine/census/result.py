"""A census's result: every measure's layers × heads grid, ranked lists, each head's best example,
and heads that behave alike.

Scores are means over the texts that inform each measure (see measures.py); NaN marks a head no
text informed. A measure that does not apply to the model's heads is not measured: `not_applicable`
says why, and its grid is all NaN. Entropy ranks lowest first (a focused head), every other measure highest first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .measures import BY_KEY, CensusSettings

ASCENDING = frozenset({"entropy"})


class HeadScore(NamedTuple):
    layer: int    # 0-based
    head: int
    score: float

    def label(self) -> str:
        """As the window and the CLI write it, counting from 1: "L5 H3 0.84"."""
        return f"L{self.layer + 1} H{self.head + 1} {self.score:.2f}"


@dataclass
class CensusResult:
    model_name: str
    n_layers: int
    n_heads: int
    source: str                       # which texts, in words
    settings: CensusSettings
    texts: int                        # texts that ran
    skipped: int                      # texts that gave no tokens (e.g. no word a toy model knows)
    truncated: int                    # texts cut at the model's longest
    tokens: int                       # tokens over all texts
    scores: dict[str, np.ndarray]     # measure → (layers, heads) means
    counts: dict[str, np.ndarray]     # measure → (layers, heads) texts in each mean
    best: dict[str, np.ndarray]       # measure → (layers, heads) the highest score of one text
    best_text: dict[str, np.ndarray]  # measure → (layers, heads) index into `examples` (−1: none)
    examples: list[str]
    uniform_entropy: float | None     # the mean over texts of uniform attention's entropy (nats)
    seconds: float = 0.0
    fingerprint: str = ""             # of the model's weights
    not_applicable: dict[str, str] = field(default_factory=dict)  # measures asked for that do not apply to
                                                                  # these heads, not measured → why

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(self.scores)

    def grid(self, measure: str) -> np.ndarray:
        """The layers × heads scores of `measure` (a copy), as the census grid and a model view show it;
        NaN for a measure that does not apply to these heads."""
        if measure in self.not_applicable:
            return np.full((self.n_layers, self.n_heads), np.nan)
        return self.scores[measure].copy()

    def ranked(self, measure: str, top: int | None = None) -> list[HeadScore]:
        """Heads from the strongest to the weakest on `measure` (heads no text informed left out; none for
        a measure that does not apply)."""
        grid = self.grid(measure)
        flat = [(layer, head) for layer, head in np.ndindex(grid.shape) if np.isfinite(grid[layer, head])]
        sign = 1.0 if measure in ASCENDING else -1.0
        flat.sort(key=lambda lh: (sign * grid[lh], lh))
        chosen = flat if top is None else flat[:top]
        return [HeadScore(layer, head, float(grid[layer, head])) for layer, head in chosen]

    def top_heads(self, measure: str, k: int) -> list[tuple[int, int]]:
        return [(s.layer, s.head) for s in self.ranked(measure, k)]

    def best_example(self, measure: str, layer: int, head: int) -> tuple[str, float] | None:
        """The text on which this head scored highest on `measure`, and that score."""
        index = int(self.best_text[measure][layer, head])
        if index < 0:
            return None
        return self.examples[index], float(self.best[measure][layer, head])

    def profile(self) -> np.ndarray:
        """Each head's scores over every measure, (layers · heads, measures), each measure scaled to
        mean 0 and spread 1 across heads so that no measure outweighs the others by its units;
        NaN (no text) becomes 0, the mean."""
        columns = []
        for measure in self.measures:
            values = self.scores[measure].ravel()
            finite = values[np.isfinite(values)]
            spread = finite.std() if finite.size else 0.0
            centred = (values - (finite.mean() if finite.size else 0.0)) / (spread if spread > 0 else 1.0)
            columns.append(np.nan_to_num(centred, nan=0.0))
        return np.stack(columns, axis=1)

    def similar_heads(self, layer: int, head: int, count: int = 5) -> list[HeadScore]:
        """The `count` heads whose profiles lie nearest this head's (Euclidean), nearest first; the
        score is the distance."""
        profile = self.profile()
        me = layer * self.n_heads + head
        distances = np.linalg.norm(profile - profile[me], axis=1)
        order = [i for i in np.argsort(distances, kind="stable") if i != me][:count]
        return [HeadScore(int(i) // self.n_heads, int(i) % self.n_heads, float(distances[i])) for i in order]

    def sink_rate(self) -> float | None:
        """Gu et al.'s model-wide sink rate: the share of heads that sink, averaged over texts."""
        grid = self.scores.get("sink_rate")
        return None if grid is None or not np.isfinite(grid).any() else float(np.nanmean(grid))

    # --- as data ----------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "model": self.model_name, "layers": self.n_layers, "heads": self.n_heads, "source": self.source,
            "settings": self.settings.to_dict(), "texts": self.texts, "skipped": self.skipped,
            "truncated": self.truncated, "tokens": self.tokens, "uniform_entropy": self.uniform_entropy,
            "seconds": self.seconds, "fingerprint": self.fingerprint, "examples": list(self.examples),
            "not_applicable": dict(self.not_applicable),
            "measures": {key: {"title": BY_KEY[key].title, "scores": _rows(self.scores[key]),
                               "texts": self.counts[key].astype(int).tolist(), "best": _rows(self.best[key]),
                               "best_text": self.best_text[key].astype(int).tolist()} for key in self.measures},
        }

    @classmethod
    def from_dict(cls, data: dict) -> CensusResult:
        measures = data["measures"]

        def grids(name: str, dtype=np.float64) -> dict[str, np.ndarray]:
            return {key: np.array([[np.nan if v is None else v for v in row] for row in value[name]], dtype=dtype)
                    for key, value in measures.items()}

        return cls(str(data["model"]), int(data["layers"]), int(data["heads"]), str(data["source"]),
                   CensusSettings.from_dict(data["settings"]), int(data["texts"]), int(data["skipped"]),
                   int(data["truncated"]), int(data["tokens"]), grids("scores"), grids("texts", np.int64),
                   grids("best"), grids("best_text", np.int64), [str(t) for t in data["examples"]],
                   None if data["uniform_entropy"] is None else float(data["uniform_entropy"]),
                   float(data["seconds"]), str(data["fingerprint"]),
                   {str(k): str(v) for k, v in data.get("not_applicable", {}).items()})


def _rows(grid: np.ndarray) -> list[list[float | None]]:
    """A grid as JSON rows: NaN (no text) as null."""
    return [[None if not np.isfinite(v) else float(v) for v in row] for row in grid]
