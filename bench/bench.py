"""Benchmarks of what a user feels, as medians, each beside an anchor measured in the same run.

Run: `python bench/bench.py` (offscreen; `--repeat N` for more samples, `--quick` for a short run).
Prints a Markdown table that goes into README.md. Timings vary with the machine, which is why each
figure has its anchor and ratio: a bare pyqtgraph ImageItem update of the same size for a redraw,
a bare one-plot pyqtgraph window for the first paint, `python -c "import numpy"` for a command.
Never assert on timings in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# Offscreen, on a desktop-sized screen: on the default 800 × 800 one, part of the 1400 × 900
# window would lie off-screen, where Qt skips painting and the numbers would flatter us.
_SCREEN = Path(tempfile.gettempdir()) / "attention-explorer-bench-screen.json"
_SCREEN.write_text('{"screens": [{"name": "bench", "x": 0, "y": 0, "width": 1920, "height": 1200, '
                   '"logicalDpi": 96, "dpr": 1}]}')
os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={_SCREEN}")

from PySide6 import QtCore, QtWidgets  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import processes  # noqa: E402  (bench/ is the script's folder, first on sys.path)
import settling  # noqa: E402
from anchors import BareImageWindow  # noqa: E402
from attention_explorer import engine  # noqa: E402
from attention_explorer.app import MainWindow  # noqa: E402
from attention_explorer.application import create_application  # noqa: E402
from attention_explorer.controller import Controller  # noqa: E402

LENGTHS = {10: (16, 8), 128: (50, 16), 512: (250, 60)}  # words: (edit budget, hover budget) in ms
FIRST_SWITCH_BUDGET_MS = 1000
FIRST_PAINT_BUDGET = 1.3  # × a bare one-plot pyqtgraph window
COMMAND_BUDGET = 1.5  # × python -c "import numpy"


@dataclass
class Row:
    name: str
    ms: float
    anchor: str
    anchor_ms: float
    budget: str
    met: bool | None  # None: no budget
    unit: str = "ms"
    ratio: float | None = None  # the median of paired ratios where samples were taken in pairs

    def markdown(self) -> str:
        ratio = self.ratio if self.ratio is not None else self.ms / self.anchor_ms if self.anchor_ms else None
        ratio = f"{ratio:.1f}×" if ratio is not None else "—"
        anchor_ms = f"{self.anchor_ms:.1f}" if self.anchor_ms else "—"
        met = {True: "yes", False: "**no**", None: "—"}[self.met]
        value = f"{self.ms:.1f}" if self.unit == "ms" else f"{self.ms:.0f} {self.unit}"
        return f"| {self.name} | {value} | {self.anchor} | {anchor_ms} | {ratio} | {self.budget} | {met} |"


def sentence_of(n: int, model: engine.ToyModel) -> str:
    words = sorted(model.vocabulary)
    return " ".join(words[(7 * i) % len(words)] for i in range(n))


def paired(samples: list[float], anchors: list[float]) -> tuple[float, float, float]:
    """Medians of both, and the median of their ratios sample by sample: each pair was taken at the
    same moment of a busy machine, so the ratio keeps steady where the times do not."""
    ratios = [a / b for a, b in zip(samples, anchors, strict=True)]
    return statistics.median(samples), statistics.median(anchors), statistics.median(ratios)


def timed_ms(action, i: int) -> float:
    started = time.perf_counter()
    action(i)
    return (time.perf_counter() - started) * 1000


def median_ms(action, repeat: int) -> float:
    return statistics.median(timed_ms(action, i) for i in range(repeat))


def settle() -> None:
    """Run the event loop until the last change has settled (bench/settling.py), as for the anchor."""
    settling.settle()


class PaintCounter(QtCore.QObject):
    """Counts paint events of every widget of the application."""

    def __init__(self):
        super().__init__()
        self.count = 0
        QtWidgets.QApplication.instance().installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QtCore.QEvent.Type.Paint:
            self.count += 1
        return False


def open_window(model: engine.ToyModel) -> MainWindow:
    """The window as the budgets are stated: 1400 × 900, every view open, the Steps dock shown."""
    window = MainWindow(Controller(model))
    window.resize(1400, 900)
    window.show()
    window.steps_dock.show()
    settle()
    return window


def redraw_rows(window: MainWindow, repeat: int) -> list[Row]:
    controller, model = window.controller, window.controller.model
    bare = BareImageWindow(window.heatmap.graphics.size())
    rows = []
    for n, (edit_budget, hover_budget) in LENGTHS.items():
        samples = repeat if n < 512 else max(5, repeat // 5)
        base = sentence_of(n, model)
        sentences = [base, base.rsplit(" ", 1)[0] + " dog"]  # a typed edit: the last word changes
        controller.set_sentence(sentences[1])
        settle()

        def edit(i, sentences=sentences):
            controller.set_sentence(sentences[i % 2])
            settle()

        def hover(i, n=n):
            controller.set_hovered((7 * i) % n)
            settle()

        anchor_name = f"bare ImageItem {n}×{n} set + painted"
        for name, action, budget in ((f"edit → every view redrawn, {n} words", edit, edit_budget),
                                     (f"hover → every view, {n} words", hover, hover_budget)):
            times, anchors = [], []
            for i in range(samples):  # the app and its anchor in turns
                anchors.append(timed_ms(lambda i, n=n: bare.update(n, i), i))
                times.append(timed_ms(action, i))
            ms, anchor, ratio = paired(times, anchors)
            rows.append(Row(name, ms, anchor_name, anchor, f"≤ {budget} ms", ms <= budget, ratio=ratio))
        controller.set_hovered(None)
    bare.close()
    return rows


def resting_mouse_rows(window: MainWindow, moves: int = 20) -> list[Row]:
    """Paints while the mouse moves by a pixel at a time within one word (a hand resting on it)."""
    controller = window.controller
    controller.set_sentence(sentence_of(10, controller.model))
    settle()
    focused = QtWidgets.QApplication.focusWidget()
    if focused is not None:
        focused.clearFocus()  # a blinking text cursor would paint on its own
    heat_view = window.heatmap.plot.getViewBox()
    arc_rect = window.arcs.label_scene_rect("left", 3)
    targets = {
        "arc diagram word": (window.arcs.graphics.viewport(), window.arcs.graphics.mapFromScene(arc_rect.center())),
        "heatmap cell": (window.heatmap.graphics.viewport(),
                         window.heatmap.graphics.mapFromScene(heat_view.mapViewToScene(QtCore.QPointF(3, 3)))),
        "chip": (window.chips.chips[3], window.chips.chips[3].rect().center()),
    }
    counter = PaintCounter()
    rows = []
    for name, (widget, point) in targets.items():
        QTest.mouseMove(widget, point + QtCore.QPoint(2, 2))
        QTest.qWait(40)
        QTest.mouseMove(widget, point)
        QTest.qWait(40)  # arrived: the word is hovered and drawn
        counter.count = 0
        for k in range(moves):
            QTest.qWait(15)  # pyqtgraph drops moves closer than 10 ms, as a hand's would not be
            QTest.mouseMove(widget, point + QtCore.QPoint(k % 2, (k // 2) % 2))
        QTest.qWait(40)
        rows.append(Row(f"mouse resting on one {name}, {moves} moves", counter.count, "—", 0,
                        "0 paints", counter.count == 0, unit="paints"))
        QTest.mouseMove(window.sentence_box, QtCore.QPoint(5, 5))  # leave the word
        QTest.qWait(40)
        controller.set_hovered(None)
    QtWidgets.QApplication.instance().removeEventFilter(counter)
    return rows


def first_switch_row(model: engine.ToyModel, runs: int) -> Row:
    """A fresh window, then a pasted 512-word sentence: every chip and label made for the first time."""
    samples = []
    anchors = []
    for _ in range(runs):
        window = open_window(model)
        bare = BareImageWindow(window.heatmap.graphics.size())
        anchors.append(median_ms(lambda i, bare=bare: bare.update(512, i), 1))
        bare.close()
        started = time.perf_counter()
        window.controller.set_sentence(sentence_of(512, model))
        settle()
        samples.append((time.perf_counter() - started) * 1000)
        window.close()
        window.deleteLater()
        settle()
    ms = statistics.median(samples)
    return Row("first switch to a 512-word sentence", ms, "bare ImageItem 512×512 first set + painted",
               statistics.median(anchors), f"≤ {FIRST_SWITCH_BUDGET_MS} ms", ms <= FIRST_SWITCH_BUDGET_MS)


def step_frame_row(window: MainWindow, frames: int = 100) -> Row:
    """One animation frame of the step timeline: fill one more cell of the scores of a 10-word
    sentence (the cell's arithmetic written out, its inputs outlined) and repaint."""
    from attention_explorer.engine.steps import step_index

    window.controller.set_sentence(sentence_of(10, window.controller.model))
    timeline = window.timeline
    timeline.go_to(step_index("scores"))
    timeline.play()
    timeline.timer.stop()  # the frames are driven here, one by one, not by the timer
    settle()
    samples = []
    while len(samples) < frames:
        if timeline.panel.filled() >= timeline.panel.unit_count():
            timeline.panel.set_filled(0)
        started = time.perf_counter()
        timeline.tick()
        settle()
        samples.append((time.perf_counter() - started) * 1000)
    timeline.pause()
    timeline.go_last()
    ms = statistics.median(samples)
    return Row("step timeline: one cell filled in + repaint, 10 words", ms, "—", 0, "≤ 16 ms", ms <= 16)


def engine_row(model: engine.ToyModel, repeat: int) -> Row:
    """The engine alone on 512 words, as the window runs it (one BLAS thread), beside the same with
    a BLAS thread per core."""
    sentence = sentence_of(512, model)

    ms = median_ms(lambda i: engine.run(model, sentence), repeat)  # the engine keeps BLAS to one thread
    with threadpool_limits(os.cpu_count(), user_api="blas"):
        default = median_ms(lambda i: engine.run(model, sentence), repeat)
    return Row("engine only: trace of 512 words, one BLAS thread", ms, "the same, a BLAS thread per core",
               default, "—", None)


def process_rows(runs: int) -> list[Row]:
    app, bare = processes.first_paint(runs)
    app_ms, bare_ms, ratio = paired(app, bare)
    rows = [Row("start → the window's first paint", app_ms, "bare one-plot pyqtgraph window", bare_ms,
                f"≤ {FIRST_PAINT_BUDGET}×", ratio <= FIRST_PAINT_BUDGET, ratio=ratio)]
    commands, numpy = processes.commands(runs)
    for name, times in commands.items():
        ms, numpy_ms, ratio = paired(times, numpy)
        rows.append(Row(name, ms, '`python -c "import numpy"`', numpy_ms, f"≤ {COMMAND_BUDGET}×",
                        ratio <= COMMAND_BUDGET, ratio=ratio))
    return rows


def quiet_platform_notes() -> None:
    """The offscreen platform warns about window hints it ignores, once per window: not our news."""
    def handler(mode, context, message):
        if "This plugin does not support" not in message:
            print(message, file=sys.stderr)
    QtCore.qInstallMessageHandler(handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30, help="samples per redraw figure (a fifth at 512 words)")
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per start-up or command figure")
    args = parser.parse_args()
    quiet_platform_notes()
    create_application()
    model = engine.load_builtin("cat-sat-on-mat")
    window = open_window(model)
    rows = redraw_rows(window, args.repeat) + resting_mouse_rows(window) + [step_frame_row(window)]
    window.close()
    rows.append(first_switch_row(model, runs=3))
    rows.append(engine_row(model, args.repeat))
    rows += process_rows(args.runs)
    print(f"| measurement (median; {args.repeat} samples, {args.runs} processes) | ms | anchor | anchor ms "
          "| ratio | budget | met |")
    print("|---|---:|---|---:|---:|---|---|")
    for row in rows:
        print(row.markdown())


if __name__ == "__main__":
    main()
