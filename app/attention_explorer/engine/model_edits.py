"""Single, validated edits of a toy model in place: one number, one new word, one feature name.

The model editor's undo commands are made of these. Each edit checks everything before it touches
the model, so a refused edit leaves no trace, and an edit followed by its inverse gives back the
model bit for bit. Arrays are replaced, never written into: a trace computed before an edit keeps
the numbers it was computed from (its per-head weights are views into the model's matrices).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ModelError
from .limits import MAX_WORDS
from .model import VALUE_LIMIT, ToyModel, check_features, check_number
from .tokenizer import is_word

FIELDS = ("embeddings", "w_q", "w_k", "w_v", "w_o")
FIELD_TITLES = {"embeddings": "Embeddings", "w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O"}
_RANGE_HINT = f"type a number between -{VALUE_LIMIT:,.0f} and {VALUE_LIMIT:,.0f}"


def parse_number(value: str | float, where: str = "value") -> float:
    """What a user typed (or a number), as a model number; ModelError says why it is refused."""
    if not isinstance(value, str):
        return check_number(where, value)
    typed = value.strip()
    if not typed:
        raise ModelError(f"{where}: nothing typed; {_RANGE_HINT}")
    try:
        number = float(typed.replace("−", "-"))  # accept the minus sign the lessons print
    except ValueError:
        raise ModelError(f"{where}: {typed!r} is not a number; {_RANGE_HINT}") from None
    if not math.isfinite(number):  # name what was typed: "1e999" parses to inf
        raise ModelError(f"{where}: {typed!r} is not a finite number; {_RANGE_HINT}")
    return check_number(where, number)


def values(model: ToyModel, field: str) -> np.ndarray:
    """The matrix a field shows: embeddings are one row per word, in vocabulary order."""
    if field == "embeddings":
        return np.stack(list(model.vocabulary.values()))
    if field not in FIELDS:
        raise ModelError(f"{field!r} is not editable; choose one of {', '.join(FIELDS)}")
    matrix = getattr(model, field)
    if matrix is None:
        raise ModelError(f"{model.name} has no W_O: the heads' outputs are only concatenated")
    return matrix


def cell_name(model: ToyModel, field: str, row: int, col: int) -> str:
    """How a message names one cell, in the words the editor shows."""
    if field == "embeddings":
        return f"{list(model.vocabulary)[row]!r}, feature {model.features[col]!r}"
    if field == "w_o":
        return f"W_O row {row + 1}, feature {model.features[col]!r}"
    return f"{FIELD_TITLES[field]} feature {model.features[row]!r}, column {col + 1}"


def check_value(model: ToyModel, field: str, row: int, col: int, value: str | float) -> float:
    """The number `value` would put in that cell; raises ModelError and changes nothing if refused."""
    rows, cols = values(model, field).shape
    if not (0 <= row < rows and 0 <= col < cols):
        raise ModelError(f"{FIELD_TITLES[field]} has no cell ({row + 1}, {col + 1}); it is {rows} × {cols}")
    return parse_number(value, cell_name(model, field, row, col))


def set_value(model: ToyModel, field: str, row: int, col: int, value: str | float) -> float:
    """Put one number in the model; returns the number it replaced, for undo."""
    new = check_value(model, field, row, col, value)
    if field == "embeddings":
        word = list(model.vocabulary)[row]
        old_row = model.vocabulary[word]
        updated = old_row.copy()
        updated[col] = new
        model.vocabulary[word] = updated  # same key: the vocabulary keeps its order
        return float(old_row[col])
    old_matrix = getattr(model, field)
    updated = old_matrix.copy()
    updated[row, col] = new
    setattr(model, field, updated)
    return float(old_matrix[row, col])


def check_new_word(model: ToyModel, word: str, row: list) -> tuple[str, np.ndarray]:
    """The word as the model will store it (case-folded) and its embedding; ModelError if refused."""
    typed = word.strip() if isinstance(word, str) else ""
    if not typed:
        raise ModelError("word: type the new word")
    name = typed.casefold()  # the tokenizer case-folds what is typed, so this is what it will look up
    if not is_word(name):
        raise ModelError(f"word: {typed!r} is not one word; use letters and digits "
                         "(an apostrophe may join two parts, as in it's)")
    if name in model.vocabulary:
        raise ModelError(f"word: {name!r} is already in the vocabulary")
    if len(model.vocabulary) >= MAX_WORDS:
        raise ModelError(f"word: the vocabulary is full; a model may have at most {MAX_WORDS:,} words")
    if len(row) != model.d_model:
        raise ModelError(f"{name!r}: expected {model.d_model} values (one per feature), found {len(row)}")
    embedding = [parse_number(x, f"{name!r}, feature {f!r}") for f, x in zip(model.features, row, strict=True)]
    return name, np.array(embedding, dtype=np.float64)


def add_word(model: ToyModel, word: str, row: list) -> str:
    """Add a word at the end of the vocabulary; returns it as stored."""
    name, embedding = check_new_word(model, word, row)
    model.vocabulary[name] = embedding
    return name


def remove_word(model: ToyModel, word: str) -> np.ndarray:
    """Take a word out (the inverse of add_word); returns its embedding."""
    if word not in model.vocabulary:
        raise ModelError(f"word: {word!r} is not in the vocabulary")
    if len(model.vocabulary) == 1:
        raise ModelError(f"word: {word!r} is the only word; a model needs at least one")
    return model.vocabulary.pop(word)


def check_feature_name(model: ToyModel, index: int, name: str) -> str:
    """The name feature `index` would get (stripped); ModelError if empty or already used."""
    if not 0 <= index < model.d_model:
        raise ModelError(f"feature {index + 1}: there are only {model.d_model} features")
    old = model.features[index]
    if not isinstance(name, str) or not name.strip():
        raise ModelError(f"feature {old!r}: type its new name")
    renamed = list(model.features)
    renamed[index] = name
    try:
        return check_features(renamed)[index]
    except ModelError as exc:  # e.g. "features: the name 'verb' appears twice"
        raise ModelError(f"renaming {old!r}: {exc}") from None


def rename_feature(model: ToyModel, index: int, name: str) -> str:
    """Rename one feature; returns its old name, for undo."""
    new = check_feature_name(model, index, name)
    old = model.features[index]
    model.features = [*model.features[:index], new, *model.features[index + 1:]]
    return old
