"""The installed `attention-explorer` command finds a catalog model in the models folder, before the
model's Python package, each run in a fresh process with its exit status checked (the frozen program
is checked the same way by packaging/smoke_test.py)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_entry_point import RUNS, program

pytest.importorskip("tokenizers")

DATA = Path(__file__).parent / "engine" / "pretrained" / "data"
pytestmark = pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the data folder is set by XDG_DATA_HOME")


@pytest.fixture
def models_folder(tmp_path):
    return tmp_path / "data" / "attention-explorer" / "Attention Explorer" / "models"


def run(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    return subprocess.run([*program(), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_model_put_in_the_models_folder_is_listed_and_traced_every_time(tmp_path, models_folder):
    placed = models_folder / "all-MiniLM-L6-v2"
    shutil.copytree(DATA / "tiny-bert", placed)  # the tiny BERT stands in for MiniLM's downloaded files
    for attempt in range(RUNS):
        listed = run(tmp_path, "models")
        assert listed.returncode == 0, f"run {attempt}: `models` exited {listed.returncode}: {listed.stderr}"
        assert f"MiniLM-L6 (encoder)\n  found at {placed}\n" in listed.stdout
        traced = run(tmp_path, "trace", "--model", "MiniLM-L6 (encoder)", "--sentence", "the cat sat", "-o", "t.json")
        assert traced.returncode == 0, f"run {attempt}: `trace` exited {traced.returncode}: {traced.stderr}"
        written = json.loads((tmp_path / "t.json").read_text())
        assert written["model"] == "MiniLM-L6 (encoder)" and written["shape"]["layers"] == 2  # the tiny one's


def test_something_else_in_its_place_is_one_line_naming_it(tmp_path, models_folder):
    models_folder.mkdir(parents=True)
    (models_folder / "all-MiniLM-L6-v2").write_text("not a model folder")
    for attempt in range(RUNS):
        result = run(tmp_path, "trace", "--model", "MiniLM-L6 (encoder)")
        assert result.returncode == 1 and result.stdout == "", f"run {attempt}: exit {result.returncode}"
        assert result.stderr.count("\n") == 1 and "all-MiniLM-L6-v2: not a model" in result.stderr
        assert "Traceback" not in result.stderr
