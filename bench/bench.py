"""Benchmarks of what a user feels, as medians: recompute + redraw after an edit, hover, arcs, start-up.

Run: `python bench/bench.py` (offscreen; add `--repeat N` for more samples). Prints a Markdown
table that goes into README.md. Timings vary with the machine; never assert on them in tests.
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

# Offscreen, on a desktop-sized screen: on the default 800 × 800 one, part of the 1400 × 900
# window would lie off-screen, where Qt skips painting and the numbers would flatter us.
_SCREEN = Path(tempfile.gettempdir()) / "attention-explorer-bench-screen.json"
_SCREEN.write_text('{"screens": [{"name": "bench", "x": 0, "y": 0, "width": 1920, "height": 1200, '
                   '"logicalDpi": 96, "dpr": 1}]}')
os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={_SCREEN}")

from PySide6 import QtWidgets  # noqa: E402

from attention_explorer import engine  # noqa: E402
from attention_explorer.app import MainWindow  # noqa: E402
from attention_explorer.application import create_application  # noqa: E402
from attention_explorer.controller import Controller  # noqa: E402
from attention_explorer.engine.steps import step_index  # noqa: E402


def sentence_of(n: int, model: engine.ToyModel) -> str:
    words = sorted(model.vocabulary)
    return " ".join(words[(7 * i) % len(words)] for i in range(n))


def median_ms(action, repeat: int) -> float:
    samples = []
    for i in range(repeat):
        started = time.perf_counter()
        action(i)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def bench_window(repeat: int) -> list[tuple[str, float, str]]:
    app = create_application()
    model = engine.load_builtin("cat-sat-on-mat")
    controller = Controller(model)
    window = MainWindow(controller)
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    rows = []
    for n, budget in ((10, "16 ms"), (128, "50 ms")):
        base = sentence_of(n, model)
        sentences = [base, base.rsplit(" ", 1)[0] + " dog"]  # a typed edit: the last word changes

        def edit(i, sentences=sentences):
            controller.set_sentence(sentences[i % 2])
            app.processEvents()  # paints every widget the change made dirty, as the event loop would
        rows.append((f"edit → every view redrawn, {n} words", median_ms(edit, repeat), budget))
    controller.set_sentence(sentence_of(10, model))
    app.processEvents()

    def hover(i):
        controller.set_hovered(i % 10)
        app.processEvents()
    rows.append(("hover → highlight in every view, 10 words", median_ms(hover, repeat), "8 ms"))

    controller.set_hovered(None)  # a hovered word keeps only its own arcs
    controller.set_sentence(sentence_of(64, model))
    window.arcs.strongest.setValue(0)  # every one of the 64 × 64 × 2 lines
    app.processEvents()
    rows.append(("arc diagram repaint, 64 words × 2 heads, every arc over 0.5 % (6,564 lines)",
                 median_ms(lambda i: window.arcs.graphics.viewport().repaint(), repeat), "—"))
    rows.append(("engine only: trace of 128 words",
                 median_ms(lambda i: engine.run(model, sentence_of(128, model)), repeat), "—"))
    window.close()
    return rows


def bench_steps(frames: int = 100) -> list[tuple[str, float, str]]:
    """One animation frame of the step timeline, in the window: fill one more cell of the scores of a
    10-word sentence (100 cells; the cell's arithmetic written out, its inputs outlined) and repaint."""
    app = create_application()
    model = engine.load_builtin("cat-sat-on-mat")
    window = MainWindow(Controller(model, sentence_of(10, model)))
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    timeline = window.timeline
    timeline.go_to(step_index("scores"))
    timeline.play()
    timeline.timer.stop()  # the frames are driven here, one by one, not by the timer
    samples = []
    while len(samples) < frames:
        if timeline.panel.filled() >= timeline.panel.unit_count():
            timeline.panel.set_filled(0)
        started = time.perf_counter()
        timeline.tick()
        app.processEvents()  # paints what the tick changed, as the event loop would
        samples.append((time.perf_counter() - started) * 1000)
    window.close()
    return [("step timeline: one cell filled in + repaint, 10 words", statistics.median(samples), "16 ms")]


STARTUP_APP = """
import time
t0 = time.perf_counter()
from attention_explorer.application import create_application, show_splash
app = create_application()
show_splash()
print((time.perf_counter() - t0) * 1000)  # the splash has been painted
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from PySide6 import QtCore
w = MainWindow(Controller())
w.show()
QtCore.QTimer.singleShot(0, lambda: (print((time.perf_counter() - t0) * 1000), app.quit()))
app.exec()
"""

STARTUP_BARE = """
import time
t0 = time.perf_counter()
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication([])
w = QtWidgets.QMainWindow(); w.resize(1280, 820); w.show()
QtCore.QTimer.singleShot(0, lambda: (print((time.perf_counter() - t0) * 1000), app.quit()))
app.exec()
"""


def bench_startup(repeat: int) -> list[tuple[str, float, str]]:
    def run(code: str) -> list[float]:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return [float(line) for line in out.stdout.split()]
    runs = max(3, repeat // 10)
    app = [run(STARTUP_APP) for _ in range(runs)]
    bare = statistics.median(run(STARTUP_BARE)[0] for _ in range(runs))
    return [("start → the splash painted (from the first import)", statistics.median(t[0] for t in app),
             "close to bare"),
            ("start → the window's first paint (from the first import)", statistics.median(t[1] for t in app), "—"),
            ("start → first paint, a bare PySide6 window", bare, "—")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    rows = bench_window(args.repeat) + bench_steps() + bench_startup(args.repeat)
    print(f"| measurement (median of {args.repeat}) | ms | target |")
    print("|---|---:|---|")
    for name, ms, target in rows:
        print(f"| {name} | {ms:.1f} | {target} |")
    QtWidgets.QApplication.instance().quit()


if __name__ == "__main__":
    main()
