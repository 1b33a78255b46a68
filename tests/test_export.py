"""The data half of exporting: the trace streamed as JSON row by row, CSV, standard output, and a
clear ExportError for every target that cannot be written."""

import json
import os

import pytest

from attention_explorer import engine
from attention_explorer.export import (
    ExportError,
    check_target,
    iter_trace_json,
    trace_to_dict,
    trace_to_json,
    write_matrix_csv,
    write_text,
    write_trace_json,
)


@pytest.fixture
def trace():
    model = engine.load_builtin("cats-chase-mice")
    return engine.run(model, model.default_sentence, model.default_options.with_changes(causal=True))


def test_the_streamed_json_is_the_documented_dict_one_row_per_line(trace):
    text = trace_to_json(trace)
    assert json.loads(text) == trace_to_dict(trace)
    assert text.endswith("}\n")
    weights = trace_to_dict(trace)["heads"][0]["weights"]
    assert weights[0] == [1.0, 0.0, 0.0]  # causal: the first word sees only itself
    assert '"weights": [\n    [1.0, 0.0, 0.0],\n' in text  # each matrix row on its own line
    assert trace_to_dict(trace)["heads"][0]["masked"][0][1:] == [None, None]  # −∞ written as null


def test_no_piece_of_the_stream_holds_more_than_one_matrix_row(trace):
    pieces = list(iter_trace_json(trace))
    assert max(piece.count("],") + piece.count("]\n") for piece in pieces) <= 1
    assert max(len(piece) for piece in pieces) < 200


def test_a_dash_writes_the_trace_to_standard_output(trace, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_trace_json("-", trace)
    assert json.loads(capsys.readouterr().out)["tokens"] == ["cats", "chase", "mice"]
    assert list(tmp_path.iterdir()) == []


def test_the_trace_file_is_the_same_text_as_the_stream(trace, tmp_path):
    target = tmp_path / "t.json"
    write_trace_json(target, trace)
    assert target.read_text(encoding="utf-8") == trace_to_json(trace)


def test_text_that_is_not_valid_unicode_is_refused_and_the_old_file_kept(tmp_path):
    target = tmp_path / "t.json"
    target.write_text("old")
    with pytest.raises(ExportError, match="not valid Unicode"):
        write_text(target, "cat \udcff")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_a_wrong_head_is_refused_before_the_file_is_touched(trace, tmp_path):
    target = tmp_path / "m.csv"
    target.write_text("old")
    with pytest.raises(ExportError, match="head 3 does not exist"):
        write_matrix_csv(target, trace, "weights", 2)
    assert target.read_text() == "old"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_check_target_says_what_is_wrong_in_one_line(tmp_path):
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(ExportError) as caught:
        check_target(tmp_path / "pipe.csv")
    assert str(caught.value) == f"cannot write {tmp_path / 'pipe.csv'}: it is a named pipe (FIFO), not a regular file"
    check_target("-")  # standard output is always fine
    check_target(tmp_path / "new.csv")
