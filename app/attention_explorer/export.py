"""The data half of exporting: matrices as CSV, the trace as JSON, and safe writing of any file.

No Qt here (a test checks it): the command line writes traces and tables without loading a GUI
library, and model files are saved through the same writers. Images of views are made by
`image_export`, which writes through this module too.

Files are written atomically (see engine.atomic_write): a failed export leaves no partial file and
never clobbers the old one. The writers stream: a trace of thousands of words goes to the file row
by row, never as one text in memory. The path "-" means standard output.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import sys
from collections.abc import Iterator
from typing import BinaryIO, TextIO

import numpy as np

from .engine.atomic_write import atomic_file, check_writable_target
from .engine.trace import HEAD_MATRICES, SQUARE_MATRICES, Trace

MATRIX_CHOICES = HEAD_MATRICES
IMAGE_SCALES = (1, 2, 4)
STDOUT = "-"

_SEPARATOR = ",\n"  # between the items of a JSON object or array, one per line
_HEAD_FIELDS = ("w_q", "w_k", "w_v", "q", "k", "v", "scores", "scaled", "masked", "weights", "output")


class ExportError(Exception):
    """An export could not be written; the message says why, for the user."""


class ExportCancelled(ExportError):
    """The user stopped a long export; nothing was written."""

    def __init__(self) -> None:
        super().__init__("the export was cancelled; nothing was written")


# --- where the bytes go ------------------------------------------------------------------------

def check_target(path: str | os.PathLike) -> None:
    """Refuse, before anything is rendered, a path that cannot be written (see atomic_write)."""
    if str(path) == STDOUT:
        return
    try:
        check_writable_target(path)
    except OSError as exc:
        raise ExportError(_os_reason(path, exc)) from None


@contextlib.contextmanager
def binary_output(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary stream into `path`, replaced atomically when the block ends; OS errors become ExportError."""
    try:
        with atomic_file(path) as handle:
            yield handle
    except OSError as exc:
        raise ExportError(_os_reason(path, exc)) from None


@contextlib.contextmanager
def text_output(path: str | os.PathLike) -> Iterator[TextIO]:
    """A UTF-8 text stream into `path` (standard output for "-")."""
    if str(path) == STDOUT:
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        with binary_output(path) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            try:
                yield text
            finally:
                with contextlib.suppress(ValueError, UnicodeEncodeError):
                    text.detach()  # flushes; leaves closing the file to atomic_file
    except UnicodeEncodeError:
        raise ExportError(f"cannot write {path}: the text holds characters that are not valid Unicode") from None


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write text atomically (or to standard output for "-"); any failure is one readable ExportError."""
    with text_output(path) as handle:
        handle.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with binary_output(path) as handle:
        handle.write(data)


def _os_reason(path: str | os.PathLike, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"cannot write {path}: {reason}"


# --- the trace as JSON -------------------------------------------------------------------------

def _trace_fields(trace: Trace) -> dict:
    """The JSON layout of a trace, its matrices still NumPy arrays (turned into rows as they are written)."""
    return {
        "model": trace.model_name,
        "sentence": trace.sentence,
        "tokens": list(trace.tokens),
        "labels": list(trace.labels),
        "unknown": list(trace.unknown),
        "features": list(trace.features),
        "options": trace.options.to_dict(),
        "embedding": trace.embedding,
        "positional": trace.positional,
        "x": trace.x,
        "heads": [{name: getattr(head, name) for name in _HEAD_FIELDS} for head in trace.heads],
        "concat": trace.concat,
        "w_o": trace.w_o,
        "output": trace.output,
        # cross-attention: the columns are another text's tokens, its keys and values made from key_x
        **({} if trace.key_tokens is None else
           {"key_tokens": list(trace.key_tokens), "key_labels": trace.looked_at_labels, "key_x": trace.key_x}),
    }


def trace_to_dict(trace: Trace) -> dict:
    """The JSON form of a trace: matrices as lists of rows, masked entries as null."""
    return _plain(_trace_fields(trace))


def _plain(value: object) -> object:
    if isinstance(value, np.ndarray):
        return [_row(row) for row in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def iter_trace_json(trace: Trace) -> Iterator[str]:
    """The trace as JSON, in pieces of at most one matrix row: one row per line, easy to read and to
    diff, still standard JSON."""
    yield from json_pieces(_trace_fields(trace), 0)
    yield "\n"


def trace_to_json(trace: Trace) -> str:
    return "".join(iter_trace_json(trace))


def write_trace_json(path: str | os.PathLike, trace: Trace) -> None:
    """The trace as JSON into `path` (or standard output for "-"), row by row."""
    with text_output(path) as handle:
        for piece in iter_trace_json(trace):
            handle.write(piece)


def json_pieces(value: object, depth: int) -> Iterator[str]:
    """`value` as JSON in pieces: a matrix one row per line, so a large one is never held as text whole.
    A function stands for the value it returns, made when the writer reaches it (a real model's
    layers, one at a time)."""
    pad, inner = " " * depth, " " * (depth + 1)
    if callable(value):
        yield from json_pieces(value(), depth)
    elif isinstance(value, np.ndarray):
        if len(value) == 0:
            yield "[]"
            return
        yield "[\n"
        for i, row in enumerate(value):
            yield f"{_SEPARATOR if i else ''}{inner}{json.dumps(_row(row))}"
        yield f"\n{pad}]"
    elif isinstance(value, dict) and value:
        yield "{\n"
        for i, (key, item) in enumerate(value.items()):
            yield f"{_SEPARATOR if i else ''}{inner}{json.dumps(key)}: "
            yield from json_pieces(item, depth + 1)
        yield f"\n{pad}}}"
    elif isinstance(value, list) and value and all(isinstance(item, (list, dict, np.ndarray)) or callable(item)
                                                   for item in value):
        yield "[\n"
        for i, item in enumerate(value):
            yield f"{_SEPARATOR if i else ''}{inner}"
            yield from json_pieces(item, depth + 1)
        yield f"\n{pad}]"
    else:
        yield json.dumps(value, ensure_ascii=False)


def _row(row: np.ndarray) -> list:
    """One matrix row with −∞ (masked) as None, so the JSON stays standard."""
    return [None if x == -math.inf else x for x in np.asarray(row, dtype=float).tolist()]


# --- one matrix as CSV -------------------------------------------------------------------------

def matrix_table(trace: Trace, matrix: str, head: int | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """(row labels, column labels, values) of a named matrix.

    `head` is 0-based; None means head 0 for per-head matrices and the layer's final output for
    "output" (the concatenation, times W_O when the model has it).
    """
    if matrix not in MATRIX_CHOICES:
        raise ExportError(f"unknown matrix {matrix!r}; choose one of {', '.join(MATRIX_CHOICES)}")
    if head is not None and not 0 <= head < len(trace.heads):
        raise ExportError(f"head {head + 1} does not exist; this trace has {len(trace.heads)} head(s)")
    if matrix == "output" and head is None:
        return list(trace.labels), trace.output_column_labels(), trace.output
    head = head or 0
    return trace.row_labels(matrix), trace.column_labels(matrix, head), trace.matrix(matrix, head)


def write_csv_rows(handle: TextIO, trace: Trace, matrix: str, head: int | None = None) -> None:
    """One matrix as CSV onto `handle`: token labels in the header row and first column; −∞ as -inf."""
    rows, columns, values = matrix_table(trace, matrix, head)
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow([_corner_label(matrix), *columns])
    for label, row in zip(rows, values, strict=True):
        writer.writerow([label, *(_csv_number(x) for x in row)])


def matrix_to_csv(trace: Trace, matrix: str, head: int | None = None) -> str:
    buffer = io.StringIO()
    write_csv_rows(buffer, trace, matrix, head)
    return buffer.getvalue()


def write_matrix_csv(path: str | os.PathLike, trace: Trace, matrix: str, head: int | None = None) -> None:
    """One matrix as CSV into `path` (or standard output for "-")."""
    matrix_table(trace, matrix, head)  # a wrong matrix or head is refused before the file is touched
    with text_output(path) as handle:
        write_csv_rows(handle, trace, matrix, head)


def _corner_label(matrix: str) -> str:
    return "looking \\ looked at" if matrix in SQUARE_MATRICES else "token"


def _csv_number(x: float) -> str:
    return "-inf" if x == -math.inf else repr(float(x))
