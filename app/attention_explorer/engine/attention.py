"""Scaled dot-product and multi-head attention, returning every intermediate as a Trace.

The maths is the paper's: Attention(Q, K, V) = softmax(QKᵀ / √d_k) · V, with h heads that each use
an even slice of the projection columns (as torch.nn.MultiheadAttention does), concatenated and
multiplied by W_O when the model has one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .census.norm_attention import with_norm_attention
from .errors import OptionsError, SentenceError
from .limits import MAX_SENTENCE_CHARS, MAX_SENTENCE_WORDS
from .model import ToyModel
from .options import Options
from .positional import sinusoidal_encoding
from .softmax import apply_mask, causal_mask, softmax
from .threads import largest_product, one_blas_thread_for
from .tokenizer import token_labels, tokenize
from .trace import HeadTrace, Trace


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, scale: bool = True,
                                 mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """softmax(QKᵀ/√d_k)·V with its intermediates: scores, scaled, masked, weights, output."""
    scores = q @ k.T                                           # (n_q, n_k)
    scaled = scores / math.sqrt(q.shape[1]) if scale else scores.copy()
    masked = apply_mask(scaled, mask)
    weights = softmax(masked)
    return {"scores": scores, "scaled": scaled, "masked": masked, "weights": weights, "output": weights @ v}


def head_columns(d_proj: int, heads: int) -> list[slice]:
    """Column slices of the projections per head; `heads` must divide d_proj."""
    if heads < 1 or d_proj % heads:
        allowed = ", ".join(str(h) for h in range(1, d_proj + 1) if d_proj % h == 0)
        raise OptionsError(f"{heads} heads do not split d_proj = {d_proj} evenly; choose one of {allowed}")
    d_k = d_proj // heads
    return [slice(i * d_k, (i + 1) * d_k) for i in range(heads)]


def multi_head_attention(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
                         w_o: np.ndarray | None, options: Options,
                         x_kv: np.ndarray | None = None) -> tuple[list[HeadTrace], np.ndarray, np.ndarray]:
    """Run every head with queries from `x` (n × d_model) and keys and values from `x_kv`
    (m × d_model; `x` itself for self-attention, another sentence for cross-attention).
    Return the head traces, the concatenation (n × d_proj) and the output.

    The causal mask exists only for self-attention: between two sentences there is no "later".
    """
    if x_kv is not None and options.causal:
        raise OptionsError("the causal mask hides the later words of the same sentence; "
                           "switch it off for cross-attention")
    x_kv = x if x_kv is None else x_kv
    mask = causal_mask(x.shape[0]) if options.causal else None
    q_all, k_all, v_all = x @ w_q, x_kv @ w_k, x_kv @ w_v      # (n, d_proj), (m, d_proj), (m, d_proj)
    heads = []
    for i, cols in enumerate(head_columns(w_q.shape[1], options.heads)):
        parts = scaled_dot_product_attention(q_all[:, cols], k_all[:, cols], v_all[:, cols],
                                             scale=options.scale, mask=mask)
        heads.append(HeadTrace(i, cols, w_q[:, cols], w_k[:, cols], w_v[:, cols],
                               q_all[:, cols], k_all[:, cols], v_all[:, cols], **parts))
    concat = np.concatenate([h.output for h in heads], axis=1)  # (n, d_proj)
    output = concat @ w_o if w_o is not None else concat.copy()
    return heads, concat, output


@dataclass(frozen=True)
class EmbeddedSentence:
    """A sentence read by a model: its known words and their input rows X, before any attention."""

    tokens: list[str]       # the known words, in order
    unknown: list[str]      # typed words the model does not know
    embedding: np.ndarray   # n × d_model
    positional: np.ndarray | None
    x: np.ndarray           # embedding (+ positional encoding)


def embed_sentence(model: ToyModel, sentence: str, options: Options) -> EmbeddedSentence:
    """Tokenise `sentence` with `model`'s vocabulary and build X from its known words.

    Raises SentenceError when there is nothing to compute or the sentence is longer than
    MAX_SENTENCE_WORDS words (or MAX_SENTENCE_CHARS characters).
    """
    if len(sentence) > MAX_SENTENCE_CHARS:  # checked first: splitting a megabyte into words takes a second
        raise SentenceError(f"this sentence has {len(sentence):,} characters; toy models take at most "
                            f"{MAX_SENTENCE_CHARS:,}: shorten it")
    words = tokenize(sentence, model.vocabulary)
    tokens = words.tokens
    if len(words.words) > MAX_SENTENCE_WORDS:
        raise SentenceError(f"this sentence has {len(words.words):,} words; toy models take at most "
                            f"{MAX_SENTENCE_WORDS:,}: shorten it")
    if not words.words:
        raise SentenceError("the sentence is empty: type a few words, e.g. " + repr(model.default_sentence))
    if not tokens:
        raise SentenceError(f"the model {model.name!r} knows none of these words: "
                            + ", ".join(words.unknown))
    embedding = model.embed(tokens)
    positional = sinusoidal_encoding(len(tokens), model.d_model) if options.positional else None
    x = embedding + positional if positional is not None else embedding.copy()
    return EmbeddedSentence(tokens, words.unknown, embedding, positional, x)


def run(model: ToyModel, sentence: str, options: Options | None = None) -> Trace:
    """Tokenise `sentence` with `model`'s vocabulary and compute attention over its known words.

    Raises SentenceError when there is nothing to compute or the sentence is too long (see
    embed_sentence), OptionsError when the options do not fit.
    """
    options = model.default_options if options is None else options
    read = embed_sentence(model, sentence, options)
    one_blas_thread_for(largest_product(len(read.tokens), model.d_model, model.d_proj))
    heads, concat, output = multi_head_attention(read.x, model.w_q, model.w_k, model.w_v, model.w_o, options)
    return with_norm_attention(Trace(
        model_name=model.name, sentence=sentence, tokens=read.tokens, labels=token_labels(read.tokens),
        unknown=read.unknown, features=list(model.features), options=options, embedding=read.embedding,
        positional=read.positional, x=read.x, mask=causal_mask(len(read.tokens)) if options.causal else None,
        heads=tuple(heads), concat=concat, w_o=None if model.w_o is None else model.w_o.copy(),
        output=output,
    ))
