"""Cross-attention: the words of one sentence look at the words of another.

This is the encoder–decoder attention of the paper: queries come from the target sentence A, keys
and values from the source sentence B, through the same W_Q, W_K, W_V (and W_O) as self-attention.
The weights are n_A × n_B: row i says how target word i spreads its attention over the source.

Choices, so the lesson stays one switch away from self-attention:
- heads and √d_k scaling work exactly as in self-attention (same columns per head);
- with positional encoding on, each sentence gets its own positions 0, 1, 2, … (as the encoder and
  the decoder of the paper each encode their own input);
- the causal mask is left out and recorded as off: it forbids looking at later words of the same
  sentence, and between two different sentences there is no "later". Every source word is visible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import embed_sentence, multi_head_attention
from .census.norm_attention import with_norm_attention
from .model import ToyModel
from .options import Options
from .tokenizer import token_labels
from .trace import HEAD_MATRICES, HeadTrace

# Matrices whose rows are source words (all others have one row per target word).
_SOURCE_ROWS = ("k", "v")
_WORD_COLUMNS = ("weights", "scores", "scaled", "masked", "norm")


@dataclass(frozen=True)
class CrossTrace:
    """Every intermediate of cross-attention, with both sentences' labels. n_A targets, n_B sources.

    Each HeadTrace holds q (n_A × d_k), k and v (n_B × d_k), scores/scaled/masked/weights
    (n_A × n_B) and output (n_A × d_k).
    """

    model_name: str
    target_sentence: str
    source_sentence: str
    target_tokens: list[str]
    source_tokens: list[str]
    target_labels: list[str]
    source_labels: list[str]
    target_unknown: list[str]
    source_unknown: list[str]
    features: list[str]
    options: Options            # as computed: causal is always False
    x_target: np.ndarray        # n_A × d_model (embedding + positional encoding when on)
    x_source: np.ndarray        # n_B × d_model
    heads: tuple[HeadTrace, ...]
    concat: np.ndarray          # n_A × d_proj
    w_o: np.ndarray | None
    output: np.ndarray          # n_A × d_model (with W_O) or n_A × d_proj
    ablated_heads: frozenset[int] = frozenset()  # none here; read by norm-based attention as in a Trace

    @property
    def shape(self) -> tuple[int, int]:
        """(n_A, n_B): target words × source words."""
        return len(self.target_tokens), len(self.source_tokens)

    def matrix(self, name: str, head: int = 0) -> np.ndarray:
        if name not in HEAD_MATRICES:
            raise ValueError(f"unknown matrix {name!r}; choose one of {', '.join(HEAD_MATRICES)}")
        return getattr(self.heads[head], name)

    def row_labels(self, name: str) -> list[str]:
        """Source words for k and v, target words for every other matrix."""
        return list(self.source_labels if name in _SOURCE_ROWS else self.target_labels)

    def column_labels(self, name: str, head: int = 0) -> list[str]:
        """Source words for the n_A × n_B matrices, else the head's dimensions."""
        if name in _WORD_COLUMNS:
            return list(self.source_labels)
        prefix = "out" if name == "output" else name
        start = self.heads[head].columns.start
        return [f"{prefix}{start + j + 1}" for j in range(self.heads[head].d_k)]


def cross_attention(model: ToyModel, target_sentence: str, source_sentence: str,
                    options: Options | None = None) -> CrossTrace:
    """Queries from `target_sentence`, keys and values from `source_sentence`, on `model`.

    Raises SentenceError when either sentence has no known word, OptionsError for a bad head count.
    """
    options = (model.default_options if options is None else options).with_changes(causal=False)
    # Each sentence is read (tokens, unknown words, embedding + positional encoding) exactly as
    # self-attention reads it, and the attention is self-attention's, with keys and values from B.
    target = embed_sentence(model, target_sentence, options)
    source = embed_sentence(model, source_sentence, options)
    heads, concat, output = multi_head_attention(target.x, model.w_q, model.w_k, model.w_v, model.w_o, options,
                                                 x_kv=source.x)
    return with_norm_attention(CrossTrace(
        model_name=model.name, target_sentence=target_sentence, source_sentence=source_sentence,
        target_tokens=list(target.tokens), source_tokens=list(source.tokens),
        target_labels=token_labels(target.tokens), source_labels=token_labels(source.tokens),
        target_unknown=list(target.unknown), source_unknown=list(source.unknown),
        features=list(model.features), options=options, x_target=target.x, x_source=source.x,
        heads=tuple(heads), concat=concat, w_o=None if model.w_o is None else model.w_o.copy(), output=output,
    ))
