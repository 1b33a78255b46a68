"""The built-in toy models shipped in resources/models, and resolving a name or a file path."""

from __future__ import annotations

from pathlib import Path

from ..resources_path import resource_path
from .errors import ModelError
from .model import ToyModel, load_model

# Listed in teaching order; the first is the default model when the app starts.
BUILTIN_MODELS = ("cat-sat-on-mat", "cats-chase-mice", "it-was-tired", "cat-ate-fish")
DEFAULT_MODEL = BUILTIN_MODELS[0]


def builtin_model_names() -> list[str]:
    return list(BUILTIN_MODELS)


def builtin_model_path(name: str) -> Path:
    return resource_path("models", f"{name}.json")


def load_builtin(name: str) -> ToyModel:
    if name not in BUILTIN_MODELS:
        raise ModelError(f"no built-in model called {name!r}; the built-in models are {', '.join(BUILTIN_MODELS)}")
    return load_model(builtin_model_path(name))


def resolve_model(name_or_file: str) -> ToyModel:
    """A built-in model by name, or a model file by path (anything that ends in .json, exists, or is a
    link: one leading nowhere or round in a loop is read, to be refused for what it is)."""
    if name_or_file in BUILTIN_MODELS:
        return load_builtin(name_or_file)
    path = Path(name_or_file)
    if path.suffix.lower() == ".json" or path.exists() or path.is_symlink():
        return load_model(path)
    raise ModelError(unknown_model_text(name_or_file))


def unknown_model_text(name: str) -> str:
    """What to say of a name that is no model and no file: every model it could have meant."""
    from .pretrained import KNOWN_MODELS  # only to name them: a real model's name is said in full

    return (f"no built-in model or file called {name!r}; the built-in models are {', '.join(BUILTIN_MODELS)}, "
            f"the real ones {', '.join(m.name for m in KNOWN_MODELS)}")


def is_pretrained_source(name_or_path: str) -> bool:
    """A real model's list name, an HF folder or a .gguf file; built-in toy names and .json files are not.

    The one test the command line and the window use to choose which kind of model to open. The
    real-model code is imported only when the name is neither a toy model nor a path, so a toy
    model's start never loads it."""
    if name_or_path in BUILTIN_MODELS:
        return False
    path = Path(name_or_path)
    if path.suffix.lower() == ".gguf" or path.is_dir():
        return True
    if path.suffix.lower() == ".json" or path.exists():
        return False
    from .pretrained.catalog import known_model_named

    return known_model_named(name_or_path) is not None
