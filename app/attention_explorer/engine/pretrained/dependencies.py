"""The optional packages real models need, imported only when a real model is opened.

The app runs without them; choosing a real model then says exactly what to install. The standalone
app bundles them (packaging/attention-explorer.spec), so there a missing one is a broken build, and
pip is no advice for someone who has no Python.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import ModelError
from .model_folders import running_frozen

INSTALL_REAL = "pip install 'attention-explorer[real]'"


def require(module: str, needed_for: str) -> ModuleType:
    """Import `module`, or raise ModelError naming the package and what to do about it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        package = module.split(".")[0]
        if running_frozen():
            raise ModelError(f"{needed_for} needs the '{package}' package, which this standalone build left out "
                             f"({error}); the build is incomplete: packaging/build.py makes one that has it"
                             ) from error
        raise ModelError(f"{needed_for} needs the '{package}' package, which is not installed "
                         f"({error}); install it with: {INSTALL_REAL}") from error
