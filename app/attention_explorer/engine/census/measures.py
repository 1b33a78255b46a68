"""The census's measures in one table, the settings they take, and every measure of one layer of one text.

Each measure is one module of this package with its definition and its source; this module only
names them, says in a line what each finds (shown in the window and the CLI's help), and applies them
together so that a text's facts (its patterns, its punctuation) are worked out once for all layers.
A measure that a text cannot inform (a duplicate-token score on a text that repeats no token) is left
out for that text, and the census averages each measure over the texts that inform it. A measure that
does not apply to a subject's heads at all (cross-attention's on one text's self-attention, those
within one text on cross-attention) is not measured, and the result says why (subjects.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import OptionsError
from .clark import clark_averages
from .detection import Pattern, attention_total, mul_score
from .duplicate_token import duplicate_token_pattern
from .entropy import attention_entropy
from .induction import induction_pattern, induction_stripe_scores
from .previous_token import previous_token_pattern
from .sink import DEFAULT_EPSILON, sinks


@dataclass(frozen=True)
class Measure:
    key: str      # the column name in CSV and JSON
    group: str    # what --measure calls it
    title: str    # how the window names it
    finds: str    # one line, plain words


MEASURES = (
    Measure("induction", "induction", "induction",
            "looks at the token after an earlier copy of itself (TransformerLens pattern, mul score)"),
    Measure("induction_stripe", "induction", "induction (repeated sequence)",
            "on a random sequence written twice: mean weight on the token after the earlier copy"),
    Measure("previous", "previous", "previous token", "looks at the token just before it"),
    Measure("duplicate", "duplicate", "duplicate token", "looks back at earlier copies of the same token"),
    Measure("sink", "sink", "sink (first token)", "mean weight the first token receives (Gu et al. α₁)"),
    Measure("sink_rate", "sink", "sinks on the first token", "share of texts where α₁ is above ε"),
    Measure("clark_first", "clark", "to [CLS] / first token", "share of attention on the first token"),
    Measure("clark_sep", "clark", "to [SEP] / later specials", "share on special tokens after the first"),
    Measure("clark_punct", "clark", "to . and ,", "share on full stops and commas"),
    Measure("clark_self", "clark", "to itself", "share on the token itself"),
    Measure("clark_next", "clark", "to the next token", "share on the token after it"),
    Measure("clark_prev", "clark", "to the previous token", "share on the token before it"),
    Measure("entropy", "entropy", "entropy (nats)", "how spread out each row is; uniform attention is ln n"),
    Measure("cross_own", "cross", "to its own token in the source",
            "cross-attention: a target token reads the source's copies of itself (mul score)"),
    Measure("cross_next", "cross", "to the source token it writes next",
            "cross-attention: a target token reads the source's copies of the token the decoder writes next "
            "(mul score)"),
)
MEASURE_KEYS = tuple(m.key for m in MEASURES)
CROSS_KEYS = ("cross_own", "cross_next")   # cross-attention's own: a target reading its source
# within one text only: each compares a token with others of its own text, by position or by id
WITHIN_ONE_TEXT = ("induction", "induction_stripe", "previous", "duplicate", "clark_self", "clark_next", "clark_prev")
BY_KEY = {m.key: m for m in MEASURES}
GROUPS = tuple(dict.fromkeys(m.group for m in MEASURES))   # induction, previous, duplicate, sink, clark, entropy


def keys_of(groups: Sequence[str]) -> tuple[str, ...]:
    """The measure keys of the named groups ("all" for every one), in the table's order."""
    wanted = set(GROUPS) if "all" in groups else set(groups)
    unknown = wanted - set(GROUPS)
    if unknown:
        raise OptionsError(f"no measure called {', '.join(sorted(unknown))}; choose from "
                           f"{', '.join(GROUPS)} or all")
    return tuple(m.key for m in MEASURES if m.group in wanted)


@dataclass(frozen=True)
class CensusSettings:
    """What the census measures and how: the same settings on the same texts give the same result
    (the cache's key holds them)."""

    measures: tuple[str, ...] = MEASURE_KEYS
    exclude_first: bool = False      # TransformerLens's exclude_bos, for the pattern scores
    exclude_diagonal: bool = False   # TransformerLens's exclude_current_token
    sink_epsilon: float = DEFAULT_EPSILON
    seed: int = 0                    # of the built-in battery's random sequences

    def __post_init__(self):
        unknown = [key for key in self.measures if key not in BY_KEY]
        if unknown or not self.measures:
            raise OptionsError(f"unknown measure {', '.join(unknown) or '(none given)'}")
        if not 0.0 <= float(self.sink_epsilon) < 1.0:
            raise OptionsError(f"the sink threshold ε must be at least 0 and below 1 (a weight is at most 1), "
                               f"got {self.sink_epsilon}")
        if int(self.seed) < 0:
            raise OptionsError(f"the seed must be 0 or more, got {self.seed}")

    def to_dict(self) -> dict:
        return {"measures": list(self.measures), "exclude_first": self.exclude_first,
                "exclude_diagonal": self.exclude_diagonal, "sink_epsilon": float(self.sink_epsilon),
                "seed": int(self.seed)}

    @classmethod
    def from_dict(cls, data: dict) -> CensusSettings:
        return cls(tuple(data["measures"]), bool(data["exclude_first"]), bool(data["exclude_diagonal"]),
                   float(data["sink_epsilon"]), int(data["seed"]))


@dataclass(frozen=True)
class TextFacts:
    """What the measures need to know about one tokenised text, worked out once for all its layers."""

    ids: np.ndarray
    labels: Sequence[str]
    special: np.ndarray
    causal: bool
    repeat_start: int | None = None   # where the two copies of a repeated sequence begin, if it is one
    period: int = 0
    patterns: dict[str, Pattern] = field(default_factory=dict)

    @classmethod
    def of(cls, ids, labels, special, causal: bool, period: int = 0, repeat_start: int | None = None,
           more: dict[str, Pattern] | None = None) -> TextFacts:
        """The facts of a text of tokens `ids` looking at tokens `labels` / `special` (the same text but
        in cross-attention); `more` are patterns the subject worked out itself (cross-attention's)."""
        ids = np.asarray(ids)
        patterns = {"previous": previous_token_pattern(len(ids)), "duplicate": duplicate_token_pattern(ids),
                    "induction": induction_pattern(ids), **(more or {})}
        return cls(ids, list(labels), np.asarray(special, dtype=bool), causal, repeat_start, period,
                   {key: p for key, p in patterns.items() if not p.empty})


def layer_scores(weights: np.ndarray, facts: TextFacts, settings: CensusSettings) -> dict[str, np.ndarray]:
    """Every measure of `settings` that this text informs, for every head of one layer (heads, n, n), or
    (heads, n, n_source) for cross-attention: key → (heads,) float64. The weight each token receives is
    summed once and shared by the pattern scores' denominator, the sink importance (α₁ is the first
    column's mean) and Clark's averages. Cross-attention has no diagonal (a target token is not a source
    token): its patterns leave out the first token's weight when asked, never a diagonal's."""
    wanted = set(settings.measures)
    out: dict[str, np.ndarray] = {}
    n = weights.shape[-2]  # the tokens looking
    column_totals = weights.sum(axis=-2).astype(np.float64)               # (heads, n); float32 sums: n ≤ 512 terms
    for keys, diagonal in ((("previous", "duplicate", "induction"), settings.exclude_diagonal), (CROSS_KEYS, False)):
        patterns = [key for key in keys if key in wanted and key in facts.patterns]
        if not patterns:
            continue
        exclusions = {"exclude_first": settings.exclude_first, "exclude_diagonal": diagonal}
        total = attention_total(weights, column_totals=column_totals, **exclusions)
        for key in patterns:
            score = mul_score(weights, facts.patterns[key], total=total, **exclusions)
            if np.isfinite(score).all():
                out[key] = score
    if "induction_stripe" in wanted and facts.repeat_start is not None:
        out["induction_stripe"] = induction_stripe_scores(weights, facts.repeat_start, facts.period)
    if wanted & {"sink", "sink_rate"}:
        importance = column_totals[:, 0] / n        # token_importance(weights, 0): every row sees the first token
        if "sink" in wanted:
            out["sink"] = importance
        if "sink_rate" in wanted:
            out["sink_rate"] = sinks(importance, settings.sink_epsilon).astype(np.float64)
    if any(key.startswith("clark_") for key in wanted):
        for key, value in clark_averages(weights, facts.labels, facts.special, column_totals).items():
            if f"clark_{key}" in wanted:
                out[f"clark_{key}"] = value
    if "entropy" in wanted:
        out["entropy"] = attention_entropy(weights, facts.causal)
    return out
