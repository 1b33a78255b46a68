"""Every kind of damaged copy of the tiny checkpoints (tests/damaged_models/) through the command line's
`trace` and through the window's loader: one clear line or message naming the file, or a clean accept.

Never a hang (each attempt has a time limit), a traceback, an "unexpected error", a NaN or infinity
in the JSON, an error the worker did not foresee, or a window left busy or half-switched. The counts
are printed (`pytest tests/test_damaged_models.py -q -s`). A sample also goes through the installed
`attention-explorer` command in a subprocess, where a library's own output to stderr would show.
"""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtTest import QTest

from damaged_models import all_cases

pytest.importorskip("tokenizers")

from attention_explorer import engine  # noqa: E402
from attention_explorer.controller import Controller  # noqa: E402
from attention_explorer.pretrained_worker import UNFORESEEN  # noqa: E402
from cli_runner import installed_command, run_cli_bounded  # noqa: E402

CASES = all_cases()
SENTENCE = "the cat sat on the mat 2017"
LIMIT_S = 30            # per attempt: a bound on a hang, not a timing measurement
SUBPROCESS_SAMPLE = 20
PROG = "attention-explorer: "


def _refusal_problem(case, text: str) -> str | None:
    """What is wrong with a refusal's text, or None when it is one clear line naming the file."""
    if "Traceback" in text:
        return "a traceback"
    if "unexpected error" in text or UNFORESEEN in text:
        return "an error nothing foresaw"
    if not any(name in text for name in case.names):
        return "a message naming none of the model's files"
    return None


def _strict_json(text: str) -> object:
    def refuse(constant):
        raise ValueError(f"{constant} in the JSON")
    return json.loads(text, parse_constant=refuse)


def through_the_cli(case, path: Path, where: Path) -> tuple[str, str | None]:
    """("accepted" | "refused", problem or None) of `trace` on the copy, in-process."""
    out = where / "trace.json"
    result = run_cli_bounded(["trace", "--model", str(path), "--sentence", SENTENCE, "--layer", "2", "-o", str(out)],
                             LIMIT_S)
    text = result["stderr"]
    if result["hung"]:
        return "hung", "a hang"
    if "traceback" in result:
        return "crashed", "a traceback: " + result["traceback"][-300:]
    if result["code"] == 0:
        try:
            _strict_json(out.read_text())
        except ValueError as error:
            return "accepted", f"unreadable or not finite JSON ({error})"
        notes_only = all(line.startswith(PROG + "note: ") for line in text.splitlines())
        return "accepted", None if notes_only and result["stdout"] == "" else f"accepted but said {text!r}"
    problem = _refusal_problem(case, text)
    if text.count("\n") != 1 or not text.startswith(PROG):
        problem = problem or f"not one line: {text!r}"
    if out.exists():
        problem = problem or "a refusal left a file behind"
    return "refused", problem and f"{problem}: {text.strip()[:300]}"


class WindowLoader:
    """The controller as the window uses it (background=True, its worker), with what it said."""

    def __init__(self, qtbot):
        self.qtbot = qtbot
        self.controller = Controller(engine.load_builtin("cat-sat-on-mat"), background=True)
        self.messages: list[str] = []
        self.busy: list[bool] = []
        self.controller.load_failed.connect(self.messages.append)
        self.controller.busy_changed.connect(self.busy.append)

    def load(self, case, path: Path) -> tuple[str, str | None]:
        c = self.controller
        before = c.real_model
        self.messages.clear()
        c.open_model(str(path))
        deadline = time.monotonic() + LIMIT_S
        c.wait_idle(LIMIT_S * 1000)  # the worker is done; the GUI thread's timer delivers within a few ms
        while c.busy and time.monotonic() < deadline:
            QTest.qWait(2)
        if c.busy:
            c.cancel()
            return "hung", "the loader stayed busy"
        if self.busy[-1:] != [False]:
            return "hung", "busy was never cleared"
        if self.messages:
            problem = _refusal_problem(case, self.messages[0])
            if len(self.messages) > 1:
                problem = problem or f"{len(self.messages)} messages"
            if c.real_model is not before:
                problem = problem or "refused but switched models"
            return "refused", problem and f"{problem}: {self.messages[0][:300]}"
        if not c.is_real or c.real_model.path != path:
            return "accepted", "neither refused nor opened"
        if c.pretrained_trace is None:
            return "accepted", None if c.error and UNFORESEEN not in c.error else f"opened with {c.error!r}"
        finite = np.isfinite(c.pretrained_trace.all_weights()).all() and c.trace is not None and all(
            np.isfinite(h.weights).all() and np.isfinite(h.output).all() for h in c.trace.heads)
        return "accepted", None if finite else "a trace that is not finite"


def test_there_are_at_least_800_kinds_of_damage():
    assert len(CASES) >= 800, len(CASES)


def test_every_damaged_copy_through_the_cli_and_the_window_loader(tmp_path, qtbot):
    loader = WindowLoader(qtbot)
    tallies, problems = collections.Counter(), []
    for index, case in enumerate(CASES):
        where = tmp_path / str(index)
        path = case.build(where)
        for route, (outcome, problem) in (("CLI", through_the_cli(case, path, where)),
                                          ("window", loader.load(case, path))):
            tallies[route, outcome] += 1
            if problem:
                problems.append(f"{route}: {case.kind}: {problem}")
        shutil.rmtree(where, ignore_errors=True)
    loader.controller.cancel()
    loader.controller.wait_idle(LIMIT_S * 1000)
    print(f"\n{len(CASES)} kinds of damaged copy; " + "; ".join(
        f"{route} {tallies[route, 'accepted']} accepted, {tallies[route, 'refused']} refused"
        for route in ("CLI", "window")))
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:40])


def test_a_sample_through_the_installed_command(tmp_path):
    """Every len/20-th kind, and the ones where a library writes to stderr itself (a panic), in a
    subprocess: exit 0 with finite JSON, or exit 1 with one line naming the file."""
    step = max(1, len(CASES) // SUBPROCESS_SAMPLE)
    sample = CASES[::step][:SUBPROCESS_SAMPLE] + [c for c in CASES if "panics" in c.kind or "is a FIFO" in c.kind][:4]
    program, problems = installed_command(), []
    for index, case in enumerate(sample):
        where = tmp_path / str(index)
        path = case.build(where)
        out = where / "trace.json"
        try:
            result = subprocess.run([program, "trace", "--model", str(path), "--sentence", SENTENCE, "-o", str(out)],
                                    capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            problems.append(f"{case.kind}: a hang")
            continue
        if result.returncode == 0:
            if result.stdout or any(not line.startswith(PROG + "note: ") for line in result.stderr.splitlines()):
                problems.append(f"{case.kind}: exit 0 but said {result.stderr!r}")
            try:
                _strict_json(out.read_text())
            except ValueError as error:
                problems.append(f"{case.kind}: {error}")
        elif result.returncode != 1 or result.stderr.count("\n") != 1 or _refusal_problem(case, result.stderr):
            problems.append(f"{case.kind}: exit {result.returncode}, {result.stderr[-400:]!r}")
    assert not problems, "\n".join(problems)


def test_a_panic_in_tokenizers_on_the_windows_worker_prints_nothing(tmp_path, qtbot, capfd, monkeypatch):
    """A Rust panic prints its own lines to the process's stderr (a whole backtrace with RUST_BACKTRACE
    set) before Python hears of it; the window's message already says what went wrong, so nothing reaches
    stderr from the worker, as nothing does from the command line."""
    monkeypatch.setenv("RUST_BACKTRACE", "1")
    case = next(c for c in CASES if c.kind == "tiny-gpt2: tokenizer.json: a normaliser that panics")
    loader = WindowLoader(qtbot)
    outcome, problem = loader.load(case, case.build(tmp_path))
    assert problem is None
    assert loader.messages or loader.controller.error, "the panic was not noticed"
    assert "panicked" not in capfd.readouterr().err
