"""`attention-explorer export` of an encoder–decoder (the tiny BART checkpoint): --target and --part, for
every view and every matrix, run as users run it (the installed program, a fresh process) and checked
against the engine's own run of the two texts; the part's own layers and heads; one line for options
that do not fit the model."""

import csv
import io
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli_runner import run_cli
from html_page import page_data
from reading_oracle import hidden, merged, merged_labels, not_special, rollout, words_of

pytest.importorskip("tokenizers")
from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder  # noqa: E402
from attention_explorer.engine.tokenizer import token_labels  # noqa: E402
from attention_explorer.view_file import read_view  # noqa: E402

DATA = Path(__file__).parent / "engine" / "pretrained" / "data"
BART, BERT = DATA / "tiny-bart", DATA / "tiny-bert"
SOURCE, TARGET = "The cat sat on mat", "L"  # 11 source tokens, 3 target tokens (</s> <s> L)


@pytest.fixture(scope="module")
def bart():
    return open_encoder_decoder(BART)


@pytest.fixture(scope="module")
def result(bart):
    return bart.run(SOURCE, TARGET)


def program() -> list[str]:
    script = shutil.which("attention-explorer") or str(Path(sys.executable).with_name("attention-explorer"))
    return [script] if Path(script).exists() else [sys.executable, "-m", "attention_explorer"]


def export(tmp_path: Path, name: str, *argv: str) -> tuple[subprocess.CompletedProcess, Path]:
    """`attention-explorer export --model tiny-bart --sentence SOURCE *argv -o tmp_path/name` in a process."""
    target = tmp_path / name
    argv = [*program(), "export", "--model", str(BART), "--sentence", SOURCE, *argv, "-o", str(target)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    return done, target


def read_csv(path: Path) -> tuple[list[str], list[str], np.ndarray]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    return [row[0] for row in rows[1:]], rows[0][1:], np.array([[float(x) for x in row[1:]] for row in rows[1:]])


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("part, rows, columns", [("cross", "target", "source"), ("encoder", "source", "source"),
                                                 ("decoder", "target", "target")])
def test_each_part_writes_its_weights_as_csv_equal_to_the_engines(tmp_path, result, part, rows, columns):
    done, path = export(tmp_path, f"{part}.csv", "--target", TARGET, "--part", part, "--layer", "2", "--head", "3")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    row_labels, column_labels, values = read_csv(path)
    labels = {"source": token_labels(result.source.labels), "target": token_labels(result.target_labels)}
    assert row_labels == labels[rows] and column_labels == labels[columns]
    expected = {"cross": result.cross_attention, "encoder": result.encoder_attention,
                "decoder": result.decoder_attention}[part][1, 2]
    np.testing.assert_allclose(values, expected, atol=1e-6)


def test_without_target_or_part_the_cross_attention_of_the_source_onto_itself_is_written(tmp_path, bart):
    done, path = export(tmp_path, "default.csv")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    np.testing.assert_allclose(read_csv(path)[2], bart.run(SOURCE, SOURCE).cross_attention[0, 0], atol=1e-6)


@pytest.mark.parametrize("part", ["cross", "encoder", "decoder"])
def test_every_matrix_of_a_part_is_the_runs_own(capsys, tmp_path, bart, result, part):
    """q, k, v, scores, scaled, masked and each head's output, from the run's q, k, v; k and v hold a row
    per token looked at (the source's, in cross-attention)."""
    made = result.layers[part][1]
    d_head = (bart.weights.encoder if part == "encoder" else bart.weights.decoder).arch.d_head
    q, k, v = (made.q[3].astype(np.float64), made.k[3].astype(np.float64), made.v[3].astype(np.float64))
    scores = q @ k.T
    masked = np.where(np.triu(np.ones(scores.shape, dtype=bool), 1), -np.inf, scores / np.sqrt(d_head)) \
        if part == "decoder" else scores / np.sqrt(d_head)
    expected = {"q": q, "k": k, "v": v, "scores": scores, "scaled": scores / np.sqrt(d_head), "masked": masked,
                "output": made.outputs[3]}
    keys = token_labels(result.target_labels if part == "decoder" else result.source.labels)
    for matrix, values in expected.items():
        path = tmp_path / f"{part}-{matrix}.csv"
        code, _, err = run_cli(capsys, "export", "--model", BART, "--sentence", SOURCE, "--target", TARGET,
                               "--part", part, "--layer", 2, "--head", 4, "--matrix", matrix, "-o", path)
        assert code == 0 and err == "", err
        rows, _, written = read_csv(path)
        np.testing.assert_allclose(written, values, atol=1e-5, err_msg=f"{part} {matrix}")
        if matrix in ("k", "v"):
            assert rows == keys


def test_layers_and_heads_are_counted_in_the_part_chosen(tmp_path):
    """tiny-bart's encoder has 4 heads, its decoder (and so the cross-attention) 8."""
    done, path = export(tmp_path, "h8.csv", "--part", "cross", "--head", "8")
    assert done.returncode == 0 and path.exists()
    done, path = export(tmp_path, "h5.png", "--part", "encoder", "--head", "5")
    assert done.returncode == 2 and not path.exists()
    assert done.stderr.count("\n") == 1 and "--head must be between 1 and 4 for the encoder attention" in done.stderr
    done, path = export(tmp_path, "l3.csv", "--part", "decoder", "--layer", "3")
    assert done.returncode == 2 and "--layer must be between 1 and 2" in done.stderr and not path.exists()


@pytest.mark.parametrize("grid, most", [(None, 0.5), ("heads", 0.6), ("layers", 0.4)])
def test_a_cross_attention_heatmap_keeps_its_cells_square(tmp_path, grid, most):
    """3 target tokens under 11 source ones: a short, wide picture, not square frames two thirds empty
    (one heatmap, or small multiples: 8 heads on 3 rows, 2 layers side by side)."""
    done, path = export(tmp_path, "cross.png", "--target", TARGET, *(("--grid", grid) if grid else ()))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    width, height = png_size(path)
    assert width >= 560 and height < most * width, (width, height)
    state = read_view(path)  # the figure says what it drew
    assert (state.sentence, state.target, state.part, state.real, state.grid) == (SOURCE, TARGET, "cross", True, grid)


@pytest.mark.parametrize("part", ["cross", "encoder", "decoder"])
@pytest.mark.parametrize("view, suffix, extra", [("heatmap", ".svg", ()), ("arcs", ".svg", ()),
                                                 ("bars", ".png", ("--focus", "L")), ("steps", ".png", ()),
                                                 ("model", ".svg", ())])
def test_every_view_of_every_part_is_drawn(tmp_path, result, part, view, suffix, extra):
    focus = extra if part != "encoder" else ("--focus", "cat")  # the encoder's rows are the source's tokens
    done, path = export(tmp_path, f"{part}-{view}{suffix}", "--target", TARGET, "--part", part, "--view", view,
                        *focus)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    if suffix == ".png":
        width, height = png_size(path)
        assert width >= 300 and height >= 150
    else:
        text = path.read_text(encoding="utf-8")
        assert "</svg>" in text
        if view == "model":
            assert ">L2<" in text and ">H4<" in text and (">H8<" in text) == (part != "encoder")
        else:
            words = {"cross": ["cat", "·mat", "L"], "encoder": ["cat", "·mat"], "decoder": ["L"]}[part]
            assert all(f">{word}<" in text for word in words), words
    state = read_view(path)
    assert (state.target, state.part, state.view) == (TARGET, part, view)


@pytest.mark.parametrize("part", ["cross", "decoder"])
def test_the_web_page_holds_the_parts_rows_columns_and_weights(tmp_path, result, part):
    done, path = export(tmp_path, f"{part}.html", "--target", TARGET, "--part", part, "--layer", "2", "--head", "2")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    data = page_data(path)
    target, source = token_labels(result.target_labels), token_labels(result.source.labels)
    assert data["labels"] == target and data["keyLabels"] == (source if part == "cross" else target)
    assert data["axes"] == (["target", "source token looked at"] if part == "cross"
                            else ["word looking", "word looked at"])
    expected = (result.cross_attention if part == "cross" else result.decoder_attention)[1, 1].astype(np.float64)
    if part == "decoder":  # the causal mask's cells are masked, not zeros
        expected = np.where(np.triu(np.ones(expected.shape, dtype=bool), 1), np.nan, expected)
    np.testing.assert_allclose(data["matrix"], expected, atol=data["step"])
    assert "cross-attention" in data["heading"] if part == "cross" else "cross" not in data["heading"]


WORDY = "unbelievably, a cat sat"  # the tiny tokenizer cuts "unbelievably" into many pieces


@pytest.mark.parametrize("part, flags", [("cross", ["--words"]), ("cross", ["--hide-specials", "--head", "3"]),
                                         ("encoder", ["--rollout", "--layer", "2"])])
def test_a_part_read_as_the_window_reads_it_is_written_as_csv(capsys, tmp_path, bart, part, flags):
    """Words, hidden specials and rollout, worked out here with plain loops from the engine's run."""
    path = tmp_path / "read.csv"
    code, _, err = run_cli(capsys, "export", "--model", BART, "--sentence", WORDY, "--target", WORDY,
                           "--part", part, *flags, "-o", path)
    assert code == 0 and err == "", err
    rows, cols, values = read_csv(path)
    run = bart.run(WORDY, WORDY)
    target, source = list(run.target_labels), list(run.source.labels)
    if "--words" in flags:
        by_row, by_col = words_of(target), words_of(source)
        expected = merged(run.cross_attention[0, 0], by_row, by_col)
        assert (rows, cols) == (merged_labels(target, by_row), merged_labels(source, by_col))
        assert len(by_row) < len(target)  # pieces were merged
    elif "--hide-specials" in flags:
        keep_rows, keep_cols = not_special(target), not_special(source)
        expected = hidden(run.cross_attention[0, 2], keep_rows, keep_cols)
        assert rows == token_labels([target[i] for i in keep_rows])
        assert cols == token_labels([source[i] for i in keep_cols])
    else:
        expected = rollout(run.encoder_attention, 1)
        assert rows == cols == token_labels(source)
    np.testing.assert_allclose(values, expected, atol=1e-6)


@pytest.mark.parametrize("argv, message", [
    (["--model", "cat-sat-on-mat", "--target", "a dog"], "--target is for an encoder–decoder"),
    (["--model", "cat-sat-on-mat", "--part", "encoder"], "--part is for an encoder–decoder"),
    (["--model", BERT, "--part", "cross"], "--part is for an encoder–decoder"),
    (["--model", BERT, "--target", "x", "--part", "cross"], "--target and --part are for an encoder–decoder"),
    (["--model", BART, "--target", "  "], "--target is empty: give the text the decoder reads"),
    (["--model", BART, "--rollout"], "choose --part encoder or decoder to roll one of them out"),
    (["--model", BART, "--part", "both"], "invalid choice: 'both'"),
])
def test_options_that_do_not_fit_the_model_are_one_line_and_status_2(capsys, tmp_path, argv, message):
    target = tmp_path / "x.png"
    code, out, err = run_cli(capsys, "export", "--sentence", "the cat sat", *argv, "-o", target)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert not target.exists()


def test_the_installed_program_refuses_a_target_for_a_one_text_model(tmp_path):
    target = tmp_path / "x.csv"
    done = subprocess.run([*program(), "export", "--model", str(BERT), "--target", "a dog", "-o", str(target)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--target is for an encoder–decoder" in done.stderr
    assert not target.exists()


def test_heads_switched_off_are_the_parts_and_change_the_layers_after(capsys, tmp_path, bart):
    path = tmp_path / "off.csv"
    code, _, err = run_cli(capsys, "export", "--model", BART, "--sentence", SOURCE, "--target", TARGET,
                           "--part", "cross", "--ablate", "1:2,1:7", "--layer", 2, "-o", path)
    assert code == 0 and err == "", err
    off = bart.run(SOURCE, TARGET, frozenset({("cross", 0, 1), ("cross", 0, 6)}))
    np.testing.assert_allclose(read_csv(path)[2], off.cross_attention[1, 0], atol=1e-6)
    assert not np.allclose(off.cross_attention[1, 0], bart.run(SOURCE, TARGET).cross_attention[1, 0], atol=1e-4)
    code, _, err = run_cli(capsys, "export", "--model", BART, "--sentence", SOURCE, "--part", "encoder",
                           "--ablate", "1:7", "-o", tmp_path / "bad.csv")
    assert code == 2 and "the encoder attention of tiny-bart has no head 7 in layer 1" in err
    assert not (tmp_path / "bad.csv").exists()
