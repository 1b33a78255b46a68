"""The trace: every intermediate of one attention computation, the single source for every view.

Views, exports and the command line read a Trace; nothing downstream recomputes attention.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .errors import EngineError
from .options import Options

if TYPE_CHECKING:  # a reading holds the trace it was made from
    from .reading import Reading

# The matrices of a head a user can pick for the heatmap or a CSV export.
HEAD_MATRICES = ("weights", "scores", "scaled", "masked", "norm", "output", "q", "k", "v")
# The n × n ones: rows are the words looking, columns the words looked at (what a heatmap shows).
SQUARE_MATRICES = ("weights", "scores", "scaled", "masked", "norm")
# Why a trace may have no norm-based attention: it is read per token, before pieces are merged.
NORM_UNAVAILABLE = ("norm-based attention is read per token of the model's own computation: switch Words and "
                    "Rollout off to see it")


@dataclass(frozen=True)
class HeadTrace:
    """One head's computation. n = tokens, d_k = columns of this head."""

    index: int          # 0-based
    columns: slice      # which columns of W_Q, W_K, W_V this head uses
    w_q: np.ndarray     # d_model × d_k
    w_k: np.ndarray
    w_v: np.ndarray
    q: np.ndarray       # n × d_k: X · W_Q
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray  # n × n: Q · Kᵀ
    scaled: np.ndarray  # scores ÷ √d_k (equal to scores when scaling is off)
    masked: np.ndarray  # scaled with −∞ where the mask forbids (equal to scaled without a mask)
    weights: np.ndarray  # softmax(masked), each row sums to 1
    output: np.ndarray  # n × d_k: weights · V
    # Real pretrained models only (toy models leave them at None): q = X·W_Q + b_q (likewise k, v);
    # for RoPE models q and k above are after the rotation and these hold them before it; the
    # key/value head this query head reads when heads share keys and values (Llama).
    b_q: np.ndarray | None = None
    b_k: np.ndarray | None = None
    b_v: np.ndarray | None = None
    q_before_rope: np.ndarray | None = None
    k_before_rope: np.ndarray | None = None
    kv_head: int | None = None
    # Norm-based attention (Kobayashi et al. 2020, engine.census.norm_attention): α_ij · ‖f(x_j)‖, the
    # length of what this head moves from token j to token i (n × n), and ‖f(x_j)‖ (n), with
    # f(x) = (x·W_V + b_V)·W_O restricted to the head; None where a reading has no such numbers.
    norm: np.ndarray | None = None
    moved_norm: np.ndarray | None = None

    @property
    def d_k(self) -> int:
        return self.q.shape[1]


@dataclass(frozen=True)
class Trace:
    """Every intermediate of softmax(QKᵀ/√d_k)·V on one sentence, with its labels."""

    model_name: str
    sentence: str
    tokens: list[str]       # the known words the computation ran on
    labels: list[str]       # the same, with repeats told apart ("the₁", "the₂")
    unknown: list[str]      # typed words the model does not know (not in the computation)
    features: list[str]     # names of the d_model input dimensions
    options: Options
    embedding: np.ndarray   # n × d_model: the vocabulary rows
    positional: np.ndarray | None  # n × d_model sinusoidal encoding, when switched on
    x: np.ndarray           # n × d_model: embedding (+ positional encoding)
    mask: np.ndarray | None  # n × n booleans, True where forbidden (causal), or None
    heads: tuple[HeadTrace, ...]
    concat: np.ndarray      # n × d_proj: the heads' outputs side by side
    w_o: np.ndarray | None  # d_proj × d_model, or None (the output is then the concatenation)
    output: np.ndarray      # concat · W_O, or concat
    # Real pretrained models only: which layer this is, W_O's bias (output = concat · W_O + b_o) and
    # the heads switched off (their output is zero in concat).
    layer: int | None = None
    b_o: np.ndarray | None = None
    ablated_heads: frozenset[int] = frozenset()
    # Rotary position models (Llama): cos θ and sin θ (n × d_k) that turned each head's q and k, the
    # linear factor their positions were divided by (Gemma 3's global layers, a linear scaling; else 1),
    # and how a scaling for a longer context made their frequencies f_j (Llama 3.1's, dynamic NTK, YaRN,
    # longrope), in words that follow "f_j = base^(−2j/d)"; "" when none did.
    rope_cos: np.ndarray | None = None
    rope_sin: np.ndarray | None = None
    rope_factor: float = 1.0
    rope_scaling: str = ""
    # A real model's layer read otherwise than head by head over its own tokens (words, hidden
    # tokens, rollout): how the weights were made, from which trace (engine.reading); else None.
    reading: Reading | None = None
    # Real models whose arithmetic differs from softmax(QKᵀ/√d_k): what q·k is divided by when it is not
    # √d_k (Gemma 2's √query_pre_attn_scalar), the soft cap c of c·tanh(s ÷ c) (Gemma 2), and where q
    # and k are RMS-normalised before they are turned ("head": each head's numbers, Qwen3; "whole":
    # the whole projection, OLMo 2), so the steps write out what the model did.
    score_root: float | None = None
    score_cap: float = 0.0
    qk_norm: str = ""
    # Cross-attention (an encoder–decoder's target reading its source): the keys and values are another
    # text's tokens than the queries', so the n × n matrices are n × n_keys, rows the queries' tokens
    # above and columns these; None where queries and keys are the same tokens.
    key_tokens: list[str] | None = None
    key_labels: list[str] | None = None
    key_x: np.ndarray | None = None  # n_keys × d_model: what W_K and W_V read (the encoder's last hidden states)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def n_keys(self) -> int:
        """How many tokens are looked at: the columns of the weights."""
        return self.n if self.key_tokens is None else len(self.key_tokens)

    @property
    def looked_at_labels(self) -> list[str]:
        """The labels of the tokens looked at (the weights' columns): the tokens' own, or the keys' text's."""
        return list(self.labels if self.key_labels is None else self.key_labels)

    def labels_of(self, looked_at: bool) -> list[str]:
        """The labels of the tokens looking (the weights' rows), or of those looked at (the columns):
        a focused word is named by its role, since in cross-attention the two are different texts."""
        return self.looked_at_labels if looked_at else list(self.labels)

    def matrix(self, name: str, head: int = 0) -> np.ndarray:
        """A named matrix of one head (see HEAD_MATRICES)."""
        if name not in HEAD_MATRICES:
            raise ValueError(f"unknown matrix {name!r}; choose one of {', '.join(HEAD_MATRICES)}")
        if not self.has_matrix(name, head):
            raise EngineError(NORM_UNAVAILABLE)
        return getattr(self.heads[head], name)

    def has_matrix(self, name: str, head: int = 0) -> bool:
        """Whether this trace holds matrix `name` (a reading of merged words or rollout has no norms).
        Every head holds the same matrices; `head` is the one asked, since a real model's head makes its
        n × n matrix to answer: asking head 0 while another was shown made and kept head 0's too (16 MB
        at 2,048 tokens, 268 MB at 8,192)."""
        if not self.heads:
            return False
        if name == "norm":  # known by its lengths, without making a real model's n × n matrix to see
            return self.heads[head].moved_norm is not None
        return getattr(self.heads[head], name, None) is not None

    def row_labels(self, name: str) -> list[str]:
        """Labels for the rows of `matrix(name)`: k and v hold a row per token looked at (the source's in
        cross-attention), every other matrix a row per token looking."""
        return self.looked_at_labels if name in ("k", "v") else list(self.labels)

    def column_labels(self, name: str, head: int = 0) -> list[str]:
        """Labels for the columns of `matrix(name, head)`: tokens for n × n matrices, else dimensions."""
        if name in SQUARE_MATRICES:
            return self.looked_at_labels
        prefix = "out" if name == "output" else name
        start = self.heads[head].columns.start
        return [f"{prefix}{start + j + 1}" for j in range(self.heads[head].d_k)]

    def output_column_labels(self) -> list[str]:
        """Feature names when W_O maps back to d_model, else the concatenated dimensions."""
        if self.w_o is not None:
            return list(self.features)
        return [f"out{j + 1}" for j in range(self.concat.shape[1])]
