"""The SHA-256 of a model's files, which every exported figure carries so that the picture can be traced
to the exact weights it was drawn from (a model file edited or swapped since gives another hash).

A real model is tens to hundreds of megabytes, so a file is hashed once per process for its size and
modification time; only regular files are read. No Qt here.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .engine import catalog

FOLDER_FILES = ("config.json", "tokenizer.json")  # with every *.safetensors: what a Hugging Face folder is read from
CHUNK_BYTES = 1 << 20

_cache: dict[tuple[str, int, int], str] = {}


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """The hash of a regular file ("" for anything else: a device or pipe is never read)."""
    try:
        info = os.stat(path)
    except OSError:
        return ""
    if not stat.S_ISREG(info.st_mode):
        return ""
    key = (os.path.realpath(path), info.st_size, info.st_mtime_ns)
    if key not in _cache:
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                while chunk := handle.read(CHUNK_BYTES):
                    digest.update(chunk)
        except OSError:
            return ""
        _cache[key] = digest.hexdigest()
    return _cache[key]


def folder_sha256(folder: Path) -> str:
    """One hash over a Hugging Face folder's config, tokenizer and weights (names and contents)."""
    names = [name for name in FOLDER_FILES if (folder / name).is_file()]
    names += sorted(p.name for p in folder.glob("*.safetensors") if p.is_file())
    if not names:
        return ""
    digest = hashlib.sha256()
    for name in names:
        digest.update(f"{name}\0{file_sha256(folder / name)}\n".encode())
    return digest.hexdigest()


def source_sha256(source: str) -> str:
    """The hash of what `source` opens: a built-in toy model's file, a real model's list entry, a
    .gguf or .json file, or a model folder. "" when it cannot be found."""
    if source in catalog.BUILTIN_MODELS:
        return file_sha256(catalog.builtin_model_path(source))
    path = Path(source)
    if not path.exists():
        from .engine.pretrained.catalog import installed_models  # real models are looked up only here

        path = installed_models().get(source, path)
    if path.is_dir():
        return folder_sha256(path)
    return file_sha256(path)
