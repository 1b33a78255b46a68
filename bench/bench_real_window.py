"""A real model in the window, as a user feels it: every interaction, settled, beside its anchor, and
the window's memory beside PyTorch's for the same text.

Run: `python bench/bench_real_window.py` (every model and length; `--cases "SmolLM2:128,2048"` for
some, `--repeat N` samples per figure at up to 512 tokens, fewer above). Each model and length runs
in a fresh process: a 1400 × 900 window, offscreen, with every view, the Steps dock and the model
view open. The window's controller runs forwards on its worker, as the app's does. Each interaction is
timed until the worker's job is on screen and the event loop has settled (bench/settling.py: passes
until two in a row do no work), in turns with its anchor, a bare pyqtgraph ImageItem of the same
n × n set and painted and settled the same way; the ratio is the median of the pairs' ratios.
"passes" is how many event-loop passes did work before the action settled.

Memory is taken before the anchor exists: the process's peak (VmHWM) after opening the model and
doing every action once, and what it keeps (VmRSS) once settled. Beside it, a fresh process runs
transformers on the same token ids with PyTorch's scaled_dot_product_attention and no attention
weights returned: the peak while it runs the forward (measured from the loaded model: its file reader's
own peak is left out), what it keeps, and its forward's time. Never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MINILM, SMOLLM = "MiniLM-L6 (encoder)", "SmolLM2-135M (decoder)"
SHORT = {"MiniLM": MINILM, "SmolLM2": SMOLLM}
DEFAULT_CASES = "MiniLM:12,128,512;SmolLM2:12,128,256,2048,8192"
TEXT = ("The cat sat on the mat because it was tired, and the dog that chased it across the park "
        "finally fell asleep under the old oak tree near the river. ")
ACTIONS = ("hover a word", "change layer", "change head", "toggle Words", "toggle Hide specials",
           "toggle Rollout", "model-view hover", "ablate a head", "type a word")
FORWARD_ACTIONS = ("ablate a head", "type a word")

PEAK = """
def memory_mib():
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024
"""
_PEAK_NAMESPACE: dict = {}
exec(PEAK, _PEAK_NAMESPACE)  # the same function as the torch child's, for this process (and the other benches)
memory_mib = _PEAK_NAMESPACE["memory_mib"]

TORCH = PEAK + """
import gc, json, sys, time
from pathlib import Path
import torch
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM
from transformers.utils import logging
torch.set_num_threads(1)
logging.disable_progress_bar()
logging.set_verbosity_error()
path, decoder, ids = sys.argv[1], sys.argv[2] == "1", json.loads(sys.argv[3])
if decoder:  # the GGUF file dequantised by transformers' own reader, into a model built on the meta device
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint
    config = AutoConfig.from_pretrained(str(Path(path).parent), gguf_file=Path(path).name)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    model.load_state_dict(load_gguf_checkpoint(path, return_tensors=True, model_to_load=model)["tensors"],
                          strict=False, assign=True)
    model.tie_weights()
    model.model.rotary_emb = type(model.model.rotary_emb)(config)
else:
    model = AutoModel.from_pretrained(path, attn_implementation="sdpa")
model.eval()
gc.collect()
whole_peak, _ = memory_mib()
with open("/proc/self/clear_refs", "w") as clear:  # the peak from here on: the forward's, not the loading's
    clear.write("5")
tensor = torch.tensor(ids)[None]
started = time.perf_counter()
with torch.no_grad():
    model(tensor, use_cache=False) if decoder else model(tensor)
ms = (time.perf_counter() - started) * 1000
gc.collect()
peak, kept = memory_mib()
print(json.dumps({"ms": ms, "peak": peak, "kept": kept, "load_peak": whole_peak}))
"""


def text_of(tokenizer, n: int) -> str:
    """The shortest run of TEXT's words (repeated as needed) that `tokenizer` makes into n tokens."""
    words = (TEXT * (n // 20 + 2)).split()
    low, high = 1, len(words)
    while low < high:
        middle = (low + high) // 2
        if len(tokenizer.encode(" ".join(words[:middle])).ids) >= n:
            high = middle
        else:
            low = middle + 1
    return " ".join(words[:low])


def samples_for(n: int, repeat: int, action: str) -> int:
    if action in FORWARD_ACTIONS:
        return repeat if n <= 128 else max(3, repeat // 3) if n <= 512 else 2
    return repeat if n <= 512 else max(5, repeat // 3)


# --- one model and length, in this process ---------------------------------------------------------
def run_case(name: str, n: int, repeat: int) -> dict:
    screen = Path(tempfile.gettempdir()) / "attention-explorer-bench-screen.json"
    screen.write_text('{"screens": [{"name": "bench", "x": 0, "y": 0, "width": 1920, "height": 1200, '
                      '"logicalDpi": 96, "dpr": 1}]}')
    os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={screen}")
    from PySide6 import QtCore

    from anchors import BareImageWindow
    from attention_explorer.app import MainWindow
    from attention_explorer.application import create_application
    from attention_explorer.controller import Controller
    from attention_explorer.engine.pretrained import open_pretrained
    from attention_explorer.gc_policy import keep_start_out_of_collections
    from settling import settle

    QtCore.qInstallMessageHandler(lambda *args: None)  # the offscreen platform's notes on window hints
    create_application()
    tokenizer = open_pretrained(name).tokenizer
    text = text_of(tokenizer, n)
    texts = [text, text.rsplit(" ", 1)[0] + " lamp"]  # a typed edit: the last word changes
    window = MainWindow(Controller(background=True), None)  # forwards on the worker, as in the app
    window.resize(1400, 900)
    window.show()
    window.steps_dock.show()
    settle()
    keep_start_out_of_collections()  # as the app does once its window has shown (gc_policy.resume_after_start)
    controller = window.controller

    def settled() -> int:
        """The worker's job (an edit's forward) done and on screen, then the event loop settled."""
        while controller.busy:  # each pass waits for the next event: the job's end wakes it
            QtCore.QCoreApplication.processEvents(QtCore.QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        return settle()

    started = time.perf_counter()
    controller.open_pretrained(name, sentence=text)
    settled()
    open_ms = (time.perf_counter() - started) * 1000
    window.pretrained.dock.show()
    settle()
    model = controller.real_model
    n_tokens = controller.pretrained_trace.n
    view = window.pretrained.model_view

    def model_view_point(i):
        rect = view.cell_rect(i % model.n_layers, (i // 2) % model.n_heads)
        fraction = ((7 * i) % 97 + 0.5) / 97
        return QtCore.QPointF(rect.left() + rect.width() / 2, rect.top() + fraction * rect.height())

    toggled = {"merge_words": False, "hide_specials": False, "rollout": False}

    def toggle(key):
        toggled[key] = not toggled[key]
        controller.update_real_view(**{key: toggled[key]})

    def back_to_plain():
        """Readings off and every head on, as the window opens: an odd number of samples leaves a toggle
        on, and the forward actions would otherwise be timed under every reading at once."""
        for key, on in toggled.items():
            if on:
                toggle(key)
        if controller.ablated:
            controller.set_ablated(frozenset())

    actions = {
        "hover a word": lambda i: controller.set_hovered((7 * i + 3) % n_tokens),
        "change layer": lambda i: controller.set_layer(1 + i % 2),
        "change head": lambda i: controller.set_head(1 + i % 2),
        "toggle Words": lambda i: toggle("merge_words"),
        "toggle Hide specials": lambda i: toggle("hide_specials"),
        "toggle Rollout": lambda i: toggle("rollout"),
        "model-view hover": lambda i: view.hover_at(model_view_point(i)),
        "ablate a head": lambda i: controller.toggle_ablated(1, 1),
        "type a word": lambda i: controller.set_sentence(texts[(i + 1) % 2]),
    }

    def timed(action, i):
        begun = time.perf_counter()
        action(i)
        passes = settled()
        return (time.perf_counter() - begun) * 1000, passes

    for action in actions.values():  # once each, for memory, before the anchor exists
        timed(action, 0)
        timed(action, 1)
    controller.set_hovered(None)
    settled()
    peak, kept = memory_mib()

    forward_samples = []
    for _ in range(samples_for(n, repeat, "type a word")):
        begun = time.perf_counter()
        model.run(texts[0], controller.ablated)
        forward_samples.append((time.perf_counter() - begun) * 1000)

    bare = BareImageWindow(window.heatmap.graphics.size())
    bare.update(n_tokens, 0)
    rows = {}
    for label, action in actions.items():
        times, anchors, passes = [], [], []
        for i in range(samples_for(n, repeat, label)):
            anchors.append(timed(lambda i: bare.update(n_tokens, i), i)[0])
            ms, p = timed(action, i)
            times.append(ms)
            passes.append(p)
        ratios = [a / b for a, b in zip(times, anchors, strict=True)]
        rows[label] = {"ms": statistics.median(times), "anchor": statistics.median(anchors),
                       "ratio": statistics.median(ratios), "passes": statistics.median(passes),
                       "low": min(times), "high": max(times)}
        controller.set_hovered(None)
        back_to_plain()
        settled()
    return {"model": name, "n": n_tokens, "open_ms": open_ms, "forward_ms": statistics.median(forward_samples),
            "peak_mib": peak, "kept_mib": kept, "rows": rows, "ids": list(map(int, tokenizer.encode(text).ids))}


# --- the driver -----------------------------------------------------------------------------------
def child(args: list[str]) -> dict:
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def torch_memory(name: str, ids: list[int]) -> dict | None:
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return None
    from attention_explorer.engine.pretrained import installed_models

    return child(["-c", TORCH, str(installed_models()[name]), "1" if name == SMOLLM else "0", json.dumps(ids)])


def table(results: list[dict]) -> list[str]:
    lines = ["| model, tokens | interaction | ms (median, range) | anchor ms | ratio | passes |",
             "|---|---|---:|---:|---:|---:|"]
    for result in results:
        where = f"{result['model'].split(' ')[0]}, {result['n']}"
        for label, row in result["rows"].items():
            lines.append(f"| {where} | {label} | {row['ms']:.1f} ({row['low']:.0f}–{row['high']:.0f}) | "
                         f"{row['anchor']:.1f} | {row['ratio']:.1f}× | {row['passes']:.0f} |")
        lines.append(f"| {where} | forward alone (model.run) | {result['forward_ms']:.1f} | — | — | — |")
    lines += ["", "| model, tokens | open → settled (ms) | window peak / kept (MiB) "
                  "| torch SDPA forward peak / kept (MiB) | torch SDPA forward (ms) |", "|---|---:|---:|---:|---:|"]
    for result in results:
        torch = result.get("torch")
        theirs = "—" if torch is None else f"{torch['peak']:.0f} / {torch['kept']:.0f}"
        their_ms = "—" if torch is None else f"{torch['ms']:.0f}"
        lines.append(f"| {result['model'].split(' ')[0]}, {result['n']} | {result['open_ms']:.0f} | "
                     f"{result['peak_mib']:.0f} / {result['kept_mib']:.0f} | {theirs} | {their_ms} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES, help=f'models and lengths, default "{DEFAULT_CASES}"')
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "TOKENS"), help=argparse.SUPPRESS)
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch's memory out")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one[0], int(args.one[1]), args.repeat)))
        return
    results = []
    for case in args.cases.split(";"):
        short, lengths = case.split(":")
        for n in lengths.split(","):
            result = child([__file__, "--one", SHORT[short], n, "--repeat", str(args.repeat)])
            result["torch"] = None if args.no_torch else torch_memory(SHORT[short], result["ids"])
            results.append(result)
            print(f"{short} {n}: done", file=sys.stderr, flush=True)
    print("\n".join(table(results)))


if __name__ == "__main__":
    main()
