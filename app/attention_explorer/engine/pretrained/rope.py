"""Rotary positions (RoPE) and their scalings for contexts longer than a model was trained on, made as
transformers 5.24 makes them (modeling_rope_utils.py): in float32, in its order of operations.

RoPE turns dims i and i + r/2 of q and k (i < r/2, over the r dims it turns) by the angle
position × f_i, f_i = base^(−2i/r); cos and sin of those angles are the tables (n × r) the forward
multiplies by (ops.apply_rope). A scaling changes the frequencies f_i, and some scale cos and sin too:

    linear    every f_i ÷ factor, as if each position were ÷ factor (kaiokendev's position
              interpolation): Architecture.rope_factor, not a class here
    llama3    Llama 3.1: each f_i by its wavelength 2π/f_i (Llama3)
    dynamic   NTK-aware scaling (bloc97), made dynamic (emozilla): the base enlarged for a text
              longer than the model's context (Dynamic)
    yarn      YaRN (Peng et al. 2023): each f_i between itself and f_i ÷ factor by how many turns it
              makes over the original context; cos and sin × an attention factor (Yarn)
    longrope  Phi-3's 128k models (Phi-3 technical report, after LongRoPE): each f_i ÷ a factor of its
              own, one list for texts within the original context and one past it; cos and sin × an
              attention factor (LongRope). With the two lists alike, the divisors a GGUF file holds
              for Llama 3.1 (llama.cpp turns both scalings by such divisors)

Two of them depend on how long the text is when it is read (`by_length`): transformers computes the
frequencies of a forward from its length, max(position) + 1. A forward over n tokens turns every
token by those of a reading of n. A generation reads its prompt at once and then one token at a
time, and keeps the keys it made: token j ≥ prompt was turned by those of a reading of j + 1 tokens,
the prompt's by those of the prompt, and the cache keeps them so. `lengths` gives each row's reading.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def lengths(n: int, at_once: int | None = None) -> np.ndarray:
    """How long the text was when each of its n tokens was read: `at_once` tokens read at once (a
    generation's prompt), then one at a time (token j: j + 1); None: the whole text at once."""
    return np.maximum(np.arange(1, n + 1), n if at_once is None else at_once)


def plain_frequencies(theta: float, dims: int) -> np.ndarray:
    """f_i = 1 ÷ base^(2i/r), float32 (transformers' compute_default_rope_parameters)."""
    return 1.0 / theta ** exponents(dims)


def exponents(dims: int) -> np.ndarray:
    """2i/r for i < r/2, float32 (torch.arange(0, dim, 2).float() / dim)."""
    return np.arange(0, dims, 2, dtype=np.float32) / np.float32(dims)


def rope_tables(n: int, dims: int, theta: float, factor: float = 1.0, scaling: RopeScaling | None = None,
                at_once: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (n × dims) of HF's rotary embedding over the `dims` leading numbers of a head (all of
    them, or a part: partial rotary): frequency i used by dims i and i + dims/2. With a linear scaling
    `factor`, every frequency ÷ factor (positions read as position ÷ factor); with `scaling`, its
    frequencies, for a text read `at_once` tokens at once and then one at a time (lengths), and
    its attention factor on cos and sin."""
    if scaling is None:
        inv_freq = plain_frequencies(theta, dims)
        if factor != 1.0:
            inv_freq /= np.float32(factor)
    else:
        inv_freq = scaling.frequencies(theta, dims, lengths(n, at_once))
    angles = np.arange(n, dtype=np.float32)[:, None] * inv_freq
    angles = np.concatenate([angles, angles], axis=1)
    cos, sin = np.cos(angles), np.sin(angles)
    if scaling is not None and scaling.attention != 1.0:
        cos *= np.float32(scaling.attention)
        sin *= np.float32(scaling.attention)
    return cos, sin


def scores_note(attention: float, name: str) -> str:
    """What an attention factor m on cos and sin does, for the RoPE step's formula."""
    return (f"; cos θ and sin θ are × {attention:.4g} ({name}'s attention factor), so every score q·k is × "
            f"{attention * attention:.4g}")


@dataclass(frozen=True)
class Llama3:
    """Llama 3.1's scaling (transformers' _compute_llama3_parameters): a frequency whose wavelength 2π/f
    is longer than original ÷ low is divided by `factor`, one shorter than original ÷ high is kept, and
    one between is blended, s·f + (1 − s)·f ÷ factor with s = (original ÷ wavelength − low) ÷ (high − low)."""

    factor: float
    low: float       # low_freq_factor
    high: float      # high_freq_factor
    original: int    # original_max_position_embeddings
    attention = 1.0
    by_length = False

    def frequencies(self, theta: float, dims: int, lengths: np.ndarray) -> np.ndarray:
        inv_freq = plain_frequencies(theta, dims)
        wavelength = np.float32(2 * math.pi) / inv_freq
        context = self.original
        scaled = np.where(wavelength > context / self.low, inv_freq / np.float32(self.factor), inv_freq)
        smooth = (np.float32(context) / wavelength - np.float32(self.low)) / np.float32(self.high - self.low)
        blended = (1 - smooth) * scaled / np.float32(self.factor) + smooth * scaled
        between = ~(wavelength < context / self.high) & ~(wavelength > context / self.low)
        return np.where(between, blended, scaled).astype(np.float32)

    def describe(self, theta: float, dims: int, n: int, at_once: int | None) -> str:
        return (f"scaled as Llama 3.1 scales it: ÷ {self.factor:g} where its wavelength 2π/f_j is over "
                f"{self.original / self.low:,.0f} tokens, kept where under {self.original / self.high:,.0f}, "
                f"blended between")


@dataclass(frozen=True)
class Dynamic:
    """Dynamic NTK scaling (transformers' _compute_dynamic_ntk_parameters and dynamic_rope_update): a
    reading of n tokens, n over the model's context L (`max_position_embeddings`), turns by the base
    b' = b·(s·n ÷ L − (s − 1))^(r ÷ (r − 2)), s the factor; a reading of at most L by the base as it is.
    transformers keeps the frequencies of the longest reading so far in the model and makes them again
    when a longer one comes; a generation's steps grow one token at a time, so each step's are its own
    length's, as here. A model reused for a shorter text still longer than L keeps the longer one's
    frequencies there; the frequencies here are always those of the reading's own length (a model
    freshly loaded, as transformers' generate and its forward over one text use it)."""

    factor: float
    original: int    # max_position_embeddings: the longest text read with the base as it is
    attention = 1.0
    by_length = True

    def bases(self, theta: float, dims: int, lengths: np.ndarray) -> np.ndarray:
        """b' of each reading, float32 as transformers works it out from a tensor length."""
        n = np.maximum(lengths, self.original).astype(np.float32)
        grown = np.float32(self.factor) * n / np.float32(self.original) - np.float32(self.factor - 1)
        return np.float32(theta) * grown ** np.float32(dims / (dims - 2))

    def frequencies(self, theta: float, dims: int, lengths: np.ndarray) -> np.ndarray:
        plain = plain_frequencies(theta, dims)
        longer = lengths > self.original
        if not longer.any():
            return plain
        rows = np.repeat(plain[None], len(lengths), axis=0)
        rows[longer] = 1.0 / self.bases(theta, dims, lengths[longer])[:, None] ** exponents(dims)
        return rows

    def describe(self, theta: float, dims: int, n: int, at_once: int | None) -> str:
        rule = (f"(dynamic NTK scaling: the base as it is for a text of at most {self.original:,} tokens, "
                f"base·({self.factor:g}·m ÷ {self.original:,} − {self.factor - 1:g})^({dims}/{dims - 2}) for one of "
                f"m tokens past them)")
        if at_once is not None and at_once < n and n > self.original:
            return (f"with the base of the text as long as it was when each token was read {rule}: the "
                    f"prompt's {at_once} tokens with that of {at_once}, each later one with that of the text up "
                    f"to it, as the generation read them")
        if n <= self.original:
            return f"as it is {rule}: this text has {n:,} tokens"
        base = float(self.bases(theta, dims, np.array([n]))[0])
        return f"with the base {base:,.0f} of this text's {n:,} tokens {rule}"


def yarn_attention(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's attention factor when the file gives none (transformers' get_mscale): 0.1·ln(s) + 1, or with
    both mscale m and mscale_all_dim a (DeepSeek's files) (0.1·m·ln s + 1) ÷ (0.1·a·ln s + 1); 1 for s ≤ 1."""
    def mscale_of(m: float) -> float:
        return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0

    return mscale_of(mscale) / mscale_of(mscale_all_dim) if mscale and mscale_all_dim else mscale_of(1.0)


@dataclass(frozen=True)
class Yarn:
    """YaRN (Peng et al. 2023; transformers' _compute_yarn_parameters): frequency j is kept where it
    turns more than β_fast times over the original context, divided by the factor where it turns fewer
    than β_slow times, and blended linearly between, over dims j (low, high) from
    dim(β) = r·ln(original ÷ (2π·β)) ÷ (2·ln base), rounded out (floor, ceil) unless `truncate` is
    false. cos and sin are × `attention`: the file's attention_factor, else 0.1·ln(s) + 1 (with
    mscale and mscale_all_dim, the ratio of 0.1·m·ln(s) + 1 of each)."""

    factor: float
    original: int    # original_max_position_embeddings
    beta_fast: float
    beta_slow: float
    truncate: bool
    attention: float
    by_length = False

    def ramp(self, theta: float, dims: int) -> tuple[float, float]:
        """The dims where the blend starts and ends (transformers' find_correction_range)."""
        def dim(rotations: float) -> float:
            return dims * math.log(self.original / (rotations * 2 * math.pi)) / (2 * math.log(theta))

        low, high = dim(self.beta_fast), dim(self.beta_slow)
        if self.truncate:
            low, high = math.floor(low), math.ceil(high)
        return max(low, 0), min(high, dims - 1)

    def frequencies(self, theta: float, dims: int, lengths: np.ndarray) -> np.ndarray:
        powers = theta ** exponents(dims)
        extrapolation, interpolation = 1.0 / powers, 1.0 / (np.float32(self.factor) * powers)
        low, high = self.ramp(theta, dims)
        if low == high:
            high += 0.001  # transformers' guard against a zero-width ramp
        ramp = np.clip((np.arange(dims // 2, dtype=np.float32) - low) / (high - low), 0, 1)
        kept = 1 - ramp
        return interpolation * (1 - kept) + extrapolation * kept

    def describe(self, theta: float, dims: int, n: int, at_once: int | None) -> str:
        low, high = self.ramp(theta, dims)
        return (f"kept for j up to {low:g}, ÷ {self.factor:g} from j = {high:g} on, blended between (YaRN over "
                f"an original {self.original:,} tokens)" + scores_note(self.attention, "YaRN"))


def longrope_attention(factor: float, original: int) -> float:
    """longrope's attention factor when the file gives none: √(1 + ln s ÷ ln original), 1 for s ≤ 1."""
    return 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))


@dataclass(frozen=True)
class LongRope:
    """Phi-3's long-context scaling (transformers' _compute_longrope_parameters): f_i = 1 ÷ (e_i·base^(2i/r)),
    e the `short` factors for a reading within the original context, the `long` ones past it (its
    dynamic_rope_update). cos and sin are × `attention`: the file's attention_factor, else
    √(1 + ln s ÷ ln original) with s = max_position_embeddings ÷ original (or the file's factor), 1 for
    s ≤ 1. `rereads`: the model's generation drops its cache and reads the whole text again when it
    grows past the original context (Phi-3's prepare_inputs_for_generation), so every token's keys are
    then the long factors'; other families' keep the short factors' keys of the tokens read before."""

    short: tuple[float, ...]
    long: tuple[float, ...]
    original: int    # original_max_position_embeddings
    attention: float
    rereads: bool = False
    by_length = True

    def frequencies(self, theta: float, dims: int, lengths: np.ndarray) -> np.ndarray:
        powers = theta ** exponents(dims)
        short = 1.0 / (np.array(self.short, dtype=np.float32) * powers)
        long = 1.0 / (np.array(self.long, dtype=np.float32) * powers)
        longer = lengths > self.original
        if longer.all():
            return long
        return np.where(longer[:, None], long, short) if longer.any() else short

    def describe(self, theta: float, dims: int, n: int, at_once: int | None) -> str:
        if self.short == self.long:  # one list for every length (a GGUF file's Llama 3.1 scaling: gguf_families)
            return "÷ a divisor of its own, the same at every length of the text" + (
                scores_note(self.attention, "longrope") if self.attention != 1.0 else "")
        factors = (f"(longrope: a factor per frequency, short_factor within the original {self.original:,} tokens, "
                   f"long_factor past them)")
        if at_once is not None and at_once <= self.original < n:
            which = (f"÷ short_factor_j for the tokens read while the text was within {self.original:,} tokens and "
                     f"÷ long_factor_j for the later ones, as the generation read them {factors}")
        elif n > self.original:
            which = f"÷ long_factor_j, this text of {n:,} tokens being past the original {factors}"
        else:
            which = f"÷ short_factor_j, this text of {n:,} tokens being within the original {factors}"
        return which + scores_note(self.attention, "longrope")


RopeScaling = Llama3 | Dynamic | Yarn | LongRope


def reads_again(scaling: RopeScaling | None, at_once: int, length: int) -> bool:
    """Whether a generation that read `at_once` tokens at once and then one at a time reads its whole
    text again on reaching `length` tokens: Phi-3's longrope, the first time the text grows past the
    original context (LongRope.rereads)."""
    return isinstance(scaling, LongRope) and scaling.rereads and at_once <= scaling.original < length
