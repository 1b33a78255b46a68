"""Run the frozen console program headless and check what it writes, to catch a bundle that builds but breaks.

    python packaging/smoke_test.py                        dist/attention-explorer/attention-explorer-cli
    python packaging/smoke_test.py --binary dist/attention-explorer       e.g. the one-file build
    python packaging/smoke_test.py --repeat 20            each command 20 times (default 5)

A PyInstaller bundle fails in ways the tests of the installed package cannot see: a module or Qt plugin
left out, data files not found, a library that will not load. So the frozen program runs the commands a
user runs (QT_QPA_PLATFORM=offscreen, no display): `--version`, `trace -o x.json`, `export -o x.csv`,
`export --view heatmap -o x.png`, `export --view arcs -o x.svg` and `export --view steps -o x.gif` (Pillow,
imported only for GIFs), and every file must match what the installed package (this Python) writes for
the same command: the JSON and CSV byte for byte, the images valid (PNG: signature, every chunk's CRC,
IEND; GIF: header and trailer; SVG: parses as XML) and of the same size. Each command runs several times
and must exit 0 every time: a program that writes its file and then crashes while shutting down fails
only now and then. Any failure, or an import error or traceback on stderr, ends with one
"smoke test FAILED" line and exit 1.
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = "attention-explorer-cli.exe" if sys.platform == "win32" else "attention-explorer-cli"
DEFAULT_BINARY = ROOT / "dist" / "attention-explorer" / CLI

# (what, arguments, file written or None for stdout)
COMMANDS = (
    ("--version", ["--version"], None),
    ("trace JSON", ["trace", "--sentence", "the cat sat on the mat", "-o", "trace.json"], "trace.json"),
    ("weights CSV", ["export", "--model", "cat-ate-fish", "--head", "2", "-o", "weights.csv"], "weights.csv"),
    ("heatmap PNG", ["export", "--view", "heatmap", "-o", "heatmap.png"], "heatmap.png"),
    ("arcs SVG", ["export", "--view", "arcs", "-o", "arcs.svg"], "arcs.svg"),
    ("steps GIF", ["export", "--model", "cats-chase-mice", "--view", "steps", "-o", "steps.gif"], "steps.gif"),
)
BROKEN_SIGNS = ("Traceback", "ImportError", "ModuleNotFoundError", "Failed to execute script", "[PYI-",
                "Could not load the Qt platform plugin", "Could not find the Qt platform plugin")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class SmokeFailure(Exception):
    """What went wrong, in one line."""


def run(command: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return result, time.perf_counter() - started


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG after checking its signature, every chunk's CRC and the closing IEND."""
    data = path.read_bytes()
    if not data.startswith(PNG_SIGNATURE):
        raise SmokeFailure(f"{path.name} is not a PNG (bad signature)")
    offset, chunks = len(PNG_SIGNATURE), []
    while offset + 12 <= len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind, body = data[offset + 4:offset + 8], data[offset + 8:offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])
        if len(body) != length or zlib.crc32(kind + body) != crc:
            raise SmokeFailure(f"{path.name} is a broken PNG: chunk {kind!r} is cut short or has a bad CRC")
        chunks.append(kind)
        offset += 12 + length
    if not chunks or chunks[0] != b"IHDR" or chunks[-1] != b"IEND" or b"IDAT" not in chunks:
        raise SmokeFailure(f"{path.name} is a broken PNG: chunks {[c.decode() for c in chunks]}")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def gif_size(path: Path) -> tuple[int, int]:
    """(width, height) of a GIF after checking its header and closing trailer byte."""
    data = path.read_bytes()
    if data[:6] not in (b"GIF87a", b"GIF89a") or not data.endswith(b";"):
        raise SmokeFailure(f"{path.name} is not a whole GIF (bad header or no trailer)")
    width, height = struct.unpack("<HH", data[6:10])
    return width, height


def svg_size(path: Path) -> tuple[int, int]:
    """(width, height) of an SVG's view box after checking that it parses as XML with an <svg> root."""
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as exc:
        raise SmokeFailure(f"{path.name} is not well-formed XML: {exc}") from None
    if not root.tag.endswith("svg"):
        raise SmokeFailure(f"{path.name} is XML but not SVG: <{root.tag}>")
    _x, _y, width, height = (float(v) for v in root.get("viewBox", "0 0 0 0").split())
    return int(width), int(height)


IMAGE_SIZE = {".png": png_size, ".gif": gif_size, ".svg": svg_size}


def run_frozen(what: str, args: list[str], output: str | None, binary: Path, folder: Path,
               repeat: int) -> tuple[subprocess.CompletedProcess, float]:
    """Run the frozen program `repeat` times; every run must exit 0 and write its file. The last run's
    result is compared with the installed package's."""
    for attempt in range(1, repeat + 1):
        if output:
            (folder / output).unlink(missing_ok=True)
        frozen, seconds = run([str(binary), *args], folder)
        for sign in BROKEN_SIGNS:
            if sign in frozen.stderr:
                raise SmokeFailure(f"{what}: the frozen program reports {sign!r}:\n{frozen.stderr.strip()}")
        if frozen.returncode != 0:
            raise SmokeFailure(f"{what}: run {attempt} of {repeat} of the frozen program exited "
                               f"{frozen.returncode}: {frozen.stderr.strip()}")
        if output and not (folder / output).is_file():
            raise SmokeFailure(f"{what}: run {attempt} of {repeat} did not write {output}")
    return frozen, seconds


def check(what: str, args: list[str], output: str | None, binary: Path, work: Path, repeat: int) -> str:
    """Run one command frozen (`repeat` times) and installed; return what was checked, or raise SmokeFailure."""
    frozen_dir, python_dir = work / "frozen", work / "python"
    frozen, seconds = run_frozen(what, args, output, binary, frozen_dir, repeat)
    reference, _ = run([sys.executable, "-m", "attention_explorer", *args], python_dir)
    if reference.returncode != 0:
        raise SmokeFailure(f"{what}: the installed package failed too, fix that first: {reference.stderr.strip()}")

    if output is None:
        if frozen.stdout != reference.stdout:
            raise SmokeFailure(f"{what}: printed {frozen.stdout.strip()!r}, expected {reference.stdout.strip()!r}")
        return f"{what} ok, {repeat}× ({seconds:.1f} s): {frozen.stdout.strip()}"
    written, expected = frozen_dir / output, python_dir / output
    if not written.is_file() or written.stat().st_size == 0:
        raise SmokeFailure(f"{what}: the frozen program did not write {output}")
    image_size = IMAGE_SIZE.get(written.suffix)
    if image_size:
        size, expected_size = image_size(written), image_size(expected)
        if size != expected_size:
            raise SmokeFailure(f"{what}: {output} is {size[0]}×{size[1]} px, the installed package writes "
                               f"{expected_size[0]}×{expected_size[1]}")
        return f"{what} ok, {repeat}× ({seconds:.1f} s): valid, {size[0]}×{size[1]} as from the installed package"
    if written.read_bytes() != expected.read_bytes():
        raise SmokeFailure(f"{what}: {output} differs from what the installed package writes")
    return f"{what} ok, {repeat}× ({seconds:.1f} s): {output} identical to the installed package's"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, default=DEFAULT_BINARY, help="the frozen console program to run")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command, each must exit 0 (default 5)")
    options = parser.parse_args()
    binary, repeat = options.binary.absolute(), max(1, options.repeat)
    if not binary.is_file():
        print(f"smoke test FAILED: no frozen program at {binary}; build it with python packaging/build.py",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="attention-explorer-smoke-") as tmp:
        work = Path(tmp)
        (work / "frozen").mkdir()
        (work / "python").mkdir()
        try:
            for what, args, output in COMMANDS:
                print(f"smoke: {check(what, args, output, binary, work, repeat)}", flush=True)
        except (SmokeFailure, subprocess.TimeoutExpired) as failure:
            print(f"smoke test FAILED: {failure}", file=sys.stderr)
            return 1
    print(f"smoke test passed: {binary.relative_to(ROOT) if binary.is_relative_to(ROOT) else binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
