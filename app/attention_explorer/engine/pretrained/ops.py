"""The float32 building blocks of real transformers: norms, activations, RoPE's turn (its tables: rope.py),
soft-capping, masked softmax.

Each matches PyTorch's float32 definition to about 1e-6, which keeps whole models within 1e-5 of
transformers. Work is done in place where it saves a pass over large arrays.
"""

from __future__ import annotations

import numpy as np

# Abramowitz & Stegun 7.1.26: erfc(z) ≈ (a1·t + … + a5·t⁵)·exp(−z²), t = 1/(1 + p·z), z ≥ 0, error ≤ 1.5e-7.
# Here z = |x|/√2 and the result is halved, so both are folded into the constants.
_P_OVER_SQRT2 = np.float32(0.3275911 / np.sqrt(2))
_A_HALF = tuple(np.float32(a / 2) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))
_SQRT_2_OVER_PI = np.float32(np.sqrt(2 / np.pi))
GELU_CELLS = 1 << 15  # numbers worked at once: 128 kB, in the core's own cache


def gelu_erf(x: np.ndarray) -> np.ndarray:
    """x·Φ(x) with the exact (erf) normal CDF, as BERT uses; NumPy has no erf, so A&S 7.1.26.

    With h = erfc(|x|/√2)/2, Φ(x) = 1 − h for x ≥ 0 and h for x < 0, so x·Φ(x) = max(x, 0) − |x|·h
    for either sign. Every step is a plain vectorised ufunc written in place (a masked `where=` step
    was 3× slower), on GELU_CELLS numbers at a time: its dozen passes then stay in the core's cache
    (1.5 times faster at 512 tokens than passes over the whole matrix). This is BERT's costliest
    step after the matrix products.
    """
    flat = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x.reshape(1, -1)
    out = np.empty_like(flat)
    rows = max(1, GELU_CELLS // flat.shape[1])
    for start in range(0, flat.shape[0], rows):
        out[start:start + rows] = _gelu_erf(flat[start:start + rows])
    return out.reshape(x.shape)


def _gelu_erf(x: np.ndarray) -> np.ndarray:
    magnitude = np.abs(x)
    t = magnitude * _P_OVER_SQRT2
    t += 1
    np.reciprocal(t, out=t)
    h = t * _A_HALF[0]
    for a in _A_HALF[1:]:
        h += a
        h *= t
    np.square(x, out=t)
    t *= np.float32(-0.5)
    np.exp(t, out=t)             # exp(−x²/2) = exp(−z²)
    h *= t                       # erfc(|x|/√2) / 2
    h *= magnitude
    np.maximum(x, 0, out=magnitude)
    magnitude -= h
    return magnitude


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GPT-2's GELU: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    inner = x * x
    inner *= np.float32(0.044715) * x
    inner += x
    inner *= _SQRT_2_OVER_PI
    np.tanh(inner, out=inner)
    inner += 1
    inner *= 0.5 * x
    return inner


def silu(x: np.ndarray) -> np.ndarray:
    """x·sigmoid(x) = x / (1 + e^−x), Llama's gate, written into x. Its one temporary holds GELU_CELLS
    numbers at a time along the first axis (each number is worked out alone, so the result is the
    same): one of the whole gate was the feed-forward's largest array after its product (12 MiB at
    2,048 tokens of SmolLM2), and a forward's peak grew by it."""
    rows = max(1, GELU_CELLS // max(1, x[:1].size))
    t = np.empty_like(x[:rows])
    for start in range(0, x.shape[0], rows):
        part = x[start:start + rows]
        temporary = t[:len(part)]
        np.negative(part, out=temporary)
        np.exp(temporary, out=temporary)
        temporary += 1
        np.divide(part, temporary, out=part)
    return x


ACTIVATIONS = {"gelu": gelu_erf, "gelu_tanh": gelu_tanh, "silu": silu}


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, eps: float) -> np.ndarray:
    """(x − mean) / √(var + eps) · weight + bias over the last axis (biased variance, as PyTorch)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    centred *= 1 / np.sqrt(var + np.float32(eps))
    centred *= weight
    if bias is not None:
        centred += bias
    return centred


def rms_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, eps: float) -> np.ndarray:
    """x / √(mean(x²) + eps) · weight over the last axis (RMSNorm has no bias; `bias` is ignored). One
    array of x's size alive at a time beside x (three had been); the same products, so the same bits.
    The mean is np.mean's own sum and division without its Python around them (the same bits: its
    division by the count in float64, rounded to float32, is the float32 division): a generation's
    step makes 61 of these on one row each, once the products have pushed the interpreter out of the
    processor's caches, and np.mean's wrapping was half their cost (0.9 ms of a 44 ms SmolLM2 token)."""
    squares = x * x
    scale = np.add.reduce(squares, axis=-1, keepdims=True)
    del squares
    scale /= np.float32(x.shape[-1])
    scale += np.float32(eps)
    np.sqrt(scale, out=scale)
    np.divide(np.float32(1), scale, out=scale)
    normed = x * scale
    normed *= weight
    return normed


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate every head of x (…, n, d_head) by position: x·cos + rotate_half(x)·sin (HF convention)
    over the leading cos.shape[-1] dims; the others (partial rotary) pass unturned."""
    dims = cos.shape[-1]
    if dims < x.shape[-1]:
        turned = np.array(x)
        turned[..., :dims] = apply_rope(x[..., :dims], cos, sin)
        return turned
    half = dims // 2
    # written into two arrays of x's size (four had been alive at once: a forward's largest moment at
    # 2,048 SmolLM2 tokens); the same products and sum, so the same bits
    turned = x * cos
    rotated = np.empty_like(x)
    np.negative(x[..., half:], out=rotated[..., :half])
    rotated[..., half:] = x[..., :half]
    rotated *= sin
    turned += rotated
    return turned


def bias_part(bias: np.ndarray | None, columns: slice) -> np.ndarray | None:
    """The entries of a bias for some output columns (a head's, or q's against k's and v's); no bias, None."""
    return None if bias is None else bias[columns]


def soft_cap(values: np.ndarray, cap: float) -> np.ndarray:
    """c·tanh(values ÷ c) in place (Gemma 2's scores and next-token scores): near values for small
    ones, never beyond ±c."""
    values /= np.float32(cap)
    np.tanh(values, out=values)
    values *= np.float32(cap)
    return values


def masked_softmax(scores: np.ndarray, causal: bool) -> np.ndarray:
    """Row softmax of (…, n, n) scores in place, with −∞ above the diagonal when `causal`."""
    if causal:
        n = scores.shape[-1]
        scores[..., np.triu(np.ones((n, n), dtype=bool), k=1)] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores
