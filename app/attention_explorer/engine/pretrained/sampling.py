"""Choosing a decoder's next token from its logits: greedy, or drawn with a temperature, top-k and
top-p (nucleus), from a seed, so the same settings write the same text again.

The order is transformers' own (its logits warpers): the logits are divided by the temperature, then
only the k likeliest tokens are kept, then only the smallest set of likeliest tokens whose
probabilities reach p (at least one), and the draw is from what is left, renormalised. Greedy takes
the likeliest token (the first of equal ones, as argmax does): its choices are transformers' choices,
which the parity test checks; a draw uses NumPy's generator, so a seed here and a seed there give
different draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OptionsError

CANDIDATES = 5  # the candidates kept for every step: what it was chosen from


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.0  # 0: greedy; otherwise the logits are divided by it before the draw
    top_k: int = 0            # keep the k likeliest tokens (0: all)
    top_p: float = 1.0        # keep the likeliest tokens until their probabilities reach p (1: all)
    seed: int = 0

    def __post_init__(self):
        if not (np.isfinite(self.temperature) and 0 <= self.temperature <= 100):
            raise OptionsError(f"the temperature is 0 (greedy) or a number up to 100, not {self.temperature}")
        if not 0 <= self.top_k <= 2**31 - 1:
            raise OptionsError(f"top-k keeps a whole number of tokens, 0 (all) or more, not {self.top_k}")
        if not (np.isfinite(self.top_p) and 0 < self.top_p <= 1):
            raise OptionsError(f"top-p is a share of the probability above 0 and at most 1, not {self.top_p}")
        if not 0 <= self.seed <= 2**63 - 1:
            raise OptionsError(f"the seed is a whole number from 0, not {self.seed}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def describe(self) -> str:
        if self.greedy:
            return "greedy (the likeliest token each time)"
        kept = [f"top-k {self.top_k}"] if self.top_k else []
        kept += [f"top-p {self.top_p:g}"] if self.top_p < 1 else []
        return ", ".join([f"sampled at temperature {self.temperature:g}", *kept, f"seed {self.seed}"])


@dataclass(frozen=True)
class Candidate:
    token_id: int
    probability: float  # the model's own, softmax of the logits
    drawn_from: float   # in the distribution the token was drawn from (the model's own when greedy)


@dataclass(frozen=True)
class Choice:
    token_id: int
    candidates: tuple[Candidate, ...]  # the likeliest CANDIDATES under the model, likeliest first
    probability: float                 # the chosen token's under the model (a draw may go past the candidates)


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.asarray(logits, dtype=np.float64) - np.max(logits)
    exp = np.exp(shifted)
    return exp / exp.sum()


def drawing_distribution(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """The probabilities the next token is drawn from: temperature, top-k, top-p, renormalised."""
    if sampling.greedy:
        return softmax(logits)
    probabilities = softmax(np.asarray(logits, dtype=np.float64) / sampling.temperature)
    order = np.argsort(-probabilities, kind="stable")
    keep = np.zeros(len(probabilities), dtype=bool)
    count = len(order) if sampling.top_k == 0 else min(sampling.top_k, len(order))
    kept = order[:count]
    if sampling.top_p < 1:
        reached = np.cumsum(probabilities[kept] / probabilities[kept].sum())
        kept = kept[:int(np.searchsorted(reached, sampling.top_p)) + 1]  # the smallest set reaching p
    keep[kept] = True
    drawn = np.where(keep, probabilities, 0.0)
    return drawn / drawn.sum()


def choose(logits: np.ndarray, sampling: Sampling, rng: np.random.Generator) -> Choice:
    """The next token and the candidates it was chosen from."""
    model = softmax(logits)
    # greedy draws from the model's own distribution: the same softmax, not made twice (0.3 ms a token of
    # SmolLM2's 49,152 scores, in float64)
    drawn = model if sampling.greedy else drawing_distribution(logits, sampling)
    token = int(np.argmax(logits)) if sampling.greedy else int(rng.choice(len(drawn), p=drawn))
    candidates = tuple(Candidate(int(i), float(model[i]), float(drawn[i])) for i in likeliest(model))
    return Choice(token, candidates, float(model[token]))


def likeliest(probabilities: np.ndarray, count: int = CANDIDATES) -> np.ndarray:
    """The `count` likeliest indices, likeliest first, the first of equal ones first (as a stable sort
    of the whole), without sorting the whole: sorting SmolLM2's 49,152 took 5.7 ms a step, this 0.14 ms."""
    if len(probabilities) <= count:
        return np.argsort(-probabilities, kind="stable")
    threshold = np.partition(probabilities, len(probabilities) - count)[len(probabilities) - count]
    contenders = np.flatnonzero(probabilities >= threshold)  # every tie at the edge, in index order
    return contenders[np.argsort(-probabilities[contenders], kind="stable")][:count]


def generator(sampling: Sampling) -> np.random.Generator:
    return np.random.default_rng(sampling.seed)
