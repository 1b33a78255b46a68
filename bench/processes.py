"""Start-up and command-line figures, each from fresh Python processes beside its anchor.

The window's first paint is compared with a bare window holding one pyqtgraph plot (what any
pyqtgraph app pays), the commands with `python -c "import numpy"` (what any NumPy tool pays).
Runs of the app and of its anchor alternate, so a busy moment of the machine falls on both.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Both scripts print the milliseconds from their first line to the window painted on screen, then
# leave at once: how Python tears Qt down afterwards is not part of a start (and is tested elsewhere).
FIRST_PAINT_APP = """
import os, time
t0 = time.perf_counter()
from attention_explorer.gc_policy import pause_for_start
pause_for_start()  # as the command line does before it starts the window
from attention_explorer.application import create_application, show_splash
app = create_application()
splash = show_splash()
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
window = MainWindow(Controller())
window.resize(1400, 900)
splash.close()
window.show()
app.processEvents()
print((time.perf_counter() - t0) * 1000, flush=True)
os._exit(0)
"""

FIRST_PAINT_BARE = """
import os, time
t0 = time.perf_counter()
import pyqtgraph as pg
from PySide6 import QtWidgets
app = QtWidgets.QApplication([])
window = pg.PlotWidget()
window.plot([0, 1, 2], [0, 1, 0])
window.resize(1400, 900)
window.show()
app.processEvents()
print((time.perf_counter() - t0) * 1000, flush=True)
os._exit(0)
"""


# As on a user's machine, modules load from their compiled .pyc files: a shell that asks Python not
# to write them would have every start compile the app's modules afresh (100-200 ms) while
# pyqtgraph's and NumPy's, compiled when they were installed, load fast, and the ratios would lie.
_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _python(code: str) -> float:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_ENV)
    return float(out.stdout.split()[-1])


def _wall_ms(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, env=_ENV)
    return (time.perf_counter() - started) * 1000


def first_paint(runs: int) -> tuple[list[float], list[float]]:
    """Ms to the window's first paint, run by run: the app's, and a bare one-plot window's started
    right after it (pairs share the machine's moment: compare them pair by pair)."""
    _python(FIRST_PAINT_APP)  # compiles what is not compiled yet, as the first start after installing would
    app, bare = [], []
    for _ in range(runs):
        app.append(_python(FIRST_PAINT_APP))
        bare.append(_python(FIRST_PAINT_BARE))
    return app, bare


def commands(runs: int) -> tuple[dict[str, list[float]], list[float]]:
    """Wall ms of each headless command, run by run, and of `python -c "import numpy"` run before them."""
    command = [str(Path(sys.executable).with_name("attention-explorer"))]
    with tempfile.TemporaryDirectory() as folder:
        cases = {
            "`attention-explorer --version`": command + ["--version"],
            "`attention-explorer models`": command + ["models"],
            "`attention-explorer trace` (JSON to a file)": command + ["trace", "-o", f"{folder}/t.json"],
            "`attention-explorer export` to CSV": command + ["export", "--matrix", "weights",
                                                            "-o", f"{folder}/w.csv"],
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        numpy = []
        for _ in range(runs):
            numpy.append(_wall_ms([sys.executable, "-c", "import numpy"]))
            for name, argv in cases.items():
                times[name].append(_wall_ms(argv))
    return times, numpy
