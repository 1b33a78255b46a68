"""Where an edit or a hover spends its time, view by view: the slots that react to the controller and
the paints that follow, measured in the window the bench uses.

Run: `python bench/where_time_goes.py edit 10` (or `hover 128`, ...). Prints milliseconds per
action, averaged over `--repeat` actions. A budget of bench.py that is missed starts here: it
names the view (or the paint) to open with cProfile next.
"""

from __future__ import annotations

import argparse
import functools
import time

import pyqtgraph as pg
from PySide6 import QtWidgets

import bench  # sets up the offscreen screen first
from attention_explorer import engine
from attention_explorer.application import create_application
from attention_explorer.controller import Controller
from attention_explorer.views import arc_diagram, heatmap, row_bars, step_timeline, token_chips

SLOTS = {  # the methods the views run when the controller announces a change
    heatmap.QtHeatmap: ("_redraw", "_on_focus_changed"),
    arc_diagram.QtArcDiagram: ("_rebuild", "_show_focus"),
    row_bars.QtRowBars: ("_redraw",),
    token_chips.QtTokenChips: ("_rebuild", "_restyle"),
    step_timeline.QtStepTimeline: ("_refresh",),
}


class Stopwatch:
    def __init__(self):
        self.seconds: dict[str, float] = {}

    def wrap(self, owner: type, name: str, label) -> None:
        """Time every call of owner.name under label (a string, or a function of the instance)."""
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(instance, *args, **kwargs):
            started = time.perf_counter()
            try:
                return original(instance, *args, **kwargs)
            finally:
                key = label(instance) if callable(label) else label
                self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - started

        setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("edit", "hover"))
    parser.add_argument("words", type=int)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    bench.quiet_platform_notes()
    app = create_application()
    watch = Stopwatch()
    views: dict[int, str] = {}
    # Wrapped before the window exists: Qt calls a Python override it found when the object was made.
    watch.wrap(pg.GraphicsView, "paintEvent", lambda view: f"paint: {views.get(id(view), 'other')} view")
    watch.wrap(Controller, "_recompute", "controller: engine + every view's slots")
    for view_class, names in SLOTS.items():
        for name in names:
            watch.wrap(view_class, name, f"  slot {view_class.__name__}.{name}")

    model = engine.load_builtin("cat-sat-on-mat")
    window = bench.open_window(model)
    views.update({id(window.heatmap.graphics): "heatmap", id(window.row_bars.graphics): "bars",
                  id(window.arcs.graphics): "arcs"})
    controller = window.controller
    base = bench.sentence_of(args.words, model)
    sentences = [base, base.rsplit(" ", 1)[0] + " dog"]
    controller.set_sentence(sentences[1])
    bench.settle()

    def act(i: int) -> None:
        if args.action == "edit":
            controller.set_sentence(sentences[i % 2])
        else:
            controller.set_hovered((7 * i) % args.words)

    for i in range(3):  # warm up
        act(i)
        bench.settle()
    watch.seconds.clear()
    total = painting = 0.0
    for i in range(args.repeat):
        started = time.perf_counter()
        act(i)
        changed = time.perf_counter()
        QtWidgets.QApplication.processEvents()
        total += time.perf_counter() - started
        painting += time.perf_counter() - changed
    per = 1000 / args.repeat
    print(f"{args.action}, {args.words} words: {total * per:.1f} ms, of which the event loop "
          f"(paints, layouts) {painting * per:.1f} ms")
    for label, seconds in sorted(watch.seconds.items(), key=lambda item: -item[1]):
        print(f"  {label}: {seconds * per:.2f} ms")
    app.quit()


if __name__ == "__main__":
    main()
