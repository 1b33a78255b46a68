"""`attention-explorer scaling`: the "why √d_k" numbers as JSON, and one line on stderr for a mistake."""

import json

import pytest

from attention_explorer import engine
from cli_runner import run_cli


def test_prints_the_documented_json(capsys):
    code, out, err = run_cli(capsys, "scaling", "--dk", "64", "--keys", "10", "--trials", "400", "--seed", "0")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert set(data) == {"dk", "keys", "trials", "seed", "raw", "scaled", "divided_by_dk", "gradient_ratio"}
    assert (data["dk"], data["keys"], data["trials"], data["seed"]) == (64, 10, 400, 0)
    for mode in ("raw", "scaled", "divided_by_dk"):
        assert set(data[mode]) == {"spread", "top_weight", "slope"}
    assert data == engine.scaling_experiment(64, 10, 400, 0).to_dict()
    assert data["raw"]["spread"] == pytest.approx(8, rel=0.05)


def test_defaults_are_dk_64_10_keys_400_trials_seed_0(capsys):
    code, out, _ = run_cli(capsys, "scaling")
    assert code == 0
    data = json.loads(out)
    assert (data["dk"], data["keys"], data["trials"], data["seed"]) == (64, 10, 400, 0)


def test_writes_a_file_with_dash_o(capsys, tmp_path):
    target = tmp_path / "scaling.json"
    code, out, _ = run_cli(capsys, "scaling", "--dk", "16", "--trials", "20", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["dk"] == 16


@pytest.mark.parametrize("argv, message", [
    (["--dk", "0"], "--dk must be between 1 and 1024, got 0"),
    (["--dk", "1025"], "--dk must be between 1 and 1024, got 1025"),
    (["--dk", "-3"], "--dk must be between 1 and 1024"),
    (["--keys", "0"], "--keys must be between 1 and"),
    (["--trials", "0"], "--trials must be between 1 and"),
    (["--trials", "1000000"], "--trials must be between 1 and"),
    (["--seed", "-1"], "--seed must be 0 or more"),
    (["--dk", "eight"], "argument --dk: invalid int value: 'eight'"),
    (["--dk", "64", "-o", "/no/such/dir/s.json"], "cannot write /no/such/dir/s.json"),
])
def test_bad_values_give_one_line_and_a_nonzero_exit(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "scaling", *argv, *([] if "-o" in argv else ["-o", "out.json"]))
    assert code != 0
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and out == ""
    assert list(tmp_path.iterdir()) == []  # nothing written
