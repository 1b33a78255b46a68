"""A seeded random walk through the real window: thousands of mixed actions a user (or a cat on the
keyboard) could do, checking after each that nothing broke.

Actions (walk_actions.py): odd text (emoji, right-to-left, combining marks, a 5,000-word sentence, invalid
text), every option, model and colour map through the window's own controls (combo boxes send
`activated`, as a user's pick does), hover and clicks with the mouse over chips, heatmap cells and labels,
arc ends and the model view, right-clicks, pins, steps, lessons, docks, model edits with junk values,
undo/redo, good and bad model files, good and bad export targets; real models (the tiny checkpoints
always, MiniLM and SmolLM2 where installed) opened from the model list, File ▸ Open model folder and
File ▸ Open, damaged copies of them from tests/damaged_models (a few per walk, some with FIFO weights;
each must end un-busy with one message or opened), their layers, heads, readings and ablations, a
cancelled load, a toy model chosen during a forward; a decoder's Generate with a few actions while it
writes (a head off, a hover, the scrubber, an edit, another model); tiny-bart's target, the part shown and its Write
button clicked with the mouse (after a count typed, during a run, or followed by an edit or a head off).
Checks (walk_checks.py): no exception reached the crash handler (after every action); the trace equals a
fresh engine run of the controller's state and the views show what the controller holds (every
CHECK_EVERY actions); the screen oracles — backing
store against a full repaint after every ORACLE_EVERY actions, every view against its fresh twin after
every TWIN_EVERY (a fresh twin of seven views takes twice as long as the backing store, and both
together were two thirds of a walk's time); memory stays bounded.

In CI (CI=true) four seeded walks of 500 actions run (2,000 actions); locally one of 400 (WALK_ACTIONS sets the
actions of each). Each walk runs in a process of its own, as a user's session does, and must exit with 0. A long run:

    QT_QPA_PLATFORM=offscreen python tests/test_random_walk.py --actions 20000 --seed 7

WALK_TRACE=1 prints every action after which the process holds 20 MB more than before it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6 import QtCore

from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.crash_handler import CrashHandler
from attention_explorer.engine.memory import release_free_memory
from walk_actions import Answers, Walk, quiet_dialogs, settle, wait_idle
from walk_checks import check_screen, check_state

CHECK_EVERY = 5
ORACLE_EVERY = int(os.environ.get("WALK_ORACLE_EVERY", 1))
TWIN_EVERY = int(os.environ.get("WALK_TWIN_EVERY", 2 * ORACLE_EVERY))
RSS_GROWTH_LIMIT_MB = 150  # above the resident size on a toy model after the first 10% of the walk


def rss_mb() -> float:
    """Resident memory of this process, from /proc (no psutil needed)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_walk(window: MainWindow, folder: Path, seed: int, actions: int, crash: CrashHandler, answers: Answers,
             report=None, walk_class: type[Walk] = Walk) -> dict:
    walk = walk_class(window, folder, seed, answers)
    rss = [rss_mb()]
    baseline = None
    started = time.perf_counter()
    # what stays: resident memory on a toy model once the worker has ended its jobs, every 100 actions (a
    # sum of each kind of action's rises named the actions that open real models or make large traces,
    # whose memory comes back a moment later, never what stays)
    on_toy: list[tuple[int, int]] = []
    for number in range(1, actions + 1):
        before = rss_mb()
        name = walk.step()
        if os.environ.get("WALK_TRACE") and rss_mb() - before > 20:
            c = window.controller
            print(f"  +{rss_mb() - before:.0f} MB at {number} {name}: {c.model.name} {len(c.words)} words "
                  f"step {c.step} lesson {getattr(window.lessons_window, 'current_key', lambda: None)()}", flush=True)
        assert crash.count == 0, f"action {number} ({name}) raised: {crash.log_path.read_text()[-3000:]}"
        if number % CHECK_EVERY == 0:
            check_state(window)
        if number % ORACLE_EVERY == 0:
            check_screen(window, f"action {number} ({name}, seed {seed})", twins=number % TWIN_EVERY == 0)
        if number % 100 == 0 or number == actions:
            _let_memory_go(window.controller)
            rss.append(rss_mb())
            # measured on toy models only: an open real model holds its weights (SmolLM2: 550 MB) by right
            if not window.controller.is_real:
                if baseline is None and number >= actions // 10:
                    baseline = rss[-1]
                elif baseline is not None and rss[-1] - baseline >= RSS_GROWTH_LIMIT_MB:
                    # what the allocator keeps after a burst (a 1,024-word trace, an export) is not held
                    # by the app: measured again once every cycle is collected and the free part trimmed
                    gc.collect()
                    release_free_memory()
                    rss[-1] = rss_mb()
                on_toy.append((number, round(rss[-1])))
                assert baseline is None or rss[-1] - baseline < RSS_GROWTH_LIMIT_MB, (
                    f"memory grew {baseline:.0f} → {rss[-1]:.0f} MB; on a toy model at (action, MB): {on_toy[-12:]}; "
                    f"real models still held: {_real_model_holders()}")
            if report:
                report(number, rss[-1], time.perf_counter() - started)
    return {"actions": actions, "seconds": time.perf_counter() - started, "rss_start_mb": rss[0],
            "rss_max_mb": max(rss), "rss_end_mb": rss[-1], "counts": dict(walk.counts),
            "refused_edits": walk.expected_errors, "rss_on_toy_models_mb": on_toy}


def _let_memory_go(controller: Controller) -> None:
    """Wait while the worker ends the jobs it was told to drop, then while the controller is about to
    hand a closed model's memory back (a moment after the close, RELEASE_AFTER_MS). A cancelled or
    superseded load runs on to its next progress report with its real model half read, while the window
    already shows a toy model: measured then, that model read as the toy model's growth; measured before
    the release, so did the memory a user gets back a second later."""
    from PySide6.QtTest import QTest

    if controller._runner is not None:
        controller._runner.wait(30_000)
        QTest.qWait(100)  # its outcome taken off the queue by the runner's timer
    settle()
    deadline = time.perf_counter() + 5
    while controller._release_timer.isActive() and time.perf_counter() < deadline:
        QTest.qWait(50)


def _real_model_holders() -> list[str]:
    """What keeps a closed real model's weights alive: from each ModelWeights, the first chain of
    referrers (not this function's own lists and frames) up to twelve steps out, by type."""
    import types

    from attention_explorer.engine.pretrained.weights import ModelWeights

    gc.collect()
    everything = gc.get_objects()
    found = []
    alive = [o for o in everything if isinstance(o, ModelWeights)]
    for weights in alive:
        chain, obj, seen = [], weights, {id(everything), id(alive)}
        for _ in range(12):
            holders = [r for r in gc.get_referrers(obj) if id(r) not in seen and r is not found
                       and not isinstance(r, types.FrameType)]
            seen.add(id(holders))
            if not holders:
                break
            obj = next((h for h in holders if not isinstance(h, list)), holders[0])  # lists: often ours
            seen.add(id(obj))
            name = type(obj).__name__
            if isinstance(obj, dict):
                name += str([key for key, value in obj.items() if value is not None][:4])
            elif isinstance(obj, types.FunctionType):
                name += f"({obj.__qualname__})"
            elif isinstance(obj, types.GeneratorType):
                name += f"({obj.gi_code.co_qualname} in {obj.gi_code.co_filename.rsplit('/', 1)[-1]}, " \
                        f"{'running' if obj.gi_frame is not None else 'done'})"
            elif isinstance(obj, list):
                name += f"[{len(obj)}: {', '.join(type(item).__name__ for item in obj[:3])}]"
            chain.append(name)
        found.append(" ← ".join(chain))
    del everything, alive
    return found[:4]


IN_CI = os.environ.get("CI") == "true"
# CI: four walks of 500 actions (2,000 in all); locally one of 400. A walk of 400 takes about 210 s here,
# and a shared CI machine ran one of 500 past the suite's 300 s a test: a walk has a limit of its own, and
# its waits on the worker (wait_idle) are what find a hang.
SEEDS = [1, 2, 3, 4] if IN_CI else [1]
WALK_TIMEOUT_S = 900


def _actions_for_this_run() -> int:
    return int(os.environ.get("WALK_ACTIONS", 500 if IN_CI else 400))


@pytest.mark.timeout(WALK_TIMEOUT_S)
@pytest.mark.parametrize("seed", SEEDS)
def test_random_walk_through_the_window(tmp_path, seed):
    """Each walk is a session of its own, in a process of its own, as a user's is: what the suite's
    earlier tests left in the test process (hundreds of windows, widgets waiting for deletion) is no
    part of it, a crash fails this walk (with Python's stack of every thread) instead of ending the
    suite, and the process must also exit cleanly."""
    actions = _actions_for_this_run()
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    run = subprocess.run([sys.executable, "-X", "faulthandler", str(Path(__file__)), "--actions", str(actions),
                          "--seed", str(seed), "--quiet"],
                         env=env, capture_output=True, text=True, timeout=WALK_TIMEOUT_S - 30)
    assert run.returncode == 0, f"the walk's process exited with {run.returncode}:\n{run.stderr[-6000:]}"
    result = json.loads(run.stdout)
    assert result["actions"] == actions
    assert result["counts"]["set_text"] > 0 and result["refused_edits"] > 0
    # each seed reaches the encoder–decoder's Write (seed 1: 13 presses in 400 actions)
    assert result["counts"].get("write_target, pressed", 0) > 0


def _make_window(folder: Path) -> MainWindow:
    settings = QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    settings.setValue("view/colormap", "viridis")  # not a first launch: no tour
    window = MainWindow(Controller(background=True), settings)  # as the app makes it
    window.resize(1280, 820)
    window.show()
    (folder / "walk").mkdir()
    return window


def _print_progress(actions: int, rss: float, seconds: float) -> None:
    print(f"{actions:>6} actions  {rss:6.0f} MB  {seconds:6.0f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description="A long random walk through the window.")
    parser.add_argument("--actions", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pointer", choices=("qtest", "x11"), default="qtest",
                        help="x11: move the real pointer with xdotool (on an X server, with QT_QPA_PLATFORM=xcb)")
    parser.add_argument("--quiet", action="store_true", help="print only the result (JSON), no progress")
    args = parser.parse_args()
    walk_class = Walk
    if args.pointer == "x11":
        from walk_x11 import PointerWalk

        walk_class = PointerWalk
    import tempfile

    from attention_explorer.application import create_application

    app = create_application()
    # Carets stay on rather than blink. Qt's own line edit, holding right-to-left words, leaves a pixel
    # of the little arrow it draws on a blinking caret behind when the caret goes off (a bare QLineEdit
    # does it too): the walk checks the app's drawing, not that (seed 106, action 963).
    app.setCursorFlashTime(0)
    with tempfile.TemporaryDirectory() as folder:
        answers = Answers()
        quiet_dialogs(setattr, answers)
        window = _make_window(Path(folder))
        crash = CrashHandler(Path(folder) / "log").install()
        try:
            result = run_walk(window, Path(folder) / "walk", args.seed, args.actions, crash, answers,
                              report=None if args.quiet else _print_progress,
                              walk_class=walk_class)
        finally:
            crash.uninstall()  # a failed check is printed as usual, not only logged
            window.controller.cancel()
            wait_idle(window.controller)
        window.close()
        print(json.dumps(result, indent=1))
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
