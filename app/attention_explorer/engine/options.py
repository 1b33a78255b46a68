"""The switches a user can flip on the attention computation."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Options:
    """Scale by √d_k, causal mask, sinusoidal positional encoding, and the number of heads."""

    scale: bool = True
    causal: bool = False
    positional: bool = False
    heads: int = 1

    def with_changes(self, **changes) -> Options:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)
