"""One field of a model's config.json or GGUF metadata, read with its type and range checked.

Every field a loader uses is read here, so a value of the wrong type ("384" where a number belongs,
true, a list) or out of range (0 heads, a negative or NaN epsilon) is one ModelError naming the file
and the field, never a TypeError deep in a loader or a NaN in the forward.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Iterable, Mapping

from ..errors import ModelError
from ..limits import MAX_NORM_EPS

_MISSING = object()
# No size of a model a laptop can hold comes near 2³¹ (a vocabulary, a width, a layer count, a context
# length); a larger number is damage, and refusing it here keeps later arithmetic in range.
MAX_COUNT = 2 ** 31 - 1


class Fields:
    """The fields of one file: `values` as read, named in messages as `"{file_name}: {kind} 'name'"`.

    `keys` names a field in messages as its file does when a loader asks for it by another name: a
    GGUF file's metadata is read by the families under config.json's names ('hidden_size'), and a
    message names the file's own key ('qwen2.embedding_length')."""

    def __init__(self, values: Mapping, file_name: str, kind: str = "field", keys: Mapping[str, str] | None = None):
        self.values = values
        self.file_name = file_name
        self.kind = kind  # "field" (config.json) or "metadata field" (GGUF)
        self.keys = keys or {}

    def name_of(self, *names: str) -> str:
        """The first of `names` that is set (families name the same size differently), else the first."""
        return next((name for name in names if self.values.get(name) is not None), names[0])

    def shown_name(self, *names: str) -> str:
        """The field as a message names it: the file's own key for the first of `names` that is set."""
        name = self.name_of(*names)
        return self.keys.get(name, name)

    def present(self, name: str) -> bool:
        """Whether the file has the field at all (config.json's null counts as present: it can mean "none")."""
        return name in self.values

    def raw(self, *names: str, default=_MISSING):
        name = self.name_of(*names)
        value = self.values.get(name)
        if value is None:
            if default is _MISSING:
                raise ModelError(f"{self.file_name}: {self.kind} {self.keys.get(name, name)!r} is missing")
            return default
        return value

    def count(self, *names: str, default=_MISSING, minimum: int = 1) -> int:
        """A whole number from `minimum` to MAX_COUNT (a JSON true is not 1, "12" is not 12)."""
        value = self.raw(*names, default=default)
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
            wanted = "a positive whole number" if minimum == 1 else f"a whole number of at least {minimum}"
            raise self.wrong(names, f"must be {wanted} (at most {MAX_COUNT:,})", value)
        return value

    def positive_number(self, *names: str, default=_MISSING) -> float | None:
        """A finite number above 0 (a rotary base, say); `default` when absent or null (None: an
        optional field)."""
        given = self.raw(*names, default=default)
        if given is None:
            return None
        value = _finite(given)
        if value is None or value <= 0:
            raise self.wrong(names, "must be a finite number above 0", given)
        return value

    def positive_numbers(self, name: str, count: int, what: str) -> tuple[float, ...]:
        """A list of `count` finite numbers above 0, one per `what`."""
        given = self.raw(name)
        values = [_finite(v) for v in given] if isinstance(given, list) else []
        if len(values) != count or any(v is None or v <= 0 for v in values):
            raise self.wrong((name,), f"must list {count} numbers above 0, one per {what}", given)
        return tuple(values)

    def epsilon(self, *names: str) -> float:
        """A normalisation's epsilon: a small positive number (see limits.MAX_NORM_EPS)."""
        value = _finite(self.raw(*names))
        if value is None or not 0 < value <= MAX_NORM_EPS:
            raise self.wrong(names, f"must be a small positive number (above 0, at most {MAX_NORM_EPS:g})",
                             self.raw(*names))
        return value

    def text(self, *names: str, default=_MISSING, choices: Iterable[str] | None = None) -> str:
        value = self.raw(*names, default=default)
        choices = None if choices is None else tuple(choices)
        if not isinstance(value, str) or (choices is not None and value not in choices):
            wanted = "a text" if choices is None else f"one of {', '.join(choices)}"
            raise self.wrong(names, f"must be {wanted}", value)
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw(name, default=default)
        if not isinstance(value, bool):
            raise self.wrong((name,), "must be true or false", value)
        return value

    def mapping(self, *names: str) -> Mapping:
        """An object of fields ({} when absent)."""
        value = self.raw(*names, default={})
        if not isinstance(value, Mapping):
            raise self.wrong(names, "must be an object of fields", value)
        return value

    def wrong(self, names: tuple[str, ...], must: str, value) -> ModelError:
        return ModelError(f"{self.file_name}: {self.kind} {self.shown_name(*names)!r} {must}, not {shown(value)}")


def _finite(value) -> float | None:
    """`value` as a finite float, or None for anything else (text, true, NaN, a 400-digit number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxdict = 4


def shown(value) -> str:
    """A value as a message quotes it, cut short: a field may hold a megabyte."""
    return _SHORT.repr(value)
