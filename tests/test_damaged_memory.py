"""Damaged files that are small on disk but large in memory are refused, or opened, within "2 × the
largest input file + the model's own need" (the issue's bound), measured in fresh processes.

Each kind swells a tiny checkpoint by about 12 MB of things that cost a few bytes each in the file and
ten to forty times that as objects (tests/damaged_models: gguf.swollen_headers, fields.swollen_files).
Peaks are read from /proc (VmHWM), each beside an anchor taken the same way, so the figures are
memory, not time, and repeat to within a fraction of a MiB. bench/bench_damaged_memory.py prints the
same for MiniLM's and SmolLM2's files.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from damaged_models.copies import DATA, FILES, GGUF_NAME, original
from damaged_models.fields import swollen_files
from damaged_models.gguf import swollen_headers
from damaged_models.memory import largest_file_mib, peak_mib

pytest.importorskip("tokenizers")
if not sys.platform.startswith("linux"):
    pytest.skip("peak memory is read from /proc", allow_module_level=True)

SWELLING = 12 << 20
SLACK_MIB = 2.0  # what the allocator and the file's last pages may add to a peak
FOLDER = "tiny-bert"
KINDS = [("gguf", kind) for kind in swollen_headers(original(GGUF_NAME), SWELLING)] + [
    ("folder", kind) for kind in swollen_files({name: original(f"{FOLDER}/{name}") for name in FILES}, SWELLING)]


@pytest.fixture(scope="module")
def own_need(tmp_path_factory) -> dict[str, float]:
    """The anchor's peak, and what opening each undamaged tiny model takes above it, in MiB."""
    anchor = min(peak_mib()[0] for _ in range(2))
    return {"anchor": anchor, "gguf": peak_mib(DATA / GGUF_NAME)[0] - anchor,
            "folder": peak_mib(DATA / FOLDER)[0] - anchor}


@pytest.mark.parametrize("source, kind", KINDS, ids=[kind for _, kind in KINDS])
def test_a_swollen_file_takes_at_most_twice_its_size_above_the_models_own_need(source, kind, own_need, tmp_path):
    if source == "gguf":
        path = tmp_path / GGUF_NAME
        path.write_bytes(swollen_headers(original(GGUF_NAME), SWELLING)[kind]())
    else:
        path = tmp_path / FOLDER
        shutil.copytree(DATA / FOLDER, path)
        name, make = swollen_files({name: original(f"{FOLDER}/{name}") for name in FILES}, SWELLING)[kind]
        (path / name).write_bytes(make())
    peak, outcome = peak_mib(path)
    allowed = 2 * largest_file_mib(path) + own_need[source] + SLACK_MIB
    assert peak - own_need["anchor"] <= allowed, f"{peak - own_need['anchor']:.1f} MiB above the anchor ({outcome})"
