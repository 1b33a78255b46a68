"""Numbers worked out from a model's weight matrix once, not each time a layer is shown: kept beside
the matrix for as long as it lives, and dropped once it is gone (a closed model's layers)."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def per_weight(make: Callable[..., T]) -> Callable[..., T]:
    """`make(weight, *more)` remembered for each weight matrix (by identity, while it lives) and `more`."""
    kept: dict[tuple, tuple[weakref.ref, T]] = {}

    @functools.wraps(make)
    def remembered(weight, *more) -> T:
        key = (id(weight), *more)
        found = kept.get(key)
        if found is not None and found[0]() is weight:
            return found[1]
        value = make(weight, *more)
        for gone in [key for key, (ref, _) in kept.items() if ref() is None]:
            del kept[gone]
        kept[key] = (weakref.ref(weight), value)
        return value

    return remembered
