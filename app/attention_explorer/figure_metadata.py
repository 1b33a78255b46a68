"""The view state inside exported files, and read back out: a PNG text chunk (iTXt), the SVG's
<metadata>, an entry of the PDF's document information. Any program keeps them; dropping the file on
the window reads them to open the same view.

Reading them back is reading untrusted bytes: every length is checked against the data, compressed
text is inflated to a bounded size, and a file without our entry (or with a damaged one) gives None,
never an exception from deep inside a parser. No Qt here.
"""

from __future__ import annotations

import re
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
KEYWORD = "attention-explorer-view"       # the PNG keyword and the PDF information key
PDF_KEY = b"/AttentionExplorerView"
MAX_STATE_BYTES = 4 * 1024 * 1024         # a view state is a few kilobytes; a toy model inside it, a few hundred
METRES_PER_INCH = 0.0254


# --- PNG ---------------------------------------------------------------------------------------------

def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _itxt(keyword: str, text: str) -> bytes:
    """An uncompressed international text chunk: Latin-1 keyword, UTF-8 text."""
    return _chunk(b"iTXt", keyword.encode("latin-1") + b"\0\0\0" + b"\0" + b"\0" + text.encode("utf-8"))


def png_chunks(data: bytes):
    """(kind, body) of each chunk, stopping at the first one that does not fit the data."""
    if not data.startswith(PNG_SIGNATURE):
        return
    at = len(PNG_SIGNATURE)
    while at + 12 <= len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind = data[at + 4:at + 8]
        if at + 12 + length > len(data):
            return
        yield kind, data[at + 8:at + 8 + length]
        if kind == b"IEND":
            return
        at += 12 + length


def png_with_metadata(png: bytes, *, state: str, description: str, dpi: float, keyword: str = KEYWORD) -> bytes:
    """`png` with the view state (under `keyword`), a description (the caption) and its density: right
    after its header, where readers find them before the pixels."""
    if not png.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG image")
    chunks = list(png_chunks(png))
    if not chunks or chunks[0][0] != b"IHDR":
        raise ValueError("a PNG image starts with its header")
    per_metre = round(dpi / METRES_PER_INCH)
    added = [_chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
             _chunk(b"tEXt", b"Software\0Attention Explorer"),
             _itxt("Description", description),
             _itxt(keyword, state)]
    kept = [_chunk(kind, body) for kind, body in chunks[1:] if kind not in (b"pHYs", b"tEXt", b"iTXt", b"zTXt")]
    return PNG_SIGNATURE + _chunk(b"IHDR", chunks[0][1]) + b"".join(added) + b"".join(kept)


def png_metadata(data: bytes) -> str | None:
    """The view state a PNG carries (None: none, or not readable)."""
    for kind, body in png_chunks(data):
        if kind == b"iTXt":
            keyword, _, rest = body.partition(b"\0")
            if keyword != KEYWORD.encode("latin-1") or len(rest) < 2:
                continue
            compressed, text = rest[0], rest[2:]
            _language, _, text = text.partition(b"\0")
            _translated, _, text = text.partition(b"\0")
            if compressed:
                text = _inflate(text)
            return _utf8(text)
        if kind == b"tEXt":
            keyword, _, text = body.partition(b"\0")
            if keyword == KEYWORD.encode("latin-1"):
                return text.decode("latin-1")
        if kind == b"IEND":
            break
    return None


def png_dpi(data: bytes) -> float | None:
    for kind, body in png_chunks(data):
        if kind == b"pHYs" and len(body) == 9:
            per_metre, _y, unit = struct.unpack(">IIB", body)
            return per_metre * METRES_PER_INCH if unit == 1 else None
    return None


def _inflate(data: bytes) -> bytes | None:
    inflater = zlib.decompressobj()
    try:
        text = inflater.decompress(data, MAX_STATE_BYTES)
    except zlib.error:
        return None
    return None if inflater.unconsumed_tail else text


def _utf8(data: bytes | None) -> str | None:
    if data is None or len(data) > MAX_STATE_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# --- PDF ---------------------------------------------------------------------------------------------

_TRAILER = re.compile(rb"trailer\s*<<(.*?)>>\s*startxref\s*(\d+)\s*%%EOF\s*$", re.DOTALL)
_REF = rb"\s+(\d+)\s+(\d+)\s+R"


def pdf_with_metadata(pdf: bytes, state: str) -> bytes:
    """`pdf` (as QPdfWriter writes it: one cross-reference table) with the view state added to its
    document information, as an incremental update: the original bytes are kept as they are."""
    trailer = _TRAILER.search(pdf[-4096:])
    if trailer is None:
        raise ValueError("the PDF has no trailer to update")
    body, previous = trailer.group(1), int(trailer.group(2))
    size = int(re.search(rb"/Size\s+(\d+)", body).group(1))
    root = re.search(rb"/Root" + _REF, body)
    info = re.search(rb"/Info" + _REF, body)
    entries = b""
    if info is not None:
        old = re.search(rb"\b" + info.group(1) + rb"\s+" + info.group(2) + rb"\s+obj\s*<<(.*?)>>\s*endobj", pdf,
                        re.DOTALL)
        entries = old.group(1) if old is not None else b""
    text = "\ufeff".encode("utf-16-be") + state.encode("utf-16-be")
    at = len(pdf) + 1
    obj = (f"{size} 0 obj\n<<".encode() + entries + PDF_KEY + b" <" + text.hex().encode() + b">\n>>\nendobj\n")
    xref_at = at + len(obj)
    update = (b"\n" + obj + f"xref\n{size} 1\n{at:010d} 00000 n \ntrailer\n<< /Size {size + 1} ".encode()
              + (b"/Root " + root.group(1) + b" " + root.group(2) + b" R " if root else b"")
              + f"/Info {size} 0 R /Prev {previous} >>\nstartxref\n{xref_at}\n%%EOF\n".encode())
    return pdf + update


def pdf_metadata(data: bytes) -> str | None:
    """The view state a PDF carries in its document information (the newest, if updated twice)."""
    found = None
    for match in re.finditer(re.escape(PDF_KEY) + rb"\s*<([0-9A-Fa-f\s]*)>", data):
        found = match.group(1)
    if found is None:
        return None
    try:
        raw = bytes.fromhex(found.decode("ascii"))
    except ValueError:
        return None
    if len(raw) > 2 * MAX_STATE_BYTES:
        return None
    try:
        return raw.decode("utf-16")  # the byte-order mark says which way round
    except UnicodeDecodeError:
        return None
