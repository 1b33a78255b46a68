"""Quitting while a real decoder writes exits 0, once the token under way is written: the installed
command run as a user runs it.

A sitecustomize module on the child's PYTHONPATH makes each of the worker's steps spend most of its
time inside a large matrix product (a real model's step is mostly that), starts a generation and quits
with the window's Quit action while it writes. The exit once crashed (3 quits in 97 with SmolLM2)
when PySide tore the window down with the worker still computing; the app now waits for the
step under way, which the quit told to stop, before it tears anything down.
"""

import os
import textwrap
from pathlib import Path

import pytest

from cli_runner import run_until_quit

pytest.importorskip("tokenizers")

LLAMA = Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-llama"
QUIT_WITHIN_S = 20.0  # a step takes a fraction of a second; the bound only tells a hang from a wait
REPEATS = 3 if os.environ.get("CI") == "true" else 1

SITECUSTOMIZE = textwrap.dedent("""
    import atexit, sys, threading, time

    def install():
        import numpy as np
        from PySide6 import QtCore, QtWidgets
        from attention_explorer import application
        from attention_explorer.engine.pretrained import forward

        big = np.ones((1000, 1000), np.float32)
        plain = forward.affine

        def slow_on_the_worker(x, w, b):
            if threading.current_thread().name == "real-model worker":
                big @ big
            return plain(x, w, b)

        forward.affine = slow_on_the_worker
        real_create = application.create_application

        def window():
            return next((w for w in QtWidgets.QApplication.topLevelWidgets() if type(w).__name__ == "MainWindow"), None)

        def generate_then_quit():
            w = window()
            if w is None or w.controller.busy or not w.controller.is_real:
                QtCore.QTimer.singleShot(20, generate_then_quit)
                return
            w.pretrained.generation.tokens.setValue(200)
            w.pretrained.generation.generate_button.click()
            quit_while_writing()

        def quit_while_writing():
            c = window().controller
            if not (c.generating and c.generation is not None and c.generation.steps):
                QtCore.QTimer.singleShot(10, quit_while_writing)
                return
            print("writing:", c.generating, flush=True)
            print("quitting at", time.time(), flush=True)
            window().quit_action.trigger()

        def create(*args):
            app = real_create(*args)
            QtCore.QTimer.singleShot(0, generate_then_quit)
            return app

        application.create_application = create

    def report_jobs_left():  # runs before PySide tears the window down (registered after it)
        from attention_explorer import pretrained_worker
        left = sum(runner._unfinished for runner in pretrained_worker._RUNNERS)
        print("jobs left when the teardown began:", left, flush=True)

    install()
    atexit.register(report_jobs_left)
""")


def test_quitting_while_a_decoder_writes_exits_0_after_the_token_under_way(tmp_path):
    for run in range(1, REPEATS + 1):
        out = run_until_quit(tmp_path, SITECUSTOMIZE, ["--model", str(LLAMA), "--sentence", "the cat sat on"],
                             run=run, timeout_s=60, quit_within_s=QUIT_WITHIN_S)
        assert "writing: True" in out, out  # the decoder was writing when Quit was chosen
        assert "jobs left when the teardown began: 0" in out, out
