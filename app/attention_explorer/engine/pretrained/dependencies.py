"""The optional packages real models need, imported only when a real model is opened.

The app runs without them; choosing a real model then says exactly what to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import ModelError

INSTALL_REAL = "pip install 'attention-explorer[real]'"


def require(module: str, needed_for: str) -> ModuleType:
    """Import `module`, or raise ModelError naming the package and the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        package = module.split(".")[0]
        raise ModelError(f"{needed_for} needs the '{package}' package, which is not installed "
                         f"({error}); install it with: {INSTALL_REAL}") from error
