"""Opening a checkpoint of half a billion weights stored in bf16: time, peak memory, forward speed.

Run: `python bench/bench_big_checkpoint.py [--folder DIR] [--layers N] [--repeat R]`.

The checkpoint is made once into --folder (default: a temporary folder, removed after): a Qwen2 model
with random weights and Qwen2.5-0.5B's shapes (width 896, 24 layers, 14 query and 2 key/value heads,
feed-forward 4,864, vocabulary 151,936, tied embeddings, q/k/v biases), built by transformers and
saved in bf16 safetensors, with the tiny Qwen2 test checkpoint's tokenizer.json (320 tokens, all
below the vocabulary's size). --layers makes fewer layers (faster to make) and the table says so.

Each measurement runs in a fresh process, one BLAS thread and one torch thread:
- open: open_pretrained on the folder, then a 12-token text up to its first layer's attention;
  the seconds of each part and the process's peak resident memory (VmHWM), beside the file's size,
  the weights' size as float32, and a process that imports the engine and opens nothing;
- the forward at 128 tokens (the same random token ids), NumPy against torch eager float32 loaded
  from the same folder (`attn_implementation="eager"`, attentions returned, as the app keeps them;
  the last token's next-token scores only, as the engine computes).
Printed as a Markdown table of medians over --repeat processes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKENIZER = ROOT / "tests" / "engine" / "pretrained" / "data" / "tiny-qwen2" / "tokenizer.json"
SHAPES = dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
              num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6,
              rms_norm_eps=1e-6, tie_word_embeddings=True, bos_token_id=0, eos_token_id=0)
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
MIB = 1 << 20


def make_checkpoint(folder: Path, layers: int) -> float:
    """The bf16 checkpoint in `folder` (kept when it is already there); the seconds it took."""
    if (folder / "config.json").exists() and list(folder.glob("*.safetensors")):
        return 0.0
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    start = time.perf_counter()
    torch.manual_seed(0)
    config = Qwen2Config(**{**SHAPES, "num_hidden_layers": layers})
    model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(folder, safe_serialization=True, max_shard_size="20GB")
    shutil.copy(TOKENIZER, folder / "tokenizer.json")
    return time.perf_counter() - start


def peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _ids(n: int):
    import numpy as np
    return np.random.default_rng(0).integers(0, 320, n)


def child_idle() -> dict:
    import tokenizers  # noqa: F401

    import attention_explorer.engine.pretrained.model  # noqa: F401  (the engine, as an open would import it)
    return {"peak": peak_mib()}


def child_open(folder: Path) -> dict:
    from attention_explorer.engine.pretrained.model import open_pretrained
    start = time.perf_counter()
    model = open_pretrained(folder)
    opened = time.perf_counter()
    text = "the cat sat on the mat"
    while len(model.tokenizer.encode(text).ids) < 12:
        text += " and the dog"
    ids = model.tokenizer.encode(text).ids[:12]
    text = model.tokenizer.decode(ids) if hasattr(model.tokenizer, "decode") else text
    trace = model.run(text)
    trace.layer_trace(0)
    done = time.perf_counter()
    weights = sum(a.nbytes for a in _arrays(model.weights))
    return {"open": opened - start, "first": done - opened, "total": done - start, "peak": peak_mib(),
            "weights": weights / MIB, "tokens": len(trace.encoded.ids)}


def _arrays(weights):
    """Every distinct array the weights hold (views counted once, through their base)."""
    import numpy as np
    seen = {}
    for holder in (weights, *weights.layers):
        for value in vars(holder).values():
            if isinstance(value, np.ndarray):
                base = value if value.base is None else value.base
                seen[id(base)] = base
    return seen.values()


def child_numpy(folder: Path, n: int, repeat: int) -> dict:
    import numpy as np

    from attention_explorer.engine.pretrained.forward import forward
    from attention_explorer.engine.pretrained.model import open_pretrained
    model = open_pretrained(folder)
    ids = _ids(n)
    times = []
    with np.errstate(all="ignore"):
        for _ in range(repeat + 1):
            start = time.perf_counter()
            forward(model.weights, ids)
            times.append(time.perf_counter() - start)
    return {"forward": statistics.median(times[1:]), "peak": peak_mib()}


def child_torch(folder: Path, n: int, repeat: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM
    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    ids = torch.tensor(_ids(n))[None]
    times = []
    with torch.no_grad():
        for _ in range(repeat + 1):
            start = time.perf_counter()
            model(ids, output_attentions=True, logits_to_keep=1)  # the next token's scores only, as ours
            times.append(time.perf_counter() - start)
    return {"forward": statistics.median(times[1:]), "peak": peak_mib()}


def run_child(kind: str, folder: Path, *extra: str) -> dict:
    env = {**os.environ, **ONE_THREAD}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "app"), env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, __file__, "--child", kind, "--folder", str(folder), *extra],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--layers", type=int, default=SHAPES["num_hidden_layers"])
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per measurement")
    parser.add_argument("--forwards", type=int, default=3, help="timed forwards per process (after one warm-up)")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        result = {"idle": lambda: child_idle(), "open": lambda: child_open(args.folder),
                  "numpy": lambda: child_numpy(args.folder, args.tokens, args.forwards),
                  "torch": lambda: child_torch(args.folder, args.tokens, args.forwards)}[args.child]()
        print(json.dumps(result))
        return
    temporary = args.folder is None
    folder = Path(tempfile.mkdtemp(prefix="big-checkpoint-")) if temporary else args.folder
    try:
        made = make_checkpoint(folder, args.layers)
        layers = json.loads((folder / "config.json").read_text())["num_hidden_layers"]
        file_mib = sum(p.stat().st_size for p in folder.glob("*.safetensors")) / MIB
        if made:
            print(f"made the checkpoint in {made:.0f} s: {folder}", file=sys.stderr)
        runs = {kind: [run_child(kind, folder, "--tokens", str(args.tokens), "--forwards", str(args.forwards))
                       for _ in range(args.repeat)] for kind in ("idle", "open", "numpy", "torch")}
    finally:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[kind])

    idle, peak = med("idle", "peak"), med("open", "peak")
    note = "" if layers == SHAPES["num_hidden_layers"] else f" ({layers} of Qwen2.5-0.5B's 24 layers)"
    print(f"Random-weight Qwen2 checkpoint with Qwen2.5-0.5B's shapes{note}, bf16 safetensors; "
          f"medians of {args.repeat} fresh processes, one thread each.\n")
    print("| measure | value |\n|---|---|")
    rows = [
        ("safetensors file(s)", f"{file_mib:,.0f} MiB"),
        ("weights held as float32", f"{med('open', 'weights'):,.0f} MiB"),
        ("peak resident memory, open + first attention", f"{peak:,.0f} MiB"),
        ("  the same above an idle engine process", f"{peak - idle:,.0f} MiB (idle {idle:,.0f} MiB)"),
        ("  that excess ÷ file size", f"{(peak - idle) / file_mib:.2f}"),
        ("  that excess ÷ float32 weights", f"{(peak - idle) / med('open', 'weights'):.2f}"),
        ("open_pretrained", f"{med('open', 'open'):.2f} s"),
        (f"then {med('open', 'tokens'):.0f} tokens to the first layer's attention", f"{med('open', 'first'):.2f} s"),
        ("open to first attention", f"{med('open', 'total'):.2f} s"),
        (f"forward at {args.tokens} tokens, NumPy float32", f"{med('numpy', 'forward'):.2f} s"),
        (f"forward at {args.tokens} tokens, torch eager float32", f"{med('torch', 'forward'):.2f} s"),
        ("  NumPy ÷ torch", f"{med('numpy', 'forward') / med('torch', 'forward'):.2f}"),
        ("peak resident memory, torch process", f"{med('torch', 'peak'):,.0f} MiB"),
    ]
    for label, value in rows:
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()
