"""A damaged copy as a case: what to write where, made only when the case runs.

The originals are read once. Nothing points at a real device: FIFOs, sockets and links are made
beside the copy, in the folder the test gives.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parents[1] / "engine" / "pretrained" / "data"
FOLDERS = ("tiny-bert", "tiny-gpt2", "tiny-llama")
GGUF_NAME = "tiny-llama.gguf"
FILES = ("config.json", "tokenizer.json", "model.safetensors")


@dataclass(frozen=True)
class Case:
    kind: str                              # what was damaged, e.g. "tiny-bert/config.json: hidden_size = -1"
    build: Callable[[Path], Path]          # makes the copy under a folder and returns what to open
    names: tuple[str, ...]                 # a refusal must name one of these files (or the model)


@functools.cache
def original(relative: str) -> bytes:
    return (DATA / relative).read_bytes()


# --- how a copy is made ----------------------------------------------------------------------------

Change = "bytes | None | Callable[[Path], None]"  # new content, the file removed, or something made at the path


def folder_case(kind: str, source: str, changes: dict[str, Change]) -> Case:
    """A copy of the folder `source` with `changes` (file name → what is there instead)."""
    def build(where: Path) -> Path:
        folder = where / source
        folder.mkdir(parents=True)
        for name in FILES:
            if name not in changes:
                (folder / name).write_bytes(original(f"{source}/{name}"))
        for name, change in changes.items():
            if callable(change):
                change(folder / name)
            elif change is not None:
                (folder / name).write_bytes(change)
        return folder
    return Case(f"{source}: {kind}", build, (*FILES, *changes, source))


def gguf_case(kind: str, content: Change) -> Case:
    def build(where: Path) -> Path:
        path = where / GGUF_NAME
        where.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        else:
            path.write_bytes(content)
        return path
    return Case(f"{GGUF_NAME}: {kind}", build, (GGUF_NAME,))


def fifo(path: Path) -> None:
    os.mkfifo(path)


def socket_file(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays: a path that is neither a file nor a folder


def link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name(path.name + ".pipe"))
    path.symlink_to(path.name + ".pipe")


def link_loop(path: Path) -> None:
    path.with_name(path.name + ".other").symlink_to(path.name)
    path.symlink_to(path.name + ".other")


def self_link(path: Path) -> None:
    path.symlink_to(path.name)


def dangling_link(path: Path) -> None:
    path.symlink_to(path.name + ".gone")


def folder_instead(path: Path) -> None:
    path.mkdir()


def link_to_copy(content: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.with_name(path.name + ".real").write_bytes(content)
        path.symlink_to(path.name + ".real")
    return make


def sparse(size: int, start: bytes = b"") -> Callable[[Path], None]:
    """A file of `size` bytes that costs no disk (a hole after `start`)."""
    def make(path: Path) -> None:
        with open(path, "wb") as handle:
            handle.write(start)
            handle.truncate(size)
    return make


NOT_FILES = {"a FIFO": fifo, "a link to a FIFO": link_to_fifo, "a loop of links": link_loop,
             "a link to itself": self_link, "a link to nothing": dangling_link, "a folder": folder_instead,
             "a socket": socket_file, "an empty file": lambda path: path.write_bytes(b"")}


