"""The headless command line: what it writes, and one clean line on stderr for every mistake."""

import csv
import json
import math
import os

import pytest

from attention_explorer import engine
from cli_runner import run_cli


def test_models_lists_every_builtin_with_features_and_sentence(capsys):
    code, out, _ = run_cli(capsys, "models")
    assert code == 0
    for name in engine.builtin_model_names():
        model = engine.load_builtin(name)
        assert name in out and model.default_sentence in out and ", ".join(model.features) in out


@pytest.mark.parametrize("name", engine.builtin_model_names())
def test_trace_writes_the_documented_json(capsys, tmp_path, name):
    target = tmp_path / "t.json"
    code, _, _ = run_cli(capsys, "trace", "--model", name, "-o", str(target))
    assert code == 0
    data = json.loads(target.read_text())
    for key in ("model", "sentence", "tokens", "unknown", "features", "options", "x", "heads", "concat", "w_o",
                "output"):
        assert key in data
    model = engine.load_builtin(name)
    assert data["options"] == model.default_options.to_dict()
    assert set(data["heads"][0]) == {"w_q", "w_k", "w_v", "q", "k", "v", "scores", "scaled", "masked", "weights",
                                     "output"}
    n = len(data["tokens"])
    assert len(data["heads"][0]["weights"]) == n


def test_trace_options_override_defaults_and_masked_is_null(capsys):
    code, out, _ = run_cli(capsys, "trace", "--model", "cats-chase-mice", "--causal", "--no-scale")
    assert code == 0
    data = json.loads(out)
    assert data["options"] == {"scale": False, "causal": True, "positional": False, "heads": 1}
    masked = data["heads"][0]["masked"]
    assert masked[0] == [0.0, None, None] and masked[1][2] is None
    assert data["heads"][0]["weights"][0] == [1.0, 0.0, 0.0]


def test_trace_reports_unknown_words_and_computes_the_rest(capsys):
    code, out, err = run_cli(capsys, "trace", "--model", "cats-chase-mice", "--sentence", "cats chase dogs")
    assert code == 0
    data = json.loads(out)
    assert data["tokens"] == ["cats", "chase"] and data["unknown"] == ["dogs"]
    assert "dogs" in err


def test_export_csv_has_token_labels(capsys, tmp_path):
    target = tmp_path / "w.csv"
    code, _, _ = run_cli(capsys, "export", "--model", "cats-chase-mice", "--matrix", "weights", "-o", str(target))
    assert code == 0
    rows = list(csv.reader(target.open()))
    assert rows[0][1:] == ["cats", "chase", "mice"]
    assert [r[0] for r in rows[1:]] == ["cats", "chase", "mice"]
    assert float(rows[1][2]) == pytest.approx(math.exp(2**0.5) / (math.exp(2**0.5) + 2), abs=1e-15)


def test_export_csv_of_a_second_head_and_masked_scores(capsys, tmp_path):
    target = tmp_path / "m.csv"
    code, _, _ = run_cli(capsys, "export", "--model", "cat-ate-fish", "--matrix", "masked", "--head", "2",
                         "-o", str(target))
    assert code == 0
    rows = list(csv.reader(target.open()))
    assert rows[0][1:] == ["my", "cat", "ate", "its", "fish"]
    assert rows[1][2] == "-inf"
    q = tmp_path / "q.csv"
    assert run_cli(capsys, "export", "--model", "cat-ate-fish", "--matrix", "q", "--head", "2", "-o", str(q))[0] == 0
    assert next(csv.reader(q.open()))[1:] == ["q3", "q4"]


@pytest.mark.parametrize("argv, message", [
    (["trace", "--model", "no-such-model"], "no built-in model or file called 'no-such-model'"),
    (["export", "--model", "MiniLM", "-o", "x.png"], "the real ones MiniLM-L6 (encoder), SmolLM2-135M"),
    (["trace", "--model", "missing.json"], "no such file"),
    (["trace", "--sentence", ""], "the sentence is empty"),
    (["trace", "--sentence", "zebra quokka"], "knows none of these words: zebra, quokka"),
    (["trace", "--heads", "3"], "choose one of 1, 2, 4, 8"),
    (["trace", "--bogus"], "unrecognized arguments: --bogus"),
    (["export", "--head", "5", "-o", "x.csv"], "--head must be between 1 and 2"),
    (["export", "-o", "x.txt"], "cannot tell the format"),
    (["export", "-o", "/no/such/dir/x.csv"], "cannot write /no/such/dir/x.csv"),
])
def test_mistakes_give_one_line_on_stderr_and_a_nonzero_exit(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, *argv)
    assert code != 0
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_damaged_model_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "features": ["a"], "vocabulary": {"w": [NaN]}, '
                   '"w_q": [[1]], "w_k": [[1]], "w_v": [[1]]}')
    code, _, err = run_cli(capsys, "trace", "--model", str(bad))
    assert code == 1 and "vocabulary['w'][0]: nan is not a finite number" in err


def test_python_dash_m_runs_the_same_command():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "attention_explorer", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("attention-explorer ")


def test_dash_writes_the_trace_the_csv_and_the_scaling_numbers_to_standard_output(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "trace", "--model", "cats-chase-mice", "-o", "-")
    assert code == 0 and json.loads(out)["tokens"] == ["cats", "chase", "mice"]
    code, out, _ = run_cli(capsys, "export", "--model", "cats-chase-mice", "-o", "-")
    assert code == 0 and out.splitlines()[0] == "looking \\ looked at,cats,chase,mice"
    code, out, _ = run_cli(capsys, "scaling", "--dk", "4", "--trials", "10", "-o", "-")
    assert code == 0 and json.loads(out)["dk"] == 4
    assert list(tmp_path.iterdir()) == []  # no file called "-"


@pytest.mark.parametrize("to_file", [True, False])
def test_a_sentence_with_an_invalid_utf8_byte_is_one_line_for_a_file_and_for_standard_output(capsys, tmp_path,
                                                                                             to_file):
    sentence = b"the cat \xff sat".decode("utf-8", "surrogateescape")  # how Python hands over such an argument
    target = tmp_path / "t.json"
    code, out, err = run_cli(capsys, "trace", "--sentence", sentence, *(["-o", str(target)] if to_file else []))
    assert code == 2 and out == ""
    assert err.strip() == "attention-explorer: the sentence is not valid UTF-8 text: a stray byte at character 9"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (["--image-scale", "2", "-o", "x.csv"], "--image-scale applies to PNG and GIF images, not to CSV"),
    (["--image-scale", "2", "-o", "x.svg"], "--image-scale applies to PNG and GIF images, not to SVG"),
    (["--transparent", "-o", "x.csv"], "--transparent applies to PNG images, not to CSV"),
    (["--transparent", "--view", "steps", "-o", "x.gif"], "--transparent applies to PNG images, not to GIF"),
    (["--matrix", "scores", "--view", "arcs", "-o", "x.png"], "the arcs show weights, or weight × moved norm"),
    (["--matrix", "scores", "--view", "steps", "-o", "x.gif"], "the steps view has no such choice"),
    (["--matrix", "scores", "--view", "model", "-o", "x.png"], "the model view shows weights, or weight × moved norm"),
    (["--view", "heatmap", "-o", "-"], "standard output (-o -) takes the CSV of one matrix"),
])
def test_options_that_would_change_nothing_are_refused(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "export", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "missing" / "x.png", "there is no folder"),
    (lambda tmp: (tmp / "folder.png").mkdir() or tmp / "folder.png", "it is a folder"),
    (lambda tmp: (os.mkfifo(tmp / "pipe.png"), tmp / "pipe.png")[1], "named pipe"),
])
def test_a_bad_image_target_fails_before_anything_is_rendered(capsys, tmp_path, monkeypatch, make, message):
    from attention_explorer import figure_cli

    def render(*_args, **_kwargs):
        raise AssertionError("rendered although the target cannot be written")

    monkeypatch.setattr(figure_cli, "export_figure", render)
    target = make(tmp_path)
    code, _, err = run_cli(capsys, "export", "--view", "steps", "-o", str(target))
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("error, message", [
    (RecursionError("maximum recursion depth exceeded"), "the input is nested too deeply to read"),
    (MemoryError(), "not enough memory for this input"),
    (RuntimeError("boom\nsecond line"), "unexpected error (RuntimeError: boom second line)"),
])
def test_anything_unexpected_is_still_one_line_and_a_nonzero_exit(capsys, monkeypatch, error, message):
    def explode(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(engine, "run", explode)
    code, out, err = run_cli(capsys, "trace", "--model", "cats-chase-mice")
    assert code == 1 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
