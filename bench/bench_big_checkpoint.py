"""Opening checkpoints of half a billion and a billion weights, bf16 safetensors and Q8_0 GGUF, with the
weights kept stored or converted to float32: open time, peak memory, forward speed beside torch.

Run: `python bench/bench_big_checkpoint.py [--shapes qwen llama] [--layers N] [--tokens 128 512]
[--repeat R] [--forwards F] [--folder DIR]`.

The checkpoints are made once into --folder (default: a temporary folder, removed after), one
subfolder per shape: a model with random weights built by transformers with the shapes of
- qwen: Qwen2.5-0.5B (width 896, 24 layers, 14 query and 2 key/value heads, feed-forward 4,864,
  vocabulary 151,936, tied embeddings, q/k/v biases, rope_theta 10⁶);
- llama: Llama-3.2-1B (width 2,048, 16 layers, 32 query and 8 key/value heads, feed-forward 8,192,
  vocabulary 128,256, tied embeddings, rope_theta 500,000 with Llama 3's scaling: factor 32, low and
  high frequency factors 1 and 4, original context 8,192);
saved by transformers in bf16 safetensors with the tiny Llama test checkpoint's tokenizer.json (320
tokens, all below the vocabulary's size), and the same weights (those bf16 numbers) written as a
GGUF file with every matrix in Q8_0 and the norms in F32, by the tiny checkpoints' GGUF writer
(tests/engine/pretrained/make_tiny_checkpoints.py: the metadata llama.cpp's converter writes, Llama's
q/k rows permuted, Llama 3's scaling as the rope_freqs tensor). --layers makes fewer layers (faster
to make) and the table says so.

Each measurement runs in a fresh process, one BLAS thread and one torch thread; for each file and
each way of holding the weights (--weights stored, float32):
- open: open_pretrained, then a 12-token text up to its first layer's attention (the first view):
  the seconds, and the process's peak resident memory (VmHWM) beside the file's size;
- forward: NumPy's forward at each of --tokens (the same random token ids), the median of --forwards
  after one warm-up, the seconds spent converting stored layers (stored_layers.py counts them; the
  next layer is made on a second thread while the forward computes) and the seconds the forward
  waited for them, and the process's peak resident memory;
and torch eager float32 loaded from the bf16 folder (`attn_implementation="eager"`, attentions
returned, as the app keeps them; the last token's next-token scores only, as the engine computes) at
the same lengths. Torch's side of the GGUF file is not loaded through transformers' `gguf_file=`: that
dequantises it into the same float32 model as the folder's, whose forward is the one timed.
Printed as Markdown tables of medians over --repeat processes.
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
MAKERS = ROOT / "tests" / "engine" / "pretrained"
TOKENIZER = MAKERS / "data" / "tiny-llama" / "tokenizer.json"
SHAPES = {
    "qwen": ("Qwen2.5-0.5B", "qwen2", dict(
        hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
        num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6,
        rms_norm_eps=1e-6, tie_word_embeddings=True, bos_token_id=0, eos_token_id=0)),
    "llama": ("Llama-3.2-1B", "llama", dict(
        hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
        num_key_value_heads=8, head_dim=64, vocab_size=128256, max_position_embeddings=131072,
        rms_norm_eps=1e-5, tie_word_embeddings=True, bos_token_id=0, eos_token_id=0,
        rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=32.0, low_freq_factor=1.0,
                             high_freq_factor=4.0, original_max_position_embeddings=8192))),
}
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
MODES = ("stored", "float32")
MIB = 1 << 20


def make_checkpoints(folder: Path, shape: str, layers: int) -> float:
    """`folder`/hf (the bf16 folder) and `folder`/model.gguf (Q8_0), kept when already there; the
    seconds they took."""
    if (folder / "hf" / "config.json").exists() and (folder / "model.gguf").exists():
        return 0.0
    import safetensors.torch
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    start = time.perf_counter()
    _title, family, fields = SHAPES[shape]
    torch.manual_seed(0)
    config = AutoConfig.for_model(family, **{**fields, "num_hidden_layers": layers})
    model = AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
    model.save_pretrained(folder / "hf", safe_serialization=True, max_shard_size="20GB")
    shutil.copy(TOKENIZER, folder / "hf" / "tokenizer.json")
    del model
    weights = {name: tensor.float().numpy() for name, tensor in
               safetensors.torch.load_file(str(folder / "hf" / "model.safetensors")).items()}
    write_q8_gguf(folder / "model.gguf", family, json.loads((folder / "hf" / "config.json").read_text()), weights)
    return time.perf_counter() - start


def write_q8_gguf(path: Path, family: str, config: dict, weights: dict) -> None:
    """`weights` (the bf16 folder's, as float32) as llama.cpp's converter writes them, every matrix Q8_0."""
    sys.path.insert(0, str(MAKERS))
    import gguf
    import make_tiny_checkpoints as makers

    arch = {"llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2}[family]
    tokenizer = makers.byte_bpe_metadata(makers.reused("llama"), "smollm", makers.SPECIAL)

    def write_tokenizer(writer) -> None:
        tokenizer(writer)
        writer.add_vocab_size(config["vocab_size"])  # more rows than the tiny tokenizer's 320 tokens

    q8 = {stem: gguf.GGMLQuantizationType.Q8_0 for stem in
          ("token_embd", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")}
    parameters = makers.llama3_parameters if family == "llama" else makers.llama_parameters
    makers.write_gguf(family, arch, write_tokenizer, types=q8, parameters=parameters, out=str(path), config=config,
                      weights=weights)


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


def child_open(path: Path, mode: str) -> dict:
    from attention_explorer.engine.pretrained.model import open_pretrained
    start = time.perf_counter()
    model = open_pretrained(path, weights=mode)
    opened = time.perf_counter()
    text = "the cat sat on the mat"
    while len(model.tokenizer.encode(text).ids) < 12:
        text += " and the dog"
    trace = model.run(text)
    trace.layer_trace(0)
    done = time.perf_counter()
    return {"open": opened - start, "first": done - opened, "total": done - start, "peak": peak_mib(),
            "tokens": len(trace.encoded.ids)}


def child_numpy(path: Path, mode: str, lengths: list[int], forwards: int) -> dict:
    import numpy as np

    from attention_explorer.engine.pretrained.forward import forward
    from attention_explorer.engine.pretrained.model import open_pretrained
    model = open_pretrained(path, weights=mode)
    layers = model.weights.layers
    result = {}
    with np.errstate(all="ignore"):
        for n in lengths:
            ids, times, converting, waiting = _ids(n), [], [], []
            for _ in range(forwards + 1):
                before = [getattr(layers, key, 0.0) for key in ("conversion_seconds", "waited_seconds")]
                start = time.perf_counter()
                forward(model.weights, ids)
                times.append(time.perf_counter() - start)
                converting.append(getattr(layers, "conversion_seconds", 0.0) - before[0])
                waiting.append(getattr(layers, "waited_seconds", 0.0) - before[1])
            result[str(n)] = {"forward": statistics.median(times[1:]), "converting": statistics.median(converting[1:]),
                              "waiting": statistics.median(waiting[1:])}
    return {"lengths": result, "peak": peak_mib()}


def child_torch(folder: Path, lengths: list[int], forwards: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM
    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    result = {}
    with torch.no_grad():
        for n in lengths:
            ids, times = torch.tensor(_ids(n))[None], []
            for _ in range(forwards + 1):
                start = time.perf_counter()
                model(ids, output_attentions=True, logits_to_keep=1)  # the next token's scores only, as ours
                times.append(time.perf_counter() - start)
            result[str(n)] = {"forward": statistics.median(times[1:])}
    return {"lengths": result, "peak": peak_mib()}


def run_child(*arguments: str) -> dict:
    env = {**os.environ, **ONE_THREAD}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "app"), env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, __file__, "--child", *arguments], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def child(args: argparse.Namespace) -> dict:
    kind, path, mode = args.child, args.path, args.weights
    if kind == "idle":
        return child_idle()
    if kind == "open":
        return child_open(path, mode)
    if kind == "numpy":
        return child_numpy(path, mode, args.tokens, args.forwards)
    return child_torch(path, args.tokens, args.forwards)


def measure(folder: Path, args: argparse.Namespace) -> dict:
    """Every measurement of the checkpoints in `folder`, --repeat processes each."""
    common = ["--forwards", str(args.forwards), "--tokens", *map(str, args.tokens)]
    runs = {"idle": [run_child("idle") for _ in range(args.repeat)],
            "torch": [run_child("torch", "--path", str(folder / "hf"), *common) for _ in range(args.repeat)]}
    for file in ("hf", "model.gguf"):
        for mode in MODES:
            for kind in ("open", "numpy"):
                runs[kind, file, mode] = [run_child(kind, "--path", str(folder / file), "--weights", mode, *common)
                                          for _ in range(args.repeat)]
    return runs


def report(shape: str, folder: Path, runs: dict, args: argparse.Namespace) -> None:
    title, _family, fields = SHAPES[shape]
    layers = json.loads((folder / "hf" / "config.json").read_text())["num_hidden_layers"]
    sizes = {"hf": sum(p.stat().st_size for p in (folder / "hf").glob("*.safetensors")) / MIB,
             "model.gguf": (folder / "model.gguf").stat().st_size / MIB}

    def med(key, *path):
        values = []
        for run in runs[key]:
            for step in path:
                run = run[step]
            values.append(run)
        return statistics.median(values)

    idle = med("idle", "peak")
    note = "" if layers == fields["num_hidden_layers"] else f" ({layers} of its {fields['num_hidden_layers']} layers)"
    print(f"\nRandom-weight checkpoint with {title}'s shapes{note}; medians of {args.repeat} fresh processes, "
          f"one thread each (forwards: the median of {args.forwards} after a warm-up); an idle engine process "
          f"peaks at {idle:,.0f} MiB.\n")
    columns = [(file, mode) for file in ("hf", "model.gguf") for mode in MODES]
    names = {"hf": "bf16", "model.gguf": "Q8_0 GGUF"}
    print("| measure | " + " | ".join(f"{names[file]}, {mode}" for file, mode in columns) + " |")
    print("|---|" + "---|" * len(columns))
    rows = [("file", lambda f, m: f"{sizes[f]:,.0f} MiB"),
            ("open", lambda f, m: f"{med(('open', f, m), 'open'):.2f} s"),
            ("open to first attention (12 tokens)", lambda f, m: f"{med(('open', f, m), 'total'):.2f} s"),
            ("peak memory, open + first attention", lambda f, m: f"{med(('open', f, m), 'peak'):,.0f} MiB"),
            ("  ÷ file", lambda f, m: f"{med(('open', f, m), 'peak') / sizes[f]:.2f}")]
    for n in args.tokens:
        torch_s = med("torch", "lengths", str(n), "forward")
        rows += [(f"forward at {n} tokens",
                  lambda f, m, n=n: f"{med(('numpy', f, m), 'lengths', str(n), 'forward'):.2f} s"),
                 ("  converting layers (on either thread)",
                  lambda f, m, n=n: f"{med(('numpy', f, m), 'lengths', str(n), 'converting'):.2f} s"),
                 ("  of the forward, waiting for layers",
                  lambda f, m, n=n: f"{med(('numpy', f, m), 'lengths', str(n), 'waiting'):.2f} s"),
                 (f"  ÷ torch eager float32 ({torch_s:.2f} s)",
                  lambda f, m, n=n, t=torch_s: f"{med(('numpy', f, m), 'lengths', str(n), 'forward') / t:.2f}")]
    rows += [("peak memory, forwards", lambda f, m: f"{med(('numpy', f, m), 'peak'):,.0f} MiB"),
             ("  ÷ file", lambda f, m: f"{med(('numpy', f, m), 'peak') / sizes[f]:.2f}")]
    for label, cell in rows:
        print(f"| {label} | " + " | ".join(cell(f, m) for f, m in columns) + " |")
    print(f"| torch eager float32, peak memory | {med('torch', 'peak'):,.0f} MiB (the bf16 file: "
          f"{sizes['hf']:,.0f} MiB) |" + " |" * (len(columns) - 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--folder", type=Path, help="where the checkpoints are made, or kept from an earlier run")
    parser.add_argument("--layers", type=int, default=None, help="fewer layers than the model's (faster to make)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per measurement")
    parser.add_argument("--forwards", type=int, default=2, help="timed forwards per process (after one warm-up)")
    parser.add_argument("--tokens", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--child")
    parser.add_argument("--path", type=Path)
    parser.add_argument("--weights", choices=MODES)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    temporary = args.folder is None
    root = Path(tempfile.mkdtemp(prefix="big-checkpoint-")) if temporary else args.folder
    try:
        for shape in args.shapes:
            folder = root / shape
            made = make_checkpoints(folder, shape, args.layers or SHAPES[shape][2]["num_hidden_layers"])
            if made:
                print(f"made the checkpoints in {made:.0f} s: {folder}", file=sys.stderr)
            report(shape, folder, measure(folder, args), args)
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
