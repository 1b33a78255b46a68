"""Damaged copies of tiny-bart (tests/damaged_models/bart.py) through `attention-explorer generate`,
where an encoder–decoder writes a target for its source: each ends as a JSON file of finite numbers
and exit 0, or as exactly one line on stderr naming what was wrong, a nonzero exit and no file.

Every kind runs in-process (fast, with a time limit on each); a sample, FIFOs and overflows among
them, runs through the installed command in a subprocess, where a library's own output to stderr,
or a traceback printed past main(), would show.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from damaged_models.bart import bart_cases

pytest.importorskip("tokenizers")

from attention_explorer.cli import main  # noqa: E402
from attention_explorer.pretrained_worker import UNFORESEEN  # noqa: E402
from cli_runner import installed_command, run_cli_bounded  # noqa: E402

CASES = bart_cases()
PROMPT = "the cat sat on the mat"
PROG = "attention-explorer: "
LIMIT_S = 30  # a bound on a hang (a FIFO read), not a timing measurement
SAMPLE = ("model.safetensors is a FIFO", "generation_config.json is a link to a FIFO",
          "model.safetensors: decoder positions past 10 all 1e38", "model.safetensors: model.shared.weight all NaN",
          "generation_config.json: forced_eos_token_id 320 (past the vocabulary)", "config.json: eos_token_id 320",
          "model.safetensors cut at byte 9800", "config.json swollen by 1,048,576 bytes",
          "generation_config.json: forced_bos_token_id 0 (a good one)")


def _strict_json(text: str) -> object:
    def refuse(constant):
        raise ValueError(f"{constant} in the JSON")
    return json.loads(text, parse_constant=refuse)


def _problems(case, code: int, stdout: str, stderr: str, out: Path) -> list[str]:
    """What is wrong with how `generate` ended on this copy (nothing: a clean write or one clear line)."""
    if code == 0:
        found = [f"exit 0 but said {stderr!r}"] if stdout or any(
            not line.startswith(PROG + "note: ") for line in stderr.splitlines()) else []
        try:
            written = _strict_json(out.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            return [*found, f"exit 0 without a readable, finite JSON file ({error})"]
        if not isinstance(written, dict) or not written.get("steps"):
            found.append("exit 0 but the JSON holds no step written")
        return found
    found = []
    if "Traceback" in stderr:
        found.append("a traceback")
    if "unexpected error" in stderr or UNFORESEEN in stderr:
        found.append("an error nothing foresaw")
    if stderr.count("\n") != 1 or not stderr.startswith(PROG):
        found.append("not one line")
    if not any(name in stderr for name in case.names):
        found.append("a message naming none of the model's files")
    if out.exists():
        found.append("a refusal left a file behind")
    return [f"{problem}: exit {code}, {stderr[-400:]!r}" for problem in found]


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_generate_on_a_damaged_bart_writes_or_says_one_line(case, tmp_path):
    """In-process, every kind: the promise of one line or a good file, whatever the damage."""
    path = case.build(tmp_path / "copy")
    out = tmp_path / "gen.json"
    result = run_cli_bounded(["generate", "--model", str(path), "--prompt", PROMPT, "-o", str(out)], LIMIT_S)
    assert not result["hung"], f"{case.kind}: generate hung"
    assert "traceback" not in result, f"{case.kind}: {result['traceback'][-600:]}"
    assert _problems(case, result["code"], result["stdout"], result["stderr"], out) == []


SAMPLED = [c for c in CASES if c.kind.removeprefix("tiny-bart: ") in SAMPLE]


def test_the_sample_names_cases_that_exist():
    """A renamed kind would drop out of the subprocess sample without a word."""
    assert len(SAMPLED) == len(SAMPLE)


@pytest.mark.parametrize("case", SAMPLED, ids=[c.kind for c in SAMPLED])
def test_the_installed_command_on_a_damaged_bart(case, tmp_path):
    """The installed entry point, as a user runs it: exit 0 and a JSON file, or a nonzero exit and one line."""
    path = case.build(tmp_path / "copy")
    out = tmp_path / "gen.json"
    result = subprocess.run([installed_command(), "generate", "--model", str(path), "--prompt", PROMPT,
                             "--tokens", "32", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert _problems(case, result.returncode, result.stdout, result.stderr, out) == []


def test_an_overflow_while_writing_is_refused_not_written(tmp_path):
    """Decoder positions damaged only past the first ten: the weights load and a short target reads, but
    writing 32 tokens reaches them; the command must say the numbers overflowed, not write a file."""
    case = next(c for c in CASES if c.kind.endswith("decoder positions past 10 all 1e38"))
    path = case.build(tmp_path / "copy")
    out, err = tmp_path / "gen.json", io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["generate", "--model", str(path), "--prompt", PROMPT, "--tokens", "32", "-o", str(out)])
    assert code == 1 and not out.exists()
    assert err.getvalue().count("\n") == 1 and "overflow" in err.getvalue()
    with contextlib.redirect_stderr(io.StringIO()):  # three tokens stay before the damage: written
        assert main(["generate", "--model", str(path), "--prompt", PROMPT, "--tokens", "3", "-o", str(out)]) == 0
    assert len(_strict_json(out.read_text(encoding="utf-8"))["steps"]) == 3
