"""The head census against its budgets, each figure beside an anchor measured in the same run.

Run: `python bench/bench_census.py` (`--repeat N` pairs per figure, `--texts N` user texts, `--quick`
for a short run; `--skip memory,view` leaves sections out; `--profile` shows where the census window's
redraws and hovers spend their time). Needs the two model packages. Prints a
Markdown table. Never asserted in tests.

- the built-in battery on MiniLM (≤ 10 s) and SmolLM2 (≤ 60 s) on one core, beside the same texts'
  forwards alone (model.run on each), timed in turns;
- 1,000 user texts of at most 128 tokens on MiniLM: the census beside the same forwards alone
  (budget ≤ 1.2×);
- memory: resident memory above the open model, at its peak during a census of 100 and of 1,000
  texts on MiniLM (100 and 300 on SmolLM2), each in a fresh process (flat: the two agree; budget
  ≤ 50 MB at 1,000);
- weight against norm-based attention: the share landing on a model's specials, each row's share
  averaged over rows, heads and layers;
- the census window (offscreen): opening it, showing a result, and a hover read out, beside a bare
  pyqtgraph ImageItem of the same rows × columns set and painted (budget: a frame, 16 ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MINILM, SMOLLM = "MiniLM-L6 (encoder)", "SmolLM2-135M (decoder)"
MAX_TOKENS = 128
CHUNK = 50   # user texts timed at a time, census and forwards alone in turns


def one_core() -> str:
    """Pin this process to one core, as the budgets are stated; say which."""
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"core {core}"
    return "all cores (no affinity on this system)"


def seconds(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def in_turns(first, second, repeat: int) -> tuple[list[float], list[float]]:
    a, b = [], []
    for _ in range(repeat):
        a.append(seconds(first))
        b.append(seconds(second))
    return a, b


def row(what: str, value: str, anchor: str, anchor_value: str, ratio: str, budget: str, met) -> str:
    shown = "—" if met is None else ("yes" if met else "no")
    return f"| {what} | {value} | {anchor} | {anchor_value} | {ratio} | {budget} | {shown} |"


def forwards_alone(model, source):
    def run():
        for item in source.texts():
            model.run(item.text)
    return run


def battery_rows(repeat: int) -> list[str]:
    from attention_explorer.engine.census import builtin_battery, run_census, subject_for
    from attention_explorer.engine.pretrained import open_pretrained

    rows = []
    for name, budget in ((MINILM, 10.0), (SMOLLM, 60.0)):
        model = open_pretrained(name)
        subject = subject_for(model)
        source = builtin_battery(subject)
        run_census(subject, source)  # warm: the first pass loads the tokenizer's and BLAS's caches
        census, alone = in_turns(lambda subject=subject, source=source: run_census(subject, source),
                                 forwards_alone(model, source), repeat)
        ratios = [c / a for c, a in zip(census, alone, strict=True)]
        median = statistics.median(census)
        rows.append(row(f"{name}: built-in battery ({source.count} texts), one core", f"{median:.2f} s",
                        "the same forwards alone", f"{statistics.median(alone):.2f} s",
                        f"{statistics.median(ratios):.2f}×", f"≤ {budget:.0f} s", median <= budget))
    return rows


def user_texts(model, count: int, seed: int = 0) -> str:
    """`count` texts of 8 to 128 tokens made of the battery's sentences, one per line."""
    import numpy as np

    from attention_explorer.engine.census import SENTENCES

    rng = np.random.default_rng(seed)
    lines = []
    while len(lines) < count:
        words, target = [], int(rng.integers(8, MAX_TOKENS + 1))
        while True:
            candidate = words + SENTENCES[int(rng.integers(len(SENTENCES)))].split()
            if len(model.tokenizer.encode(" ".join(candidate)).ids) > target:
                break
            words = candidate
        if not words:  # a first sentence longer than the target: cut it by words
            words = SENTENCES[int(rng.integers(len(SENTENCES)))].split()[:6]
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


def user_texts_rows(count: int, repeat: int, folder: Path) -> list[str]:
    """The census and the forwards alone over the same texts, in chunks of CHUNK texts taken in the
    order census, forwards, forwards, census (…): a machine that slows down or speeds up during the
    run then weighs on both alike. The ratio is of the totals, one per repeat."""
    from attention_explorer.engine.census import read_texts_file, run_census, subject_for
    from attention_explorer.engine.pretrained import open_pretrained

    model = open_pretrained(MINILM)
    subject = subject_for(model)
    lines = user_texts(model, count).splitlines()
    chunks = []
    for start in range(0, count, CHUNK):
        path = folder / f"texts-{start}.txt"
        path.write_text("\n".join(lines[start:start + CHUNK]) + "\n", encoding="utf-8")
        chunks.append(read_texts_file(path))
    run_census(subject, chunks[0])  # warm
    census_totals, alone_totals = [], []
    for _ in range(repeat):
        census = alone = 0.0
        for index, chunk in enumerate(chunks):
            pair = [lambda chunk=chunk: run_census(subject, chunk), forwards_alone(model, chunk)]
            first, second = (pair if index % 2 == 0 else pair[::-1])
            a, b = seconds(first), seconds(second)
            census += a if index % 2 == 0 else b
            alone += b if index % 2 == 0 else a
        census_totals.append(census)
        alone_totals.append(alone)
    ratio = statistics.median(c / a for c, a in zip(census_totals, alone_totals, strict=True))
    return [row(f"{MINILM}: {count:,} user texts of ≤ {MAX_TOKENS} tokens", f"{statistics.median(census_totals):.1f} s",
                "the same forwards alone", f"{statistics.median(alone_totals):.1f} s", f"{ratio:.2f}×", "≤ 1.2×",
                ratio <= 1.2)]


MEMORY_CHILD = """
import sys, threading, time
from pathlib import Path

def resident_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2 ** 20

from attention_explorer.engine.census import read_texts_file, run_census, subject_for
from attention_explorer.engine.pretrained import open_pretrained
model = open_pretrained(sys.argv[1])
model.run("The cat sat on the mat.")
source = read_texts_file(sys.argv[2])
subject = subject_for(model)
before = resident_mib()
peak = [before]
done = threading.Event()

def watch():
    while not done.is_set():
        peak[0] = max(peak[0], resident_mib())
        time.sleep(0.005)

watcher = threading.Thread(target=watch)
watcher.start()
run_census(subject, source)
done.set()
watcher.join()
print(before, max(peak[0], resident_mib()))
"""


def memory_rows(folder: Path) -> list[str]:
    if not Path("/proc/self/statm").exists():
        return ["| memory | — | — | — | — | ≤ 50 MB | — (needs /proc) |"]
    from attention_explorer.engine.pretrained import open_pretrained

    rows = []
    # SmolLM2's forward is ten times MiniLM's: 100 and 300 texts say whether its memory stays flat too
    for name, counts in ((MINILM, (100, 1000)), (SMOLLM, (100, 300))):
        model = open_pretrained(name)
        for count in counts:
            path = folder / f"memory-{count}.txt"
            path.write_text(user_texts(model, count, seed=count), encoding="utf-8")
            out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, name, str(path)], capture_output=True,
                                 text=True, check=True)
            before, peak = (float(x) for x in out.stdout.split()[-2:])
            rise = peak - before
            last = count == counts[-1]
            rows.append(row(f"{name}: resident memory above the open model, census of {count:,} texts",
                            f"{rise:.1f} MiB", "the open model", f"{before:.0f} MiB", "—",
                            f"≤ 50 MB at {count:,}" if last else "(flat: as at the most texts)",
                            rise * 1.048576 <= 50 if last else None))
    return rows


NORM_SENTENCE = "The cat sat on the mat because it was tired."


def norm_rows() -> list[str]:
    """How much of the weight and of the norm-based reading lands on a model's specials ([CLS] and
    [SEP]; a decoder's first token): each row's share of it, averaged over the rows, heads and layers
    (over the layers' summed reading, for "summed")."""
    import numpy as np

    from attention_explorer.engine.census import pretrained_norm_attention
    from attention_explorer.engine.pretrained import open_pretrained

    rows = []
    for name in (MINILM, SMOLLM):
        model = open_pretrained(name)
        ptrace = model.run(NORM_SENTENCE)
        specials = np.flatnonzero(ptrace.special) if not model.is_decoder else np.array([0])
        weight, per_head, summed = [], [], []
        def share(a, specials=specials):
            return (a[..., specials].sum(-1) / np.maximum(a.sum(-1), 1e-12)).mean()

        for layer in range(model.n_layers):
            reading = pretrained_norm_attention(ptrace, layer)
            weight.append(share(ptrace.layer_weights(layer)))
            per_head.append(share(reading.per_head))
            summed.append(share(reading.summed))
        what = "[CLS] and [SEP]" if not model.is_decoder else "the first token"
        rows.append(row(f"{name}: share on {what}, weight → norm per head (summed over heads)",
                        f"{np.mean(weight):.0%} → {np.mean(per_head):.0%} ({np.mean(summed):.0%})",
                        "each row's share, averaged", f"“{NORM_SENTENCE}”", "—", "—", None))
    return rows


def view_rows(repeat: int, profile: bool = False) -> list[str]:
    # offscreen on a desktop-sized screen (the tests' own): on the default 800 × 800 one the census window
    # beside the main window would be off the screen, where no mouse event arrives
    screen = Path(__file__).parents[1] / "tests" / "offscreen-screen.json"
    os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={screen}")
    from PySide6 import QtCore
    from PySide6.QtTest import QTest

    sys.path.insert(0, str(Path(__file__).parent))
    from anchors import BareImageWindow
    from attention_explorer.app import MainWindow
    from attention_explorer.application import create_application
    from attention_explorer.controller import Controller
    from attention_explorer.engine.census import builtin_battery, run_census, subject_for
    from attention_explorer.engine.pretrained import open_pretrained
    from attention_explorer.views.census_menu import PREBUILD_AFTER_MS

    app = create_application()
    model = open_pretrained(SMOLLM)
    subject = subject_for(model)
    result = run_census(subject, builtin_battery(subject))
    controller = Controller()
    controller.open_model(SMOLLM)
    window = MainWindow(controller)
    window.setGeometry(0, 0, 900, 820)
    window.show()
    app.processEvents()
    launcher = window.pretrained.census
    QTest.qWait(PREBUILD_AFTER_MS + 500)  # as a user would find it: the app idle a moment after its start

    def open_window():
        launcher.open()
        launcher.window.setGeometry(1000, 0, 900, 700)
        launcher.window.repaint()
        app.processEvents()

    open_ms = seconds(open_window) * 1000  # the first opening shows the window built while idle
    launcher.window.hide()
    app.processEvents()
    reopen_ms = seconds(open_window) * 1000
    census = launcher.window.census
    plot = launcher.window.view.plot

    def show_result(i):
        census._result = result          # noqa: SLF001 - a result as the worker would hand it over
        census.set_measure(("induction_stripe", "previous")[i % 2])  # redraws the grid and the list
        plot.graphics.viewport().repaint()
        app.processEvents()

    cells = ((18, 6), (17, 4))

    def hover(i):
        layer, head = cells[i % 2]
        point = plot.graphics.mapFromScene(plot.view.mapViewToScene(QtCore.QPointF(head, layer)))
        QTest.mouseMove(plot.graphics.viewport(), point)
        launcher.window.view.readout.repaint()
        app.processEvents()

    bare = BareImageWindow(plot.graphics.size())
    show, hovers, anchor = [], [], []
    for i in range(repeat * 5):
        show.append(seconds(lambda i=i: show_result(i)) * 1000)
        time.sleep(0.02)                 # pyqtgraph drops moves closer than 10 ms
        hovers.append(seconds(lambda i=i: hover(i)) * 1000)
        anchor.append(seconds(lambda i=i: bare.update(30, i)) * 1000)
    if profile:  # where a redraw's and a hover's time goes
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runctx("for i in range(20): show_result(i); hover(i)", globals(), locals())
        pstats.Stats(profiler).sort_stats("cumtime").print_stats(25)
    readout = launcher.window.view.readout.text()
    bare.close()
    a = statistics.median(anchor)
    return [
        row("census window: first open (built while the app was idle)", f"{open_ms:.0f} ms",
            "bare ImageItem 30 × 30 set + painted", f"{a:.1f} ms", f"{open_ms / a:.1f}×", "≤ 16 ms", open_ms <= 16),
        row("census window: opened again", f"{reopen_ms:.1f} ms", "bare ImageItem 30 × 30 set + painted",
            f"{a:.1f} ms", f"{reopen_ms / a:.1f}×", "≤ 16 ms", reopen_ms <= 16),
        row("census window: a result shown (30 × 9 grid, ranked list)", f"{statistics.median(show):.1f} ms",
            "bare ImageItem 30 × 30 set + painted", f"{a:.1f} ms", f"{statistics.median(show) / a:.1f}×",
            "≤ 16 ms", statistics.median(show) <= 16),
        row(f"census window: hover read out (“{readout[:24]}…”)", f"{statistics.median(hovers):.1f} ms",
            "bare ImageItem 30 × 30 set + painted", f"{a:.1f} ms", f"{statistics.median(hovers) / a:.1f}×",
            "≤ 16 ms", statistics.median(hovers) <= 16),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="one pair each, 100 user texts")
    parser.add_argument("--profile", action="store_true", help="profile the census window's redraws and hovers")
    parser.add_argument("--skip", default="", help="sections to leave out: battery,texts,memory,norm,view")
    args = parser.parse_args()
    repeat, count = (1, 100) if args.quick else (args.repeat, args.texts)
    skip = set(filter(None, args.skip.split(",")))
    print(f"Census bench on {one_core()}, {repeat} pair(s) per figure\n")
    print("| measure | value | anchor | anchor value | ratio | budget | met |")
    print("|---|---:|---|---:|---:|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        sections = {"battery": lambda: battery_rows(repeat), "texts": lambda: user_texts_rows(count, repeat,
                                                                                               Path(folder)),
                    "memory": lambda: memory_rows(Path(folder)), "norm": norm_rows,
                    "view": lambda: view_rows(repeat, args.profile)}
        for name, section in sections.items():
            if name not in skip:
                for line in section():
                    print(line, flush=True)
    os._exit(0)  # at once: how Python tears the windows down afterwards is no part of the figures


if __name__ == "__main__":
    main()
