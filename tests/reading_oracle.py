"""The readings worked out with plain loops from an attention matrix and its tidy labels, not through the
readings' code: a word's row is the mean over its pieces of the sum over the looked-at word's pieces; a
hidden token's row and column go and each row left is divided by what it kept; rollout multiplies
(mean of the heads + I, rows normalised) through the layers."""

import numpy as np

from attention_explorer.engine.tokenizer import token_labels

SPECIALS = ("<s>", "</s>")


def words_of(labels: list[str]) -> list[list[int]]:
    """Words from the tidy labels alone: a piece marked "·" continues the word before it."""
    words: list[list[int]] = []
    for i, label in enumerate(labels):
        if label.startswith("·") and words:
            words[-1].append(i)
        else:
            words.append([i])
    return words


def merged_labels(labels: list[str], words: list[list[int]]) -> list[str]:
    return token_labels(["".join(labels[i].removeprefix("·") for i in word) for word in words])


def merged(weights: np.ndarray, rows: list[list[int]], cols: list[list[int]]) -> np.ndarray:
    out = np.zeros((len(rows), len(cols)))
    for a, looking in enumerate(rows):
        for b, looked_at in enumerate(cols):
            out[a, b] = sum(float(weights[i, j]) for i in looking for j in looked_at) / len(looking)
    return out


def hidden(weights: np.ndarray, keep_rows: list[int], keep_cols: list[int]) -> np.ndarray:
    out = np.zeros((len(keep_rows), len(keep_cols)))
    for a, i in enumerate(keep_rows):
        total = sum(float(weights[i, j]) for j in keep_cols)
        for b, j in enumerate(keep_cols):
            out[a, b] = float(weights[i, j]) / total
    return out


def rollout(attention: np.ndarray, layer: int) -> np.ndarray:
    n = attention.shape[-1]
    rolled = np.eye(n)
    for lay in range(layer + 1):
        mixed = attention[lay].astype(np.float64).mean(axis=0) + np.eye(n)
        for i in range(n):
            mixed[i] /= mixed[i].sum()
        rolled = mixed @ rolled
    return rolled


def not_special(labels: list[str]) -> list[int]:
    return [i for i, label in enumerate(labels) if label not in SPECIALS]
