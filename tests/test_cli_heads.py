"""`attention-explorer heads`: the census on the command line, in-process and through the installed
command in fresh processes; what it writes, its cache, and one line on stderr for every mistake."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from cli_runner import run_cli

pytest.importorskip("tokenizers")
from attention_explorer.engine.census import BY_KEY, builtin_battery, run_census, subject_for  # noqa: E402
from attention_explorer.engine.pretrained import open_pretrained  # noqa: E402
from test_cli_pretrained import BART, BERT, GPT2, LLAMA  # noqa: E402

RUNS = int(os.environ.get("ENTRY_POINT_RUNS") or (20 if os.environ.get("CI") == "true" else 2))


@pytest.fixture(autouse=True)
def own_data_folder(tmp_path, monkeypatch):
    """The cache goes under tmp_path, never into the real home."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "data"))
    return tmp_path / "data"



def test_the_csv_holds_the_engines_scores_for_every_head(capsys, tmp_path):
    out_file = tmp_path / "heads.csv"
    code, _, err = run_cli(capsys, "heads", "--model", GPT2, "--measure", "induction", "--measure", "previous",
                           "-o", out_file)
    assert code == 0, err
    rows = list(csv.DictReader(out_file.open(encoding="utf-8")))
    subject = subject_for(open_pretrained(GPT2))
    expected = run_census(subject, builtin_battery(subject))
    assert len(rows) == subject.n_layers * subject.n_heads
    assert list(rows[0]) == ["layer", "head", "induction", "induction_stripe", "previous"]
    for row in rows:
        layer, head = int(row["layer"]) - 1, int(row["head"]) - 1
        for measure in ("induction", "induction_stripe", "previous"):
            assert float(row[measure]) == pytest.approx(expected.grid(measure)[layer, head])
    assert "census 100%" in err and "induction (repeated sequence): L" in err


def test_json_to_standard_output_with_the_ranked_heads(capsys):
    code, out, err = run_cli(capsys, "heads", "--model", BERT, "--measure", "sink", "--format", "json", "-o", "-")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["measures"]) == {"sink", "sink_rate"}
    best = data["ranked"]["sink"][0]
    assert data["measures"]["sink"]["scores"][best["layer"] - 1][best["head"] - 1] == pytest.approx(best["score"])
    assert 0.0 <= data["sink_rate"] <= 1.0
    assert data["examples"]


def test_a_second_run_comes_from_the_cache_and_no_cache_runs_again(capsys, own_data_folder):
    argv = ["heads", "--model", BERT, "--measure", "entropy", "-o", "-"]
    first = run_cli(capsys, *argv)
    again = run_cli(capsys, *argv)
    assert first[0] == again[0] == 0
    assert first[1] == again[1]
    assert "from the cache" in again[2] and "from the cache" not in first[2]
    assert list((own_data_folder / "attention-explorer" / "Attention Explorer" / "census").glob("census-*.json"))
    fresh = run_cli(capsys, *argv, "--no-cache")
    assert fresh[1] == first[1] and "from the cache" not in fresh[2]


def test_a_users_text_file(capsys, tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("the cat sat on the mat\nthe dog chased the cat\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "heads", "--model", LLAMA, "--texts", texts, "--measure", "duplicate", "-o", "-")
    assert code == 0, err
    assert "texts.txt: 2 texts, one per line" in err
    assert len(out.splitlines()) == 1 + 2 * 4


def test_a_toy_model_has_its_census_too(capsys):
    code, out, err = run_cli(capsys, "heads", "--model", "cat-sat-on-mat", "-o", "-")
    assert code == 0, err
    assert out.splitlines()[1].startswith("1,1,") and out.splitlines()[2].startswith("1,2,")


def test_switching_the_top_induction_heads_off(capsys, tmp_path):
    out_file = tmp_path / "heads.json"
    code, _, err = run_cli(capsys, "heads", "--model", GPT2, "--ablate-top", "2", "-o", out_file)
    assert code == 0, err
    ablation = json.loads(out_file.read_text(encoding="utf-8"))["ablation"]
    assert ablation["measure"] == "induction_stripe" and len(ablation["heads"]) == 2
    assert ablation["loss_after"]["repeat_second_copy"] != ablation["loss_before"]["repeat_second_copy"]
    assert "second copy" in err


def fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs are POSIX")
    path = tmp_path / "texts.fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("make_args, code, message", [
    (lambda p: ["--texts", p / "absent.txt"], 1, "no such file"),
    (lambda p: ["--texts", fifo(p)], 1, "not a regular file"),
    (lambda p: ["--texts", (p / "latin1.txt", (p / "latin1.txt").write_bytes(b"caf\xe9\n"))[0]], 1, "not UTF-8"),
    (lambda p: ["--texts", (p / "empty.txt", (p / "empty.txt").write_text("\n\n"))[0]], 1, "no text in it"),
    (lambda p: ["--measure", "inductoin"], 2, "invalid choice"),
    (lambda p: ["--sink-epsilon", "1.5"], 1, "ε"),
    (lambda p: ["--seed", "-3"], 1, "seed"),
    (lambda p: ["--ablate-top", "2"], 2, "only decoders"),
    (lambda p: ["--ablate-top", "0"], 2, "1 or more"),
    (lambda p: ["--format", "json", "-o", p / "h.csv"], 2, "does not match"),
    (lambda p: ["-o", p / "heads.txt"], 2, "end it in .csv or .json"),
    (lambda p: ["-o", (p / "dir.csv", (p / "dir.csv").mkdir())[0]], 1, "folder"),
    (lambda p: ["--part", "cross"], 2, "drop --part"),
])
def test_a_mistake_is_one_line_and_a_nonzero_exit(capsys, tmp_path, make_args, code, message):
    args = make_args(tmp_path)
    if "-o" not in args:
        args += ["-o", tmp_path / "heads.csv"]
    got, out, err = run_cli(capsys, "heads", "--model", BERT, *args)
    assert got == code
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "heads.csv").exists()


def test_an_encoder_decoder_is_measured_one_attention_at_a_time(capsys, tmp_path):
    from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder
    from attention_explorer.engine.pretrained.encoder_decoder_view import EncoderDecoderPart

    model = open_encoder_decoder(BART)
    for part, args in (("cross", []), ("encoder", ["--part", "encoder"]), ("decoder", ["--part", "decoder"])):
        out_file = tmp_path / f"{part}.csv"
        code, _, err = run_cli(capsys, "heads", "--model", BART, *args, "-o", out_file)
        assert code == 0, err
        subject = subject_for(EncoderDecoderPart(model, part))
        expected = run_census(subject, builtin_battery(subject))
        rows = list(csv.DictReader(out_file.open(encoding="utf-8")))
        assert list(rows[0])[2:] == list(expected.measures) and len(rows) == subject.n_layers * subject.n_heads
        for row in rows:
            layer, head = int(row["layer"]) - 1, int(row["head"]) - 1
            for measure in expected.measures:
                assert float(row[measure]) == pytest.approx(expected.grid(measure)[layer, head], nan_ok=True)
        assert f"tiny-bart ({subject.PART_NAMES[part]})" in err
        key = "previous" if part == "cross" else "cross_next"  # said on stderr, no column
        assert f"{BY_KEY[key].title}: does not apply" in err and key not in rows[0]
    code, _, err = run_cli(capsys, "heads", "--model", BART, "--measure", "previous", "-o", tmp_path / "none.csv")
    assert code == 1 and "none of the measures asked for applies to tiny-bart (cross-attention)" in err
    assert not (tmp_path / "none.csv").exists()


def test_an_unknown_model_is_one_line(capsys, tmp_path):
    code, _, err = run_cli(capsys, "heads", "--model", "no-such-model", "-o", tmp_path / "h.csv")
    assert code == 1 and len(err.strip().splitlines()) == 1


def program() -> list[str]:
    script = shutil.which("attention-explorer")
    return [script] if script else [sys.executable, "-m", "attention_explorer"]


def test_the_installed_command_exits_0_every_time(tmp_path, own_data_folder):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path / "home"),
           "XDG_DATA_HOME": str(own_data_folder), "LOCALAPPDATA": str(own_data_folder)}
    outputs = []
    for attempt in range(RUNS):
        target = tmp_path / f"heads{attempt}.csv"
        done = subprocess.run([*program(), "heads", "--model", str(LLAMA), "--measure", "previous", "-o", str(target)],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"run {attempt + 1} of {RUNS}: {done.stderr.strip()[-600:]}"
        assert "Traceback" not in done.stderr
        outputs.append(target.read_text(encoding="utf-8"))
    assert len(set(outputs)) == 1
    rows = list(csv.reader(io.StringIO(outputs[0])))
    assert rows[0] == ["layer", "head", "previous"] and len(rows) == 1 + 2 * 4
    assert np.isfinite([float(r[2]) for r in rows[1:]]).all()
    bad = subprocess.run([*program(), "heads", "--model", str(LLAMA), "--texts", str(tmp_path / "none.txt"),
                          "-o", str(tmp_path / "x.csv")], env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1 and "no such file" in bad.stderr


def test_the_cache_lives_in_the_windows_data_folder(own_data_folder):
    """The folder found without Qt is the one Qt gives the window (test mode off for this one call)."""
    from PySide6 import QtCore

    from attention_explorer.application import create_application
    from attention_explorer.engine.census import app_data_folder

    create_application()
    QtCore.QStandardPaths.setTestModeEnabled(False)
    try:
        qt_folder = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.AppLocalDataLocation)
    finally:
        QtCore.QStandardPaths.setTestModeEnabled(True)
    assert app_data_folder() == type(app_data_folder())(qt_folder)
    assert str(app_data_folder()).startswith(str(own_data_folder))
