"""How long a figure takes and how large its files are, beside anchors measured in the same run.

In-process: writing the heatmap figure as PNG, SVG, PDF and HTML at 12, 128 and 512 words (a toy
model, warm), beside a bare pyqtgraph ImageItem of the same n × n in a window of the figure's size
rendered to a PNG (what any pyqtgraph export pays). Samples of the figure and of its anchor are taken
in turns; the ratio is the median of the pairs' ratios. Fresh processes: `attention-explorer export`
to PNG, PDF and HTML beside `python -c "import numpy"`.

    python bench/bench_figures.py [--repeat 7]
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

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

LENGTHS = (12, 128, 512)  # the lengths the interactive page's size is quoted at
KB = 1000                 # sizes in kB and MB, as the sizes they are compared with are quoted
SUFFIXES = (".png", ".svg", ".pdf", ".html")


def sentence(words: int) -> str:
    return " ".join(("the cat sat on the mat " * (words // 6 + 1)).split()[:words])


def anchor_png(n: int, side: int, folder: Path) -> float:
    """A bare ImageItem of n × n in a view of the figure's size, rendered and written as PNG."""
    import numpy as np
    import pyqtgraph as pg
    from PySide6 import QtCore, QtGui

    started = time.perf_counter()
    view = pg.GraphicsLayoutWidget()
    view.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
    plot = view.addPlot()
    plot.addItem(pg.ImageItem(np.random.default_rng(0).random((n, n))))
    view.resize(side, side)
    view.show()
    image = QtGui.QImage(view.size(), QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QtGui.QPainter(image)
    view.render(painter)
    painter.end()
    image.save(str(folder / "anchor.png"))
    view.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    return (time.perf_counter() - started) * 1000


def figure_ms(controller, suffix: str, folder: Path) -> float:
    from attention_explorer.figure_controller import FigureController, capture_state
    from attention_explorer.figure_files import write_figure
    from attention_explorer.figure_options import FigureOptions
    from attention_explorer.headless import destroy_now

    started = time.perf_counter()
    copy = FigureController.copy_of(controller)
    write_figure(copy, capture_state(controller, "heatmap"), FigureOptions(), folder / f"figure{suffix}")
    destroy_now(copy)
    return (time.perf_counter() - started) * 1000


def in_process(repeat: int) -> None:
    from attention_explorer import engine
    from attention_explorer.controller import Controller
    from attention_explorer.figure import natural_size
    from attention_explorer.headless import ensure_application

    ensure_application()
    print("| words | file | figure ms | anchor ms | ratio | size |")
    print("|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in LENGTHS:
            controller = Controller(engine.load_builtin("cat-sat-on-mat"), sentence(n))
            side = natural_size("heatmap", n).width()
            for suffix in SUFFIXES:
                figure_ms(controller, suffix, folder)  # warm
                pairs = [(figure_ms(controller, suffix, folder), anchor_png(n, side, folder)) for _ in range(repeat)]
                mine = statistics.median(p[0] for p in pairs)
                anchor = statistics.median(p[1] for p in pairs)
                ratio = statistics.median(p[0] / p[1] for p in pairs)
                size = (folder / f"figure{suffix}").stat().st_size
                print(f"| {n} | {suffix[1:].upper()} | {mine:.0f} | {anchor:.0f} | {ratio:.1f}× "
                      f"| {size / KB:,.0f} kB |")
            controller.deleteLater()


def _wall(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def processes(repeat: int) -> None:
    program = [sys.executable, "-m", "attention_explorer"]
    print("\n| command | ms | `python -c \"import numpy\"` ms | ratio |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for suffix in (".png", ".pdf", ".html"):
            argv = [*program, "export", "--focus", "sat", "-o", f"x{suffix}"]
            pairs = [(_wall(argv, cwd), _wall([sys.executable, "-c", "import numpy"], cwd)) for _ in range(repeat)]
            mine = statistics.median(p[0] for p in pairs)
            anchor = statistics.median(p[1] for p in pairs)
            ratio = statistics.median(p[0] / p[1] for p in pairs)
            print(f"| export -o x{suffix} | {mine:.0f} | {anchor:.0f} | {ratio:.1f}× |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    in_process(args.repeat)
    processes(args.repeat)


if __name__ == "__main__":
    main()
