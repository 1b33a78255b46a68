"""The texts a census reads: a user's text file split into texts, streamed one at a time.

A file holds one text per line, or paragraphs separated by blank lines (the lines of a paragraph are
joined with spaces). "auto" takes paragraphs when blank lines separate blocks and some block has more
than one line, else lines.
The file is read through the engine's checked reader (a FIFO, a device, a folder, a file over 16 MB
or bytes that are not UTF-8 give one message naming the file), then split lazily: only one text at a
time exists besides the file's own text, so memory does not grow with the number of texts.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import EngineError
from ..safe_read import read_user_text

SPLITS = ("auto", "lines", "paragraphs")


@dataclass(frozen=True)
class CensusText:
    """One text of a census and what it is."""

    text: str
    kind: str = "user"    # "sentence" (the battery's own), "repeat" (a random sequence written twice), "user"
    period: int = 0       # a repeat: the length of one copy, in tokens


@dataclass(frozen=True)
class TextSource:
    """Where a census's texts come from; `texts()` gives a fresh iterator each time it is called."""

    label: str            # what the window and the CLI say ("built-in battery, seed 0", "essays.txt, lines")
    count: int
    digest: str           # sha256 of what defines the texts, for the cache's key
    texts: Callable[[], Iterator[CensusText]]


def _lines(content: str) -> Iterator[str]:
    for line in io.StringIO(content):
        if line.strip():
            yield line.strip()


def _paragraphs(content: str) -> Iterator[str]:
    block: list[str] = []
    for line in io.StringIO(content):
        if line.strip():
            block.append(line.strip())
        elif block:
            yield " ".join(block)
            block = []
    if block:
        yield " ".join(block)


def _looks_like_paragraphs(content: str) -> bool:
    """Blank lines between blocks of text, and some block of more than one line. (A file without
    blank lines is one text per line, however many lines it has.)"""
    blocks, multiline, previous_filled = 0, False, False
    for line in io.StringIO(content):
        filled = bool(line.strip())
        if filled and not previous_filled:
            blocks += 1
        multiline |= filled and previous_filled
        previous_filled = filled
    return blocks > 1 and multiline


def split_texts(content: str, split: str = "auto") -> tuple[str, Callable[[], Iterator[str]]]:
    """How `content` is split ("lines" or "paragraphs") and a function giving its texts one by one."""
    if split not in SPLITS:
        raise EngineError(f"texts are split by {', '.join(SPLITS)}, not {split!r}")
    if split == "auto":
        split = "paragraphs" if _looks_like_paragraphs(content) else "lines"
    splitter = _paragraphs if split == "paragraphs" else _lines
    return split, lambda: splitter(content)


def read_texts_file(path: str | Path, split: str = "auto") -> TextSource:
    """The texts of a user's file, checked and counted; an unusable file raises EngineError naming it."""
    path = Path(path)
    content = read_user_text(path, "text file")
    how, texts = split_texts(content, split)
    count = sum(1 for _ in texts())
    if count == 0:
        raise EngineError(f"{path.name}: there is no text in it; write one text per line, or paragraphs "
                          f"separated by a blank line")
    digest = hashlib.sha256(f"{how}\n{content}".encode()).hexdigest()

    def census_texts() -> Iterator[CensusText]:
        return (CensusText(text) for text in texts())

    plural = "s" if count != 1 else ""
    return TextSource(f"{path.name}: {count:,} text{plural}, one per {how[:-1]}", count, digest, census_texts)
