"""A package's names imported from their modules on first use (PEP 562), so that importing the
package costs only what the caller touches: the window starts without the lessons' maths or the
real-model readers, and still writes `from attention_explorer.engine import scaling_experiment`."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, namespace: dict, home: dict[str, str]) -> tuple[Callable, Callable]:
    """The module-level `__getattr__` and `__dir__` for `package`, whose names in `home` (name →
    submodule) load on first access and are then kept in `namespace` (the package's globals())."""

    def __getattr__(name: str):
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{home[name]}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *home])

    return __getattr__, __dir__
