"""The "why divide by √d_k?" lesson: random queries and keys, scored three ways.

With q and k of d_k independent entries of mean 0 and variance 1, q·k is a sum of d_k products of
variance 1, so its spread (standard deviation) is √d_k. Large spreads push softmax towards one-hot:
the top weight a nears 1 and its slope a(1−a), the gradient that reaches the scores, nears 0, so
learning stalls. Dividing by √d_k brings the spread back to 1. Dividing by d_k goes too far: the
spread falls to 1/√d_k and softmax turns nearly flat (every weight close to 1/keys).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .errors import OptionsError
from .softmax import softmax

SCALING_MODES = ("raw", "scaled", "divided_by_dk")
MIN_DK, MAX_DK = 1, 1024
MAX_KEYS = 1000
MAX_TRIALS = 10_000


def mode_divisor(mode: str, d_k: int) -> float:
    """What the scores are divided by: 1 (raw), √d_k (scaled) or d_k (divided_by_dk)."""
    if mode == "raw":
        return 1.0
    if mode == "scaled":
        return math.sqrt(d_k)
    if mode == "divided_by_dk":
        return float(d_k)
    raise ValueError(f"unknown scaling mode {mode!r}; choose one of {', '.join(SCALING_MODES)}")


@dataclass(frozen=True)
class ModeStats:
    """Averages over the trials for one way of scaling the scores."""

    spread: float      # standard deviation of the (divided) scores q·k
    top_weight: float  # mean of each query's largest softmax weight (a fraction of 1)
    slope: float       # mean of a(1−a) for that top weight a: how much gradient gets through

    def to_dict(self) -> dict:
        return {"spread": self.spread, "top_weight": self.top_weight, "slope": self.slope}


@dataclass(frozen=True)
class ScalingExperiment:
    """The outcome of `scaling_experiment`: samples for the plots and the averaged table."""

    dk: int
    keys: int
    trials: int
    seed: int
    raw_scores: np.ndarray                # trials × keys: q·k, not divided (for the histograms)
    stats: dict[str, ModeStats]           # per mode in SCALING_MODES
    first_weights: dict[str, np.ndarray]  # per mode: the first query's softmax weights (bar charts)

    def scores(self, mode: str) -> np.ndarray:
        """The score samples divided as `mode` divides them."""
        return self.raw_scores / mode_divisor(mode, self.dk)

    def expected_spread(self, mode: str) -> float:
        """What theory predicts for the spread: √d_k raw, 1 scaled, 1/√d_k divided by d_k."""
        return math.sqrt(self.dk) / mode_divisor(mode, self.dk)

    def slope_ratio(self, mode: str) -> float:
        """Mean slope under `mode` ÷ mean slope raw: how many times more gradient that scaling lets through."""
        raw, other = self.stats["raw"].slope, self.stats[mode].slope
        if raw > 0:
            return other / raw
        return math.inf if other > 0 else math.nan  # one key: every slope is 0, no ratio

    @property
    def gradient_ratio(self) -> float:
        """Mean slope with √d_k scaling ÷ mean slope without: how much more gradient scaling lets through."""
        return self.slope_ratio("scaled")

    def to_dict(self) -> dict:
        data: dict = {"dk": self.dk, "keys": self.keys, "trials": self.trials, "seed": self.seed}
        data.update({mode: self.stats[mode].to_dict() for mode in SCALING_MODES})
        ratio = self.gradient_ratio
        data["gradient_ratio"] = ratio if math.isfinite(ratio) else None  # JSON has no infinity
        return data


def check_scaling_settings(dk: int, keys: int, trials: int, seed: int = 0) -> None:
    """Raise OptionsError naming the first setting out of range."""
    for name, value, low, high in (("d_k", dk, MIN_DK, MAX_DK), ("keys", keys, 1, MAX_KEYS),
                                   ("trials", trials, 1, MAX_TRIALS)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise OptionsError(f"{name} must be a whole number, got {value!r}")
        if not low <= value <= high:
            raise OptionsError(f"{name} must be between {low} and {high}, got {value}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise OptionsError(f"the seed must be a whole number ≥ 0, got {seed!r}")


def scaling_experiment(dk: int, keys: int = 10, trials: int = 400, seed: int = 0) -> ScalingExperiment:
    """Score `keys` random keys against one random query per trial, and average over `trials`.

    Each trial draws a query q of `dk` standard-normal entries (numpy default_rng(seed)). Only the
    part of a key that points along q changes q·k, and for a standard-normal key that part is one
    standard-normal number z whatever direction q has (the distribution looks the same every way).
    So q·k = |q|·z has exactly the distribution it has with full keys, and we draw z instead of
    `dk` numbers per key: the queries come first (trials × dk), then z (trials × keys). That keeps
    d_k = 1024 with hundreds of trials fast enough to recompute while a slider moves.

    "spread" pools every trial and key into one standard deviation, so the few keys per trial do
    not bias it low.
    """
    check_scaling_settings(dk, keys, trials, seed)
    dk, keys, trials, seed = int(dk), int(keys), int(trials), int(seed)
    rng = np.random.default_rng(seed)
    queries = rng.standard_normal((trials, dk))
    along_query = rng.standard_normal((trials, keys))
    raw_scores = np.linalg.norm(queries, axis=1)[:, None] * along_query

    stats, first_weights = {}, {}
    for mode in SCALING_MODES:
        scores = raw_scores / mode_divisor(mode, dk)
        weights = softmax(scores)
        top = weights.max(axis=1)
        stats[mode] = ModeStats(spread=float(scores.std()), top_weight=float(top.mean()),
                                slope=float((top * (1.0 - top)).mean()))
        first_weights[mode] = weights[0].copy()
    return ScalingExperiment(dk, keys, trials, seed, raw_scores, stats, first_weights)
