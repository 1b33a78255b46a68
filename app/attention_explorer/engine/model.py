"""Toy models: their data type, the JSON file format, and a loader that names the first problem.

File format (JSON object)::

    {
      "format": "attention-explorer-model", "version": 1,
      "name": "cats-chase-mice", "description": "...",
      "features": ["animal", "action", "small"],          # d_model names
      "vocabulary": {"cats": [1, 0, 0], ...},              # word -> embedding of length d_model
      "w_q": [[...]], "w_k": [[...]], "w_v": [[...]],      # d_model x d_proj each
      "w_o": [[...]] or null,                              # d_proj x d_model, or absent
      "defaults": {"sentence": "...", "heads": 1, "scale": true, "causal": false, "positional": false}
    }

Extra keys (for example "seed" and "notes") are kept and written back unchanged.
Every number must be finite and within ±VALUE_LIMIT, whether it comes from a file or the editor;
the file is standard JSON (no NaN or Infinity, anywhere), with no key twice in one object, and a
model stays within the sizes of engine.limits (features, projection columns, words).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .atomic_write import write_text_atomically
from .errors import ModelError
from .limits import MAX_FEATURES, MAX_PROJECTION_COLUMNS, MAX_SENTENCE_CHARS, MAX_WORDS
from .options import Options
from .safe_read import json_place, parse_json, read_user_text
from .tokenizer import is_word

FORMAT_NAME = "attention-explorer-model"
FORMAT_VERSION = 1
# No toy model needs a number near a million, and with |x| <= 1e6 the largest product in a trace
# (x·W_Q·W_K·x, or x·W_V·W_O) stays hundreds of orders of magnitude below float64 overflow,
# so no typed value can turn the heatmap into inf or NaN.
VALUE_LIMIT = 1e6
_PLAIN_NUMBERS = {int, float}  # exactly these types: bool is a subclass of int but not a number here
_KNOWN_KEYS = {"format", "version", "name", "description", "features", "vocabulary", "w_q", "w_k", "w_v",
               "w_o", "defaults"}


@dataclass
class ToyModel:
    """A self-attention layer small enough to read: named features, a vocabulary and its weights."""

    name: str
    features: list[str]
    vocabulary: dict[str, np.ndarray]
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray | None
    default_sentence: str
    default_options: Options
    description: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def d_model(self) -> int:
        return len(self.features)

    @property
    def d_proj(self) -> int:
        return self.w_q.shape[1]

    def allowed_heads(self) -> list[int]:
        """Head counts that split d_proj evenly."""
        return [h for h in range(1, self.d_proj + 1) if self.d_proj % h == 0]

    def embed(self, tokens: list[str]) -> np.ndarray:
        """The embedding rows of `tokens` (all must be known), shape n × d_model."""
        if not tokens:
            return np.zeros((0, self.d_model))
        return np.stack([self.vocabulary[t] for t in tokens])

    def copy(self) -> ToyModel:
        return model_from_dict(model_to_dict(self))


def model_from_dict(data: object) -> ToyModel:
    """Validate `data` (parsed JSON) and build a model; raise ModelError naming the first bad field."""
    if not isinstance(data, dict):
        raise ModelError(f"the file must hold a JSON object (a model), not {_shown(data)}")
    fmt = data.get("format", FORMAT_NAME)
    if fmt != FORMAT_NAME:
        raise ModelError(f"format: expected {FORMAT_NAME!r}, found {_shown(fmt)}")
    version = data.get("version", FORMAT_VERSION)
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise ModelError(f"version: {_shown(version)} is not a version this app reads; it reads version "
                         f"{FORMAT_VERSION} (a newer app may have written this file)")
    for key in ("name", "features", "vocabulary", "w_q", "w_k", "w_v"):
        if key not in data:
            raise ModelError(f"{key}: missing (a model needs name, features, vocabulary, w_q, w_k and w_v)")
    name = data["name"]
    if not isinstance(name, str) or not name.strip():
        raise ModelError("name: must be a non-empty text")
    features = check_features(data["features"])
    d_model = len(features)
    vocabulary = _vocabulary(data["vocabulary"], d_model)
    w_q = _matrix("w_q", data["w_q"], rows=d_model)
    d_proj = w_q.shape[1]
    w_k = _matrix("w_k", data["w_k"], rows=d_model, cols=d_proj)
    w_v = _matrix("w_v", data["w_v"], rows=d_model, cols=d_proj)
    w_o = data.get("w_o")
    if w_o is not None:
        w_o = _matrix("w_o", w_o, rows=d_proj, cols=d_model, row_unit="projection column", col_unit="feature")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ModelError(f"description: must be a text, not {_shown(description)}")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ModelError("defaults: must be an object")
    sentence = defaults.get("sentence", " ".join(list(vocabulary)[:3]))
    if not isinstance(sentence, str):
        raise ModelError(f"defaults.sentence: must be a text, not {_shown(sentence)}")
    if len(sentence) > MAX_SENTENCE_CHARS:
        raise ModelError(f"defaults.sentence: {len(sentence):,} characters; a sentence may have at most "
                         f"{MAX_SENTENCE_CHARS:,}")
    options = _options(defaults, d_proj)
    extra = {k: v for k, v in data.items() if k not in _KNOWN_KEYS}
    _check_finite(extra, "")
    return ToyModel(name.strip(), features, vocabulary, w_q, w_k, w_v, w_o, sentence, options, description, extra)


def model_to_dict(model: ToyModel) -> dict:
    """The JSON-ready form of `model`; floats are written exactly (repr round-trips float64)."""
    opts = model.default_options
    data = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "name": model.name,
        "description": model.description,
        "features": list(model.features),
        "vocabulary": {word: _plain(row) for word, row in model.vocabulary.items()},
        "w_q": _plain(model.w_q),
        "w_k": _plain(model.w_k),
        "w_v": _plain(model.w_v),
        "w_o": None if model.w_o is None else _plain(model.w_o),
        "defaults": {"sentence": model.default_sentence, **opts.to_dict()},
    }
    data.update(model.extra)
    return data


def load_model(path: str | os.PathLike) -> ToyModel:
    """Read and validate a model file. Any problem raises ModelError with a one-line reason.

    The file is read through engine.safe_read: only a regular file of bounded size and nesting.
    """
    path = Path(path)
    data = parse_json(read_user_text(path, "model file", error=ModelError), path.name, "model file",
                      error=ModelError)
    try:
        return model_from_dict(data)
    except ModelError as exc:
        raise ModelError(f"{path.name}: {exc}") from None


def model_to_json(model: ToyModel) -> str:
    """The text of a model file: standard JSON only, so any JSON reader can read it back."""
    try:
        return json.dumps(model_to_dict(model), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:  # only an extra key set by code can still hold NaN or Infinity
        _check_finite(model.extra, "")
        raise


def save_model(model: ToyModel, path: str | os.PathLike) -> None:
    """Write `model` atomically: a crash or a full disk never leaves a half-written file behind."""
    write_text_atomically(Path(path), model_to_json(model))


def check_number(where: str, x: object) -> float:
    """One number of a model: a real number (not a bool), finite, and within ±VALUE_LIMIT."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ModelError(f"{where}: {_shown(x)} is not a number")
    if isinstance(x, float) and not math.isfinite(x):
        raise ModelError(f"{where}: {x} is not a finite number")
    if abs(x) > VALUE_LIMIT:  # checked before float(), which overflows on a huge JSON integer
        shown = f"{x:g}" if isinstance(x, float) else "a number of that size"
        raise ModelError(f"{where}: {shown} is too large; values must lie between "
                         f"-{VALUE_LIMIT:,.0f} and {VALUE_LIMIT:,.0f}")
    return float(x)


def _shown(value: object) -> str:
    """A JSON value as a message names it, in JSON's words: null, true, "a list", 'x'."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value)


def _check_finite(value: object, place: str) -> None:
    """Refuse NaN and Infinity anywhere in `value` (extra keys too): a file must stay standard JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ModelError(f"{place}: {value} is not a finite number; standard JSON has no NaN or Infinity")
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        _check_finite(child, json_place(place, key))


def check_features(value: object) -> list[str]:
    """The feature names, stripped; each non-empty and none twice (also checks a renamed feature)."""
    if not isinstance(value, list) or not value:
        raise ModelError("features: must be a non-empty list of names")
    if len(value) > MAX_FEATURES:
        raise ModelError(f"features: {len(value):,} features; a model may have at most {MAX_FEATURES}")
    names = []
    for i, name in enumerate(value):
        if not isinstance(name, str) or not name.strip():
            raise ModelError(f"features[{i}]: must be a non-empty text")
        names.append(name.strip())
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ModelError(f"features: the name {dup!r} appears twice")
    return names


def _vocabulary(value: object, d_model: int) -> dict[str, np.ndarray]:
    if not isinstance(value, dict) or not value:
        raise ModelError("vocabulary: must be a non-empty object of word → embedding")
    if len(value) > MAX_WORDS:
        raise ModelError(f"vocabulary: {len(value):,} words; a model may have at most {MAX_WORDS:,}")
    vocabulary = {}
    for word, row in value.items():
        if not is_word(word):
            raise ModelError(f"vocabulary[{word!r}]: can never be typed as one word; a word is lower-case "
                             "letters and digits (an apostrophe may join two parts, as in it's)")
        vocabulary[word] = _vector(f"vocabulary[{word!r}]", row, d_model, "feature")
    return vocabulary


def _vector(where: str, row: object, length: int, unit: str) -> np.ndarray:
    """A row of `length` numbers, one per `unit` (feature, projection column)."""
    if not isinstance(row, list):
        raise ModelError(f"{where}: must be a list of {length} numbers, not {_shown(row)}")
    if len(row) != length:
        raise ModelError(f"{where}: expected {length} numbers (one per {unit}), found {len(row)}")
    if set(map(type, row)) <= _PLAIN_NUMBERS:  # the usual case, checked as a whole (a large file loads fast)
        with contextlib.suppress(OverflowError):  # an integer too large for a float: named below
            values = np.array(row, dtype=np.float64)
            if np.all(np.abs(values) <= VALUE_LIMIT):  # False for NaN too
                return values
    return np.array([check_number(f"{where}[{j}]", x) for j, x in enumerate(row)], dtype=np.float64)


def _matrix(where: str, value: object, rows: int, cols: int | None = None, *,
            row_unit: str = "feature", col_unit: str = "projection column") -> np.ndarray:
    """A rows × cols matrix; with `cols` None, the first row sets it (at most MAX_PROJECTION_COLUMNS)."""
    if not isinstance(value, list) or not value:
        raise ModelError(f"{where}: must be a list of rows, not {_shown(value)}")
    if len(value) != rows:
        raise ModelError(f"{where}: expected {rows} rows (one per {row_unit}), found {len(value)}")
    if cols is None:
        first = value[0]
        if not isinstance(first, list) or not first:
            raise ModelError(f"{where}[0]: must be a non-empty list of numbers")
        cols = len(first)
        if cols > MAX_PROJECTION_COLUMNS:
            raise ModelError(f"{where}: {cols:,} projection columns; a model may have at most "
                             f"{MAX_PROJECTION_COLUMNS}")
    return np.stack([_vector(f"{where}[{i}]", row, cols, col_unit) for i, row in enumerate(value)])


def _options(defaults: dict, d_proj: int) -> Options:
    values = {}
    for key in ("scale", "causal", "positional"):
        if key in defaults:
            if not isinstance(defaults[key], bool):
                raise ModelError(f"defaults.{key}: must be true or false")
            values[key] = defaults[key]
    heads = defaults.get("heads", 1)
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1 or d_proj % heads:
        allowed = [h for h in range(1, d_proj + 1) if d_proj % h == 0]
        raise ModelError(f"defaults.heads: must divide d_proj = {d_proj} (one of {allowed})")
    values["heads"] = heads
    return Options(**values)


def _plain(array: np.ndarray) -> list:
    return np.asarray(array, dtype=np.float64).tolist()
