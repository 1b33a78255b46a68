"""Peak memory of opening a real model, damaged or not, in a fresh process: for the memory test and
bench/bench_damaged_memory.py.

A process's peak resident memory (VmHWM, from /proc) counts everything it ever held: the
interpreter, NumPy, `tokenizers`, the pages of a file it mapped and read. So a peak means something
only beside an anchor taken the same way: a process that imports the same modules and opens
nothing. What opening a model may cost is "2 × its largest file + the model's own need", the own
need being what opening the undamaged model takes above that anchor.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from attention_explorer.engine.errors import ModelError
from attention_explorer.engine.pretrained import open_pretrained
import tokenizers
outcome = "nothing opened"
if sys.argv[1:]:
    try:
        open_pretrained(sys.argv[1])
        outcome = "opened"
    except ModelError as error:
        outcome = "refused: " + str(error)
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
print(f"{peak:.2f}\\t{outcome}")
"""


def peak_mib(path: Path | str | None = None) -> tuple[float, str]:
    """(peak resident MiB, "opened" | "refused: …" | "nothing opened") of open_pretrained(path) in a
    fresh process; no path: the anchor."""
    args = [sys.executable, "-c", PROBE] + ([] if path is None else [str(path)])
    out = subprocess.run(args, capture_output=True, text=True, check=True, timeout=300).stdout
    value, outcome = out.strip().split("\t", 1)
    return float(value), outcome


def largest_file_mib(path: Path) -> float:
    """The largest file a model is opened from: the .gguf, or the biggest in its folder."""
    files = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
    return max(p.stat().st_size for p in files) / 2 ** 20
