"""The command line run as the CLI tests call it: in-process (exit status, standard output and error),
in-process on a thread bounded against a hang, or the installed command."""

import contextlib
import io
import shutil
import sys
import threading
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
