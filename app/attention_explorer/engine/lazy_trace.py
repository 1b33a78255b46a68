"""Traces whose large matrices are made when something first reads them, then kept.

A real model's layer has an n × n matrix of scores, scaled scores, masked scores and weights per
head: at 8,192 tokens 268 MB each, and 9.6 GB for one layer of SmolLM2. The views read one head's
weights and, at most, the matrices of the step shown, so each is made on first use. A lazy trace is
a Trace (and a lazy head a HeadTrace) to every reader; only `dataclasses.replace`, equality and
repr, which read every field, are not used on them (`LazyTrace.replaced` stands in for replace).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .trace import HeadTrace, Trace


class Made:
    """A field made by `obj._makers[name](obj)` on first use and kept in the instance, which from then
    on is read directly (a non-data descriptor gives way to the instance's own attribute)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj._makers[self.name](obj)
        object.__setattr__(obj, self.name, value)
        return value


def is_made(obj, name: str) -> bool:
    """Whether a lazy field has been made (or was given) already."""
    return name in vars(obj)


def made_fields(obj) -> tuple[str, ...]:
    """The lazy fields of `obj` made so far: what its readers asked for (none of a plain trace or head)."""
    makers = getattr(obj, "_makers", {})
    return tuple(name for name in vars(obj) if name in makers)


def let_go(obj, names: Sequence[str]) -> None:
    """Forget these fields where they were made (each is made again when next read): a long text's n × n
    matrices that no view shows any longer. Fields given, not made, are kept."""
    made = vars(obj)
    for name in names:
        if name in getattr(obj, "_makers", {}):
            made.pop(name, None)


def made_items(items: Sequence) -> list:
    """The items of a LazyTuple made so far (all of any other sequence): reaching the others would make them."""
    return list(items._items.values()) if isinstance(items, LazyTuple) else list(items)


def _fill(obj, makers: dict[str, Callable], fields: dict) -> None:
    object.__setattr__(obj, "_makers", makers)
    for name, value in fields.items():
        object.__setattr__(obj, name, value)


class LazyHeadTrace(HeadTrace):
    """A HeadTrace whose n × n matrices (norm-based attention among them), moved norms and output are
    made on first use by `makers[name](head)`; so are its rows of queries, keys and values where it has
    a maker for them (a reading's, averaged over a word's pieces: the views never read them)."""

    q = Made()
    k = Made()
    v = Made()
    q_before_rope = Made()
    k_before_rope = Made()
    scores = Made()
    scaled = Made()
    masked = Made()
    weights = Made()
    norm = Made()
    moved_norm = Made()
    output = Made()

    def __init__(self, makers: dict[str, Callable], **fields):  # noqa: D107 - fields as HeadTrace's
        _fill(self, makers, fields)

    def __repr__(self) -> str:
        return f"LazyHeadTrace(index={self.index})"


class LazyTrace(Trace):
    """A Trace whose mask, concatenation and output are made on first use; its heads may be lazy too."""

    mask = Made()
    concat = Made()
    output = Made()

    def __init__(self, makers: dict[str, Callable], **fields):  # noqa: D107 - fields as Trace's
        _fill(self, makers, fields)

    def replaced(self, **changes) -> LazyTrace:
        """A copy with `changes`, sharing what was made and what is still to make."""
        fields = {name: value for name, value in vars(self).items() if name != "_makers"}
        return LazyTrace(self._makers, **{**fields, **changes})

    def __repr__(self) -> str:
        return f"LazyTrace(layer={self.layer}, n={self.n})"


class LazyTuple(Sequence):
    """A tuple whose items are made by `make(i)` when first read, then kept."""

    def __init__(self, make: Callable[[int], object], length: int):
        self._make, self._length, self._items = make, length, {}

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._length)))
        if not -self._length <= index < self._length:
            raise IndexError(index)
        index %= self._length
        if index not in self._items:
            self._items[index] = self._make(index)
        return self._items[index]
