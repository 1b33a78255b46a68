"""A seeded random walk through the real window: thousands of mixed actions a user (or a cat on the
keyboard) could do, checking after every few that nothing broke.

Actions: odd text (emoji, right-to-left, combining marks, a 5,000-word sentence, invalid text), every
option, model and colour map through the window's own controls, hover, pin, steps, lessons, model
edits with junk values, undo/redo, good and bad model files, good and bad export targets. Checks: no
exception reached the crash handler, the trace equals a fresh engine run of the controller's state,
the views show what the controller holds, and memory stays bounded.

In CI (CI=true) a run is 2,000 actions; locally 400 (WALK_ACTIONS overrides both). A long run:

    QT_QPA_PLATFORM=offscreen python tests/test_random_walk.py --actions 20000 --seed 7

WALK_TRACE=1 prints every action after which the process holds 20 MB more than before it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.crash_handler import CrashHandler
from attention_explorer.labs.lesson_list import LESSONS
from attention_explorer.views import theme

CHECK_EVERY = 5
RSS_GROWTH_LIMIT_MB = 150  # above the resident size after the first 10% of the walk

ODD_TEXTS = (
    "the cat sat on the mat", "🐱 the cat zebra 🐶", "THE CAT SAT", "straße the dog", "the ca\u0301t sat",
    "שלום the cat עולם", "مرحبا the mat", "the  cat\tsat\non the mat", "", "   ", "!!! ??? ...",
    "the 👩‍👩‍👧 cat", "it's the cat's mat", "the cat \udcff sat", "ǅ the ﬁsh", "the cat\u200b sat",
    "a" * 300, "the " * 60, "x" * 40_000,
)
JUNK_VALUES = ("abc", "nan", "inf", "-inf", "1e999", "", " ", "1,5", "0x10", "½", "0.5", "-2", "3", "1e-300")
JUNK_WORDS = ("zebra", "", "dog!", "a-b", "Cat", "the", "ca\u0301t", "🐱", "x" * 200, "new word")


def settle() -> None:
    """What the event loop would do next: handle posted events, and delete the objects whose
    deleteLater() ran (outside an event loop processEvents() never deletes them)."""
    QtWidgets.QApplication.processEvents()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)


def rss_mb() -> float:
    """Resident memory of this process, from /proc (no psutil needed)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Walk:
    """One walk: `step()` does one random action; `check()` asserts the window is consistent."""

    def __init__(self, window: MainWindow, folder: Path, seed: int):
        self.window = window
        self.controller = window.controller
        self.folder = folder
        self.rng = random.Random(seed)
        self.counts: collections.Counter[str] = collections.Counter()
        self.expected_errors = 0
        self.good_model = folder / "good.json"
        self.good_model.write_text(json.dumps(engine.model_to_dict(engine.load_builtin("cats-chase-mice"))))
        self.bad_models = self._bad_model_files()
        self.actions = [(weight, getattr(self, name)) for name, weight in (
            ("set_text", 8), ("type_keys", 4), ("option_box", 8), ("option_check", 6), ("hover", 10),
            ("mouse_over_chip", 2), ("pin", 5), ("steps", 6), ("lesson", 2), ("edit_value", 5), ("add_word", 2),
            ("rename_feature", 1), ("undo_redo", 5), ("open_model_file", 2), ("builtin_model", 3),
            ("export", 2), ("colormap_menu", 3), ("reset_model", 1), ("long_sentence", 0.05), ("gif", 0.1),
        )]
        self._weights = [w for w, _ in self.actions]

    def _bad_model_files(self) -> list[Path]:
        bad = {"broken.json": "{ not json", "deep.json": "[" * 1500 + "]" * 1500, "empty.json": "",
               "list.json": "[1, 2]", "nan.json": '{"vocabulary": NaN}', "bom.json": "\ufeff{}"}
        paths = []
        for name, text in bad.items():
            (self.folder / name).write_text(text)
            paths.append(self.folder / name)
        paths += [self.folder / "missing.json", self.folder]
        if hasattr(os, "mkfifo"):
            os.mkfifo(self.folder / "pipe.json")
            paths.append(self.folder / "pipe.json")
        return paths

    # --- actions --------------------------------------------------------------------------------
    def step(self) -> str:
        action = self.rng.choices(self.actions, weights=self._weights)[0][1]
        action()
        settle()
        self.counts[action.__name__] += 1
        return action.__name__

    def set_text(self):
        text = self.rng.choice(ODD_TEXTS)
        if self.rng.random() < 0.5:
            self.window.sentence_box.setPlainText(text)  # as a paste: through the box
        else:
            self.controller.set_sentence(text)

    def type_keys(self):
        box = self.window.sentence_box
        box.setFocus()
        keys = "".join(self.rng.choice("the cat sat on mat  ") for _ in range(self.rng.randint(1, 6)))
        QTest.keyClicks(box, keys)
        if self.rng.random() < 0.3:
            QTest.keyClick(box, QtCore.Qt.Key.Key_Backspace)
        if self.rng.random() < 0.2:
            QTest.keyClick(box, QtCore.Qt.Key.Key_Escape)

    def option_box(self):
        bar = self.window.options_bar
        box = self.rng.choice([bar.model_box, bar.heads, bar.head, bar.matrix]
                              + [b for b in bar.findChildren(QtWidgets.QComboBox) if b.isEnabled()])
        if box.count():
            box.setCurrentIndex(self.rng.randrange(box.count()))

    def option_check(self):
        check = self.rng.choice(self.window.options_bar.findChildren(QtWidgets.QCheckBox))
        check.click()

    def hover(self):
        n = self.controller.trace.n if self.controller.trace else 0
        index = self.rng.choice([None, -1, n, n + 3, *range(max(n, 1))])
        self.controller.set_hovered(index, self.rng.choice(["looking", "looked_at"]))

    def mouse_over_chip(self):
        chips = [c for c in self.window.chips.chips if c.isVisible()]
        if chips:
            chip = self.rng.choice(chips)
            QTest.mouseMove(chip, chip.rect().center() + QtCore.QPoint(self.rng.randint(-2, 2), 0))
            if self.rng.random() < 0.3:
                QTest.mouseClick(chip, QtCore.Qt.MouseButton.LeftButton)

    def pin(self):
        n = self.controller.trace.n if self.controller.trace else 0
        if self.rng.random() < 0.3:
            QTest.keyClick(self.window, QtCore.Qt.Key.Key_Escape)
        elif n:
            self.controller.toggle_pinned(self.rng.randrange(n))

    def steps(self):
        choice = self.rng.random()
        if choice < 0.5:
            self.controller.set_step(self.rng.randint(-3, 20))
        else:
            key = self.rng.choice([QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_Home,
                                   QtCore.Qt.Key.Key_End])
            QTest.keyClick(self.window, key)

    def lesson(self):
        if self.window.lessons_window is not None and self.rng.random() < 0.3:
            self.window.lessons_window.close()
        else:
            self.window.show_lesson(self.rng.choice(LESSONS)[0])

    def edit_value(self):
        model = self.controller.model
        field = self.rng.choice(["embedding", "w_q", "w_k", "w_v"])
        rows = len(model.vocabulary) if field == "embedding" else model.d_model
        cols = model.d_model if field == "embedding" else model.d_proj
        self._expect_refusal(lambda: self.window.model_editor.set_value(
            field, self.rng.randrange(rows), self.rng.randrange(cols), self.rng.choice(JUNK_VALUES)))

    def add_word(self):
        row = [self.rng.choice(JUNK_VALUES) for _ in range(self.controller.model.d_model)]
        self._expect_refusal(lambda: self.window.model_editor.add_word(self.rng.choice(JUNK_WORDS), row))

    def rename_feature(self):
        index = self.rng.randrange(self.controller.model.d_model)
        self._expect_refusal(lambda: self.window.model_editor.rename_feature(index, self.rng.choice(JUNK_WORDS)))

    def undo_redo(self):
        editor = self.window.model_editor
        (editor.undo_action if self.rng.random() < 0.6 else editor.redo_action).trigger()

    def open_model_file(self):
        path = self.good_model if self.rng.random() < 0.4 else self.rng.choice(self.bad_models)
        before = (self.controller.model, self.controller.sentence)
        if not self.window.open_model(str(path)):
            assert (self.controller.model, self.controller.sentence) == before, f"{path.name} changed the state"

    def builtin_model(self):
        self.window.open_model(self.rng.choice(engine.builtin_model_names()))

    def export(self):
        kind = self.rng.choice(["heatmap", "arcs", "csv", "json", "steps"])
        suffix = {"csv": ".csv", "json": ".json"}.get(kind, self.rng.choice([".png", ".svg"]))
        target = self.rng.choice([self.folder / f"out{suffix}", self.folder / "no-such-folder" / f"x{suffix}",
                                  self.good_model / f"x{suffix}", self.folder])
        before = self.good_model.read_bytes()
        self.window.export_to(kind, str(target), self.rng.choice([1, 2]), self.rng.random() < 0.2)
        assert self.good_model.read_bytes() == before, "an export target inside a file changed that file"

    def gif(self):
        if self.controller.trace is not None and self.controller.trace.n <= 8:
            self.window.export_to("steps", str(self.folder / "steps.gif"))

    def colormap_menu(self):
        self.window.colormap_actions[self.rng.choice(theme.COLORMAPS)].trigger()

    def reset_model(self):
        self.window.model_editor.reset()

    def long_sentence(self):
        words = sorted(self.controller.model.vocabulary)
        self.controller.set_sentence(" ".join(self.rng.choice(words) for _ in range(5000)))

    def _expect_refusal(self, edit):
        try:
            edit()
        except (engine.EngineError, ValueError):
            self.expected_errors += 1

    # --- checks ---------------------------------------------------------------------------------
    def check(self) -> None:
        c = self.controller
        try:
            fresh = engine.run(c.model, c.sentence, c.options)
        except engine.EngineError as exc:
            assert c.trace is None and c.error == str(exc), "the window shows a trace the engine refuses"
        else:
            assert c.trace is not None, f"no trace shown, but the engine computes one ({c.error})"
            assert c.trace.tokens == fresh.tokens and c.trace.options == fresh.options
            for shown, expected in zip(c.trace.heads, fresh.heads, strict=True):
                np.testing.assert_array_equal(shown.weights, expected.weights)
            np.testing.assert_array_equal(c.trace.output, fresh.output)
        assert len(self.window.chips.chips) == len(c.words), "one chip per typed word"
        known = [chip.token_index for chip in self.window.chips.chips if chip.token_index is not None]
        assert known == list(range(c.trace.n if c.trace else 0)), "the chips number the known words in order"
        if "\udcff" not in c.sentence:  # Qt cannot hold a lone surrogate: the box shows the text without it
            assert self.window.sentence_box.toPlainText() == c.sentence
        if c.trace is not None:
            assert self.window.heatmap.shown_matrix().shape == (c.trace.n, c.trace.n)
            assert 0 <= c.head < c.options.heads
        for index in (c.hovered, c.pinned):
            assert index is None or 0 <= index < (c.trace.n if c.trace else 0), "a focus past the last word"


def run_walk(window: MainWindow, folder: Path, seed: int, actions: int, crash: CrashHandler,
             report=None) -> dict:
    walk = Walk(window, folder, seed)
    rss = [rss_mb()]
    baseline = None
    started = time.perf_counter()
    growth: collections.Counter[str] = collections.Counter()  # MB gained during each kind of action
    for number in range(1, actions + 1):
        before = rss_mb()
        name = walk.step()
        growth[name] += rss_mb() - before
        if os.environ.get("WALK_TRACE") and rss_mb() - before > 20:
            c = window.controller
            print(f"  +{rss_mb() - before:.0f} MB at {number} {name}: {c.model.name} {len(c.words)} words "
                  f"step {c.step} lesson {getattr(window.lessons_window, 'current_key', lambda: None)()}", flush=True)
        assert crash.count == 0, f"action {number} ({name}) raised: {crash.log_path.read_text()[-3000:]}"
        if number % CHECK_EVERY == 0:
            walk.check()
        if number % 100 == 0 or number == actions:
            rss.append(rss_mb())
            if baseline is None and number >= actions // 10:
                baseline = rss[-1]
            if baseline is not None:
                assert rss[-1] - baseline < RSS_GROWTH_LIMIT_MB, (
                    f"memory grew {baseline:.0f} → {rss[-1]:.0f} MB; by action: {_largest(growth)}")
            if report:
                report(number, rss[-1], time.perf_counter() - started)
    return {"actions": actions, "seconds": time.perf_counter() - started, "rss_start_mb": rss[0],
            "rss_max_mb": max(rss), "rss_end_mb": rss[-1], "counts": dict(walk.counts),
            "refused_edits": walk.expected_errors, "rss_growth_by_action_mb": _largest(growth)}


def _largest(growth: collections.Counter[str]) -> dict[str, float]:
    return {name: round(mb, 1) for name, mb in growth.most_common(6)}


def _quiet_dialogs(patch) -> None:
    """Message boxes answer at once (recorded nowhere): the walk checks state, not wording."""
    buttons = QtWidgets.QMessageBox.StandardButton
    patch(QtWidgets.QMessageBox, "warning", lambda *a, **k: buttons.Ok)
    patch(QtWidgets.QMessageBox, "information", lambda *a, **k: buttons.Ok)
    patch(QtWidgets.QMessageBox, "question", lambda *a, **k: buttons.Discard)
    patch(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: ("", ""))


def _actions_for_this_run() -> int:
    return int(os.environ.get("WALK_ACTIONS", 2000 if os.environ.get("CI") == "true" else 400))


@pytest.mark.parametrize("seed", [1])
def test_random_walk_through_the_window(qtbot, tmp_path, monkeypatch, seed):
    _quiet_dialogs(monkeypatch.setattr)
    window = _make_window(tmp_path)
    qtbot.addWidget(window)
    crash = CrashHandler(tmp_path / "log").install()
    try:
        result = run_walk(window, tmp_path / "walk", seed, _actions_for_this_run(), crash)
    finally:
        crash.uninstall()
    assert result["counts"]["set_text"] > 0 and result["refused_edits"] > 0


def _make_window(folder: Path) -> MainWindow:
    settings = QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    settings.setValue("view/colormap", "viridis")  # not a first launch: no tour
    window = MainWindow(Controller(), settings)
    window.resize(1280, 820)
    window.show()
    (folder / "walk").mkdir()
    return window


def main() -> int:
    parser = argparse.ArgumentParser(description="A long random walk through the window.")
    parser.add_argument("--actions", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    import tempfile

    from attention_explorer.application import create_application

    app = create_application()
    with tempfile.TemporaryDirectory() as folder:
        _quiet_dialogs(setattr)
        window = _make_window(Path(folder))
        crash = CrashHandler(Path(folder) / "log").install()
        try:
            result = run_walk(window, Path(folder) / "walk", args.seed, args.actions, crash,
                              report=lambda n, rss, s: print(f"{n:>6} actions  {rss:6.0f} MB  {s:6.0f} s", flush=True))
        finally:
            crash.uninstall()  # a failed check is printed as usual, not only logged
        window.close()
        print(json.dumps(result, indent=1))
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
