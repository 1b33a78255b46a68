"""Reading the settings earlier versions left in Qt's INI file, without letting Qt read it.

Earlier versions kept their settings with QSettings, which on Linux is an INI file
(~/.config/attention-explorer/Attention Explorer.conf). Qt turns a value written as `@Variant(...)`
back into an object by deserialising its bytes, and a damaged one (`@Variant(\\0\\0\\0\\v\\x7f\\xff\\xff\\xff)`)
made Qt throw std::bad_alloc and abort every start. So the file is read here, as text, with Qt's own
rules for lines, sections, keys, quotes, escapes and lists, and only plain values are taken:

- text, and lists of texts (`a, b`), as Python strings and lists;
- `@ByteArray(...)` (window layouts) as bytes;
- `@Variant(...)`, `@DateTime(...)` and the other typed forms are refused: never decoded, only named.

Nothing is ever written back to that file.

Qt keeps settings of its own too (the file dialog's history and layout, QtProject.conf) and reads
them with the same QSettings code when a dialog opens; `unusable_qt_ini` says whether such a file
holds anything QSettings must not read.
"""

from __future__ import annotations

import os
from pathlib import Path

from .engine.atomic_write import not_regular_reason
from .engine.errors import EngineError
from .engine.safe_read import read_user_text

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            '"': '"', "?": "?", "'": "'", "\\": "\\"}
_HEX = "0123456789abcdefABCDEF"
_OCTAL = "01234567"
_REFUSED_FORMS = ("@Variant(", "@DateTime(", "@Rect(", "@Size(", "@Point(")


def read_qt_ini(text: str) -> tuple[dict[str, object], list[str]]:
    """The values of a QSettings INI file, by key ("view/colormap"), and the keys refused."""
    values: dict[str, object] = {}
    refused: list[str] = []
    section = ""
    for line, equals in _lines(text.removeprefix("\ufeff")):
        if line.startswith("["):
            name = line[1:line.index("]")] if "]" in line else line[1:]
            name = name.strip()
            if name.lower() == "general":
                section = ""
            elif name.lower() == "%general":
                section = name[1:] + "/"
            else:
                section = _unescaped_key(name) + "/"
            continue
        if equals < 0:
            continue  # a comment, or a line Qt too would skip
        key = section + _unescaped_key(line[:equals].strip())
        value = _value(line[equals + 1:])
        if value is _REFUSED:
            refused.append(key)
        elif value is not None:
            values[key] = value
    return values, refused


_REFUSED = object()


def unusable_qt_ini(path: Path, max_bytes: int) -> str | None:
    """Why QSettings must not read the INI file at `path`: not a regular file, unreadable, or
    holding a typed value it would deserialise; or a link, which Qt's writer would follow
    wherever it points. None when it is safe, or when there is none."""
    if os.path.islink(path):
        return "it is a link, which Qt would write through"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    reason = not_regular_reason(info.st_mode)
    if reason is not None:
        return reason
    try:
        _values, refused = read_qt_ini(read_user_text(path, "settings file", max_bytes=max_bytes))
    except EngineError as exc:
        return str(exc)
    return f"it holds values Qt would decode blindly: {', '.join(refused)}" if refused else None


def _lines(text: str):
    """(line, position of its first '=' outside quotes or -1), as Qt's readIniLine splits them:
    a line ends at a line break or a ';' outside quotes; a backslash keeps the next character."""
    i, size = 0, len(text)
    while i < size:
        while i < size and text[i] in " \t\r\n":
            i += 1
        start, equals, quoted = i, -1, False
        while i < size:
            ch = text[i]
            if ch in "\r\n" and not quoted:
                break
            if ch == ";" and not quoted:
                if i == start:  # a comment line: skipped whole
                    while i < size and text[i] not in "\r\n":
                        i += 1
                    start = i
                    break
                break
            if ch == "=" and not quoted and equals < 0:
                equals = i - start
            elif ch == '"':
                quoted = not quoted
            elif ch == "\\":
                i += 1
                if text[i:i + 2] in ("\r\n", "\n\r"):  # an escaped line break of two characters
                    i += 1
            i += 1
        if i > start:
            yield text[start:i], equals
        if i < size and text[i] == ";":  # the rest of the line after a ';' is a comment
            while i < size and text[i] not in "\r\n":
                i += 1


def _unescaped_key(key: str) -> str:
    """Qt writes '/' in a key as '\\' and other characters as %XX or %UXXXX."""
    out, i = [], 0
    while i < len(key):
        ch = key[i]
        if ch == "\\":
            out.append("/")
            i += 1
            continue
        digits, first = (4, i + 2) if key[i + 1:i + 2] == "U" else (2, i + 1)
        code = key[first:first + digits]
        if ch == "%" and len(code) == digits and all(c in _HEX for c in code):
            out.append(chr(int(code, 16)))
            i = first + digits
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _value(raw: str) -> object:
    """A value as QSettings would give it back, or _REFUSED for the typed forms, or None for @Invalid().
    The items of a list are read as single values are (Qt does the same); one typed item refuses the list."""
    parts = _unescaped_list(raw)
    if len(parts) == 1:
        return _single(parts[0])
    items = [_single(part) for part in parts]
    return _REFUSED if any(item is _REFUSED for item in items) else items


def _single(text: str) -> object:
    if text.startswith("@") and text.endswith(")"):
        if text.startswith("@ByteArray("):
            return text[len("@ByteArray("):-1].encode("latin-1", "replace")
        if text.startswith("@String("):
            return text[len("@String("):-1]
        if text.startswith(_REFUSED_FORMS):
            return _REFUSED
        if text == "@Invalid()":
            return None
    return text[1:] if text.startswith("@@") else text


def _unescaped_list(raw: str) -> list[str]:
    """Qt's iniUnescapedStringList: quotes, C escapes (\\x hex and octal of any length), and commas
    outside quotes separating the items of a list; spaces ending an unquoted item dropped, unless
    they come before an escape."""
    items: list[str] = []
    current: list[str] = []
    length = keep = 0  # characters in `current`; the first `keep` of them are never chopped
    quoted = in_quotes = False
    i, size = 0, len(raw)

    def skip_spaces(i: int) -> int:
        while i < size and raw[i] in " \t":
            i += 1
        return i

    def finished_item() -> str:
        text = "".join(current)
        return text if quoted else text[:keep] + text[keep:].rstrip(" \t")

    i = skip_spaces(i)
    while i < size:
        ch = raw[i]
        if ch == "\\":
            if i + 1 >= size:  # a backslash ending the value: Qt stops there, chopping nothing
                keep = length
                break
            ch, i = raw[i + 1], i + 2
            char = ""
            if ch in _ESCAPES:
                char = _ESCAPES[ch]
            elif ch == "x" and i < size and raw[i] in _HEX:
                j = _run_end(raw, i, _HEX)
                char, i = chr(int(raw[i:j], 16) & 0xFFFF), j
            elif ch in _OCTAL:
                j = _run_end(raw, i, _OCTAL)
                char, i = chr(int(raw[i - 1:j], 8) & 0xFFFF), j
            elif ch in "\r\n" and i < size and raw[i] in "\r\n" and raw[i] != ch:
                i += 1  # an escaped line break of two characters; any other unknown escape is dropped
            current.append(char)
            length += len(char)
            keep = length
        elif ch == '"':
            i += 1
            quoted = True
            in_quotes = not in_quotes
            if not in_quotes:
                i = skip_spaces(i)
        elif ch == "," and not in_quotes:
            items.append(finished_item())
            current, length, keep, quoted = [], 0, 0, False
            i = skip_spaces(i + 1)
        else:
            j = i + 1
            while j < size and raw[j] not in '\\",':
                j += 1
            current.append(raw[i:j])
            length += j - i
            i = j
    items.append(finished_item())
    return items


def _run_end(text: str, start: int, alphabet: str) -> int:
    end = start
    while end < len(text) and text[end] in alphabet:
        end += 1
    return end
