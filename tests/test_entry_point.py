"""The installed `attention-explorer` program, run as users and scripts run it: a fresh process per
command, every subcommand and built-in model, each file format, and the exit status checked every time.

Tests that call `cli.main()` in-process cannot see what happens while the interpreter shuts down (the
headless export once died there with a segmentation fault, after writing a complete file). So each
command shape runs several times: 20 when the environment variable CI is "true", 2 otherwise; the
steps GIF, the slowest (a few seconds a run), a quarter as often. ENTRY_POINT_RUNS overrides the count.
The runs of one command go two at a time, as `make -j` would start them.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attention_explorer import engine

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("ENTRY_POINT_RUNS") or (20 if os.environ.get("CI") == "true" else 2))
GIF_RUNS = max(1, RUNS // 4)
PARALLEL = 2


def _smoke_test_module():
    """The frozen bundle's smoke test holds the PNG and GIF checks; the same checks serve here."""
    spec = importlib.util.spec_from_file_location("smoke_test", ROOT / "packaging" / "smoke_test.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


smoke = _smoke_test_module()


def program() -> list[str]:
    script = shutil.which("attention-explorer")
    return [script] if script else [sys.executable, "-m", "attention_explorer"]


def check_svg(path: Path) -> tuple[int, int]:
    root = ElementTree.parse(path).getroot()
    if not root.tag.endswith("svg"):
        raise smoke.SmokeFailure(f"{path.name} is XML but not SVG: <{root.tag}>")
    _x, _y, width, height = (float(v) for v in root.get("viewBox", "0 0 0 0").split())
    return int(width), int(height)


def check_text(path: Path) -> tuple[int, int]:
    text = path.read_text(encoding="utf-8")
    return len(text.splitlines()), len(text)


CHECKS = {".png": smoke.png_size, ".gif": smoke.gif_size, ".svg": check_svg, ".csv": check_text,
          ".json": check_text}

# (name, arguments after the model, file written)
PER_MODEL = (
    ("trace JSON", ["trace"], "trace.json"),
    ("weights CSV", ["export"], "weights.csv"),
    ("heatmap PNG", ["export", "--view", "heatmap"], "heatmap.png"),
    ("heatmap SVG", ["export", "--view", "heatmap"], "heatmap.svg"),
    ("arcs PNG", ["export", "--view", "arcs"], "arcs.png"),
    ("arcs SVG", ["export", "--view", "arcs"], "arcs.svg"),
    ("steps PNG", ["export", "--view", "steps"], "steps.png"),
    ("steps SVG", ["export", "--view", "steps"], "steps.svg"),
    ("steps GIF", ["export", "--view", "steps"], "steps.gif"),
)
SHAPES = [pytest.param([*args, "--model", model, "-o", output], output, id=f"{model} {name}")
          for model in engine.builtin_model_names() for name, args, output in PER_MODEL]
SHAPES += [
    pytest.param(["export", "--matrix", "scores", "--head", "1", "--image-scale", "2", "-o", "scores.png"],
                 "scores.png", id="heatmap of scores at 2x"),
    pytest.param(["export", "--transparent", "-o", "clear.png"], "clear.png", id="transparent PNG"),
    pytest.param(["scaling", "--trials", "20", "-o", "scaling.json"], "scaling.json", id="scaling JSON"),
]


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([*program(), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def run_repeatedly(argv: list[str], folder: Path, runs: int) -> list[tuple[Path, subprocess.CompletedProcess]]:
    """`runs` fresh processes of one command, two at a time, each in a folder of its own."""
    folders = [folder / f"run{attempt}" for attempt in range(1, runs + 1)]
    for each in folders:
        each.mkdir()
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        return list(zip(folders, pool.map(lambda each: run(argv, each), folders), strict=True))


@pytest.mark.parametrize("argv, output", SHAPES)
def test_every_command_exits_0_every_time_and_writes_a_valid_file(argv, output, tmp_path):
    runs = GIF_RUNS if output.endswith(".gif") else RUNS
    for attempt, (folder, result) in enumerate(run_repeatedly(argv, tmp_path, runs), start=1):
        assert result.returncode == 0, (f"run {attempt} of {runs} exited {result.returncode} "
                                        f"(a negative status is a signal: -11 is a segmentation fault): "
                                        f"{result.stderr.strip()[-600:]}")
        assert "Traceback" not in result.stderr
        assert [p.name for p in folder.iterdir()] == [output], "left something beside the file"
        width, height = CHECKS[Path(output).suffix](folder / output)
        assert width > 0 and height > 0, f"{output} is empty"


@pytest.mark.parametrize("argv, expected", [
    (["--version"], "attention-explorer "),
    (["models"], engine.catalog.DEFAULT_MODEL),
    (["trace", "-o", "-"], '"tokens"'),
    (["export", "-o", "-"], "looking \\ looked at,"),
])
def test_commands_that_print_exit_0_every_time(argv, expected, tmp_path):
    for attempt in range(1, RUNS + 1):
        result = run(argv, tmp_path)
        assert result.returncode == 0 and expected in result.stdout, f"run {attempt}: {result.stderr.strip()}"


@pytest.mark.parametrize("argv, message", [
    (["export", "-o", "missing/heatmap.png"], "there is no folder"),
    (["export", "--view", "steps", "-o", "missing/steps.gif"], "there is no folder"),
    (["export", "--view", "arcs", "-o", "folder.svg"], "it is a folder"),
    (["export", "--image-scale", "3", "-o", "x.png"], "invalid choice: 3"),
    (["export", "--view", "heatmap", "-o", "x.gif"], "only the steps view plays"),
])
def test_failed_exports_exit_with_one_line_every_time(argv, message, tmp_path):
    (tmp_path / "folder.svg").mkdir()
    for attempt in range(1, RUNS + 1):
        result = run(argv, tmp_path)
        assert result.returncode in (1, 2), f"run {attempt} exited {result.returncode}: {result.stderr}"
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["folder.svg"]
