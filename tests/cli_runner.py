"""The command line run as the CLI tests call it: in-process (exit status, standard output and error),
in-process on a thread bounded against a hang, or the installed command (and quit by a hook)."""

import contextlib
import io
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from attention_explorer.cli import main


def run_cli(capsys, *argv):
    """`attention-explorer *argv` (paths and numbers given as they are); (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_cli_bounded(argv: list[str], limit_s: float) -> dict:
    """`attention-explorer *argv` in-process on a thread of its own, waited for at most `limit_s` (a bound
    on a hang, e.g. a FIFO read, not a timing measurement): {"hung": bool, "code", "stdout", "stderr"},
    and "traceback" when anything escaped main (which is the finding)."""
    err, result = io.StringIO(), {}

    def attempt():
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as stdout:
                result["code"] = main(argv)
            result["stdout"] = stdout.getvalue()
        except BaseException:  # noqa: BLE001 - anything escaping main is the finding
            result["traceback"] = traceback.format_exc()

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(limit_s)
    result["hung"] = worker.is_alive()
    result["stderr"] = err.getvalue()
    return result


def installed_command() -> str:
    """The installed `attention-explorer` script (the environment's first); the test is skipped without one."""
    found = shutil.which("attention-explorer", path=str(Path(sys.executable).parent)) or shutil.which(
        "attention-explorer")
    if found is None:
        pytest.skip("the attention-explorer command is not installed")
    return found


def run_until_quit(home: Path, sitecustomize: str, args: list[str], *, run: int, timeout_s: float,
                   quit_within_s: float) -> str:
    """The installed command with `args`, driven by a `sitecustomize` module on its path that quits the
    window and prints "quitting at <time.time()>" as it does, offscreen in a home of its own under
    `home`: it must exit 0 within `quit_within_s` of the Quit, with no traceback. Its standard output.
    `run` numbers the messages of a test that repeats it."""
    hook = home / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(sitecustomize)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(home), "PYTHONPATH": str(hook),
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    child = subprocess.Popen([installed_command(), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        out, err = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        pytest.fail(f"run {run}: the app did not exit after Quit\n{out}\n{err[-2000:]}")
    ended = time.time()
    assert child.returncode == 0, f"run {run}: exit {child.returncode}\n{err[-2000:]}"
    quit_at = float(out.split("quitting at ")[1].split()[0])
    assert ended - quit_at < quit_within_s, f"run {run}: {ended - quit_at:.1f} s from Quit to exit"
    assert "Traceback" not in err, err[-2000:]
    return out
