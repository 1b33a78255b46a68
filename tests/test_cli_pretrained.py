"""The command line on real models (the tiny committed checkpoints): what `models`, `trace` and
`export` write, numbers equal to the engine's, images written every time, and one line per mistake."""

import csv
import json
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.cli_real import REAL_SENTENCE
from attention_explorer.engine.catalog import is_pretrained_source
from cli_runner import run_cli

pytest.importorskip("tokenizers")
from attention_explorer.engine.pretrained import KNOWN_MODELS, open_pretrained  # noqa: E402

DATA = Path(__file__).parent / "engine" / "pretrained" / "data"
LLAMA, BERT, GPT2, BART = DATA / "tiny-llama.gguf", DATA / "tiny-bert", DATA / "tiny-gpt2", DATA / "tiny-bart"
SENTENCE = "the cat sat on the mat"



@pytest.fixture(scope="module")
def engine_run():
    """The engine's own forward of SENTENCE, per checkpoint."""
    cache = {}

    def run(path):
        if path not in cache:
            model = open_pretrained(path)
            cache[path] = model, model.run(SENTENCE)
        return cache[path]
    return run


def test_real_sources_are_told_from_toy_models():
    assert is_pretrained_source(KNOWN_MODELS[0].name)
    assert is_pretrained_source(str(BERT)) and is_pretrained_source(str(LLAMA))
    assert not is_pretrained_source("cats-chase-mice") and not is_pretrained_source("my-model.json")


def test_models_lists_the_real_models_and_how_to_install_missing_ones(capsys, monkeypatch):
    from attention_explorer.engine.pretrained import catalog

    code, out, _ = run_cli(capsys, "models")
    assert code == 0 and "Built-in toy models:" in out and "cats-chase-mice" in out
    for known in KNOWN_MODELS:
        assert known.name in out
    monkeypatch.setattr(catalog, "model_location", lambda known: None)
    code, out, _ = run_cli(capsys, "models")
    assert code == 0
    for known in KNOWN_MODELS:
        assert f"{known.name}\n  not installed; install it with: {known.install}" in out


@pytest.mark.parametrize("path", [BERT, GPT2, LLAMA])
def test_trace_writes_every_layers_weights_equal_to_the_engines(capsys, tmp_path, engine_run, path):
    target = tmp_path / "t.json"
    code, _, err = run_cli(capsys, "trace", "--model", path, "--sentence", SENTENCE, "-o", target)
    model, ptrace = engine_run(path)
    assert code == 0
    count = model.n_layers * model.n_heads * ptrace.n ** 2
    assert f"the weights of all {model.n_layers} layers ({count:,} numbers)" in err
    data = json.loads(target.read_text())
    assert data["tokens"] == ptrace.tokens and data["labels"] == list(ptrace.labels)
    assert data["special"] == [bool(s) for s in ptrace.special]
    assert data["shape"] == {"family": model.family, "kind": model.kind, "layers": model.n_layers,
                             "heads": model.n_heads, "key_value_heads": model.n_kv_heads, "d_model": model.d_model,
                             "d_head": model.arch.d_head, "max_tokens": model.max_tokens}
    weights = np.array([[head["weights"] for head in layer["heads"]] for layer in data["layers"]], dtype=np.float32)
    assert np.array_equal(weights, ptrace.all_weights())  # float32 → JSON → float32 is exact
    assert [layer["layer"] for layer in data["layers"]] == list(range(1, model.n_layers + 1))
    assert set(data["layers"][0]["heads"][0]) == {"head", "weights"}
    if model.is_decoder:
        assert [(t["text"], t["probability"]) for t in data["next_tokens"]] == [
            (t.text, t.probability) for t in ptrace.next_tokens]
        assert len(data["next_tokens"]) == 5
    else:
        assert "next_tokens" not in data


def test_one_layer_and_head_carry_q_k_v_and_scores(capsys, tmp_path, engine_run):
    target = tmp_path / "t.json"
    code, _, err = run_cli(capsys, "trace", "--model", LLAMA, "--sentence", SENTENCE, "--layer", 2, "--head", 3,
                           "-o", target)
    assert code == 0 and err == ""
    _, ptrace = engine_run(LLAMA)
    layer = ptrace.layer_trace(1)
    data = json.loads(target.read_text())
    assert [lay["layer"] for lay in data["layers"]] == [2]
    (head,) = data["layers"][0]["heads"]
    assert head["head"] == 3 and head["key_value_head"] == 2  # tiny Llama: query head h reads h // 2
    for name in ("weights", "q", "k", "v", "scores", "q_before_rope", "k_before_rope"):
        assert np.array_equal(np.array(head[name], dtype=np.float32), getattr(layer.heads[2], name)), name


def test_export_csv_of_a_layer_and_head_is_the_engines(capsys, tmp_path, engine_run):
    target = tmp_path / "scores.csv"
    code, _, _ = run_cli(capsys, "export", "--model", BERT, "--sentence", SENTENCE, "--layer", 2, "--head", 4,
                         "--matrix", "scores", "-o", target)
    assert code == 0
    _, ptrace = engine_run(BERT)
    rows = list(csv.reader(target.open()))
    assert rows[0] == ["looking \\ looked at", *ptrace.labels]
    values = np.array([[float(x) for x in row[1:]] for row in rows[1:]], dtype=np.float32)
    assert np.array_equal(values, ptrace.layer_trace(1).heads[3].scores)


def test_without_a_sentence_the_real_models_own_example_is_used(capsys, tmp_path):
    target = tmp_path / "t.json"
    assert run_cli(capsys, "trace", "--model", GPT2, "--layer", 1, "-o", target)[0] == 0
    assert json.loads(target.read_text())["sentence"] == REAL_SENTENCE


@pytest.mark.parametrize("argv, message", [
    (["trace", "--model", BERT, "--causal"], "--causal applies to the built-in toy models only"),
    (["trace", "--model", LLAMA, "--heads", "2", "--no-scale"], "--scale, --heads applies to the built-in toy"),
    (["trace", "--model", BERT, "--layer", "3"], "--layer must be between 1 and 2 for tiny-bert"),
    (["trace", "--model", BERT, "--head", "0"], "--head must be between 1 and 4 for tiny-bert"),
    (["export", "--model", LLAMA, "--head", "5", "-o", "x.png"], "--head must be between 1 and 4"),
    (["export", "--model", LLAMA, "--view", "steps", "-o", "x.gif"], "write a real model's view as .png or .svg"),
    (["trace", "--layer", "2"], "a toy model has one layer, so --layer 2 does not exist"),
    (["trace", "--head", "1"], "--head chooses a head of a real model's trace"),
    (["export", "--model", "cat-ate-fish", "--layer", "2", "-o", "x.csv"], "a toy model has one layer"),
    (["trace", "--model", "nowhere.gguf"], "nowhere.gguf: no such file or folder"),
    (["export", "--view", "model", "-o", "x.png"], "the model view shows a real model's layers and heads"),
    (["export", "--view", "arcs", "--step", "rope", "-o", "x.png"], "--step chooses where a PNG or SVG of --view"),
    (["export", "--model", LLAMA, "--sentence", "", "-o", "x.png"], "no text"),
    (["trace", "--model", BART], "BART, an encoder–decoder: it reads a source text and writes a target text"),
    (["trace", "--model", BERT, "--target", "le chat"], "model_type 'bert' is not an encoder–decoder this app opens"),
    (["trace", "--target", "le chat"], "--target is the text an encoder–decoder's decoder reads"),
    (["trace", "--model", BART, "--target", "le chat", "--head", "5"],
     "--head must be between 1 and 4 for tiny-bart's encoder and decoder both"),
])
def test_mistakes_are_one_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, *argv)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "x.csv").exists()


def test_an_encoder_decoder_traces_its_three_attentions_equal_to_the_engines(capsys, tmp_path):
    """BART on a source (--sentence) and a target: the encoder's, the decoder's and the cross attention of
    every layer and head, as the engine makes them, and the next tokens after the target; --layer and
    --head choose one of each half."""
    from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder

    target = tmp_path / "bart.json"
    code, _, err = run_cli(capsys, "trace", "--model", BART, "--sentence", SENTENCE, "--target", "le chat",
                           "-o", target)
    assert code == 0 and err == ""
    written = json.loads(target.read_text())
    model = open_encoder_decoder(BART)
    result = model.run(SENTENCE, "le chat")
    assert written["source_labels"] == result.source.labels and written["target_labels"] == result.target_labels
    assert written["target_tokens"][0] == model.weights.decoder_start
    encoder, decoder = written["shape"]["encoder"], written["shape"]["decoder"]
    assert len(written["encoder"]) == encoder["layers"] and len(written["decoder"]) == decoder["layers"]
    for layer in written["encoder"]:
        for head in layer["heads"]:
            np.testing.assert_allclose(head["weights"], result.encoder_attention[layer["layer"] - 1, head["head"] - 1],
                                       atol=1e-7)
    n_target, n_source = len(result.target_labels), len(result.source.labels)
    for layer in written["decoder"]:
        assert len(layer["heads"]) == decoder["heads"]
        for head in layer["heads"]:
            at = layer["layer"] - 1, head["head"] - 1
            np.testing.assert_allclose(head["self_weights"], result.decoder_attention[at], atol=1e-7)
            np.testing.assert_allclose(head["cross_weights"], result.cross_attention[at], atol=1e-7)
            assert np.shape(head["cross_weights"]) == (n_target, n_source)
    scores = result.logits[-1].astype(np.float64)
    best = int(np.argmax(scores))
    assert written["next_tokens"][0]["token_id"] == best and len(written["next_tokens"]) == 5
    assert sum(t["probability"] for t in written["next_tokens"]) < 1 + 1e-9

    code, out, _ = run_cli(capsys, "trace", "--model", BART, "--sentence", SENTENCE, "--target", "le chat",
                           "--layer", 2, "--head", 3)
    one = json.loads(out)
    assert code == 0 and [lay["layer"] for lay in one["encoder"]] == [2] == [lay["layer"] for lay in one["decoder"]]
    np.testing.assert_allclose(one["decoder"][0]["heads"][0]["cross_weights"], result.cross_attention[1, 2], atol=1e-7)


def test_a_toy_trace_accepts_layer_one(capsys):
    code, out, _ = run_cli(capsys, "trace", "--model", "cats-chase-mice", "--layer", 1)
    assert code == 0 and json.loads(out)["tokens"]


def test_missing_tokenizers_says_what_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import tokenizers now raises ImportError
    code, _, err = run_cli(capsys, "trace", "--model", BERT)
    assert code == 1 and err.count("\n") == 1
    assert "pip install 'attention-explorer[real]'" in err


def test_a_toy_trace_does_not_load_the_real_model_code():
    code = ("import sys\nfrom attention_explorer.cli import main\n"
            "assert main(['trace', '--model', 'cats-chase-mice', '--sentence', 'cats chase mice', '-o', '-']) == 0\n"
            "print('pretrained' if any('engine.pretrained' in m for m in sys.modules) else 'toy only', "
            "file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stderr.strip() == "toy only"


@pytest.mark.parametrize("suffix, view", [(".png", "heatmap"), (".svg", "arcs"), (".png", "steps"),
                                          (".svg", "model"), (".png", "model")])
def test_images_are_written_and_exit_zero_every_time(tmp_path, suffix, view):
    argv = [sys.executable, "-m", "attention_explorer", "export", "--model", str(LLAMA), "--sentence", SENTENCE,
            "--layer", "2", "--head", "4", "--view", view]
    for attempt in range(3):
        target = tmp_path / f"{view}{attempt}{suffix}"
        result = subprocess.run([*argv, "-o", str(target)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        data = target.read_bytes()
        if suffix == ".png":
            width, height = struct.unpack(">II", data[16:24])  # the PNG header's size
            assert data.startswith(b"\x89PNG\r\n\x1a\n") and width >= 200 and height >= 100
        else:
            assert data.lstrip().startswith(b"<?xml") and b"</svg>" in data
            assert (b">L2<" in data and b">H4<" in data) if view == "model" else b"cat" in data


def test_the_steps_view_can_stand_at_the_rope_step(capsys, tmp_path, qapp):
    target = tmp_path / "rope.svg"
    code, _, err = run_cli(capsys, "export", "--model", LLAMA, "--sentence", SENTENCE, "--layer", 2, "--head", 4,
                           "--view", "steps", "--step", "rope", "-o", target)
    assert code == 0 and err == ""
    text = " ".join(re.sub(r"<[^>]*>", " ", target.read_text()).split())  # the words, wherever lines wrap
    assert "Step 4 of 11 · Rotary positions: turn q and k by position" in text
    assert "query head 4 reads key/value head 2 of 2" in text and "cos θ" in text


def test_a_known_model_that_is_not_installed_says_how_to_install_it(capsys, monkeypatch):
    from attention_explorer.engine.pretrained import catalog

    monkeypatch.setattr(catalog, "model_location", lambda known: None)
    code, out, err = run_cli(capsys, "trace", "--model", KNOWN_MODELS[1].name, "--layer", 1)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert f"{KNOWN_MODELS[1].name} is not installed; install it with: {KNOWN_MODELS[1].install}" in err


def test_the_help_names_every_step_and_an_unknown_step_is_one_line(capsys):
    from attention_explorer.cli import build_parser
    from attention_explorer.engine.steps import STEP_KEYS

    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["export"].format_help().split())
    assert all(key in help_text for key in STEP_KEYS)
    code, out, err = run_cli(capsys, "export", "--view", "steps", "--step", "alibi", "-o", "x.png")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--step 'alibi' is not a step; choose one of" in err


def test_a_cut_text_says_which_tokens_were_kept_on_stderr_and_in_the_json(capsys, tmp_path):
    text = " ".join(f"w{i}" for i in range(100)) + " the end"
    target = tmp_path / "cut.json"
    code, _, err = run_cli(capsys, "trace", "--model", GPT2, "--sentence", text, "--layer", 1, "-o", target)
    assert code == 0
    assert err == ("attention-explorer: note: the text was cut (tiny-gpt2 reads at most 64 tokens): kept the last "
                   "64 of 294 tokens (from character 310), so the next tokens follow its end\n")
    data = json.loads(target.read_text())
    assert data["truncated"] is True
    assert data["cut"] == {"tokens": 294, "kept": 64, "keeps": "end", "characters": [309, len(text)]}
    assert data["tokens"][-3:] == ["␣", "·en", "·d"]  # the end of the text, where the next tokens follow
    code, _, _ = run_cli(capsys, "trace", "--model", GPT2, "--sentence", "the cat", "--layer", 1, "-o", target)
    assert code == 0 and json.loads(target.read_text())["cut"] is None


def test_a_real_models_text_over_the_limit_is_one_line(capsys, tmp_path):
    code, out, err = run_cli(capsys, "trace", "--model", BERT, "--sentence", "a" * 64_001, "-o", tmp_path / "t.json")
    assert code == 1 and out == "" and err == ("attention-explorer: this text has 64,001 characters; real models take "
                                               "at most 64,000: shorten it\n")
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("suffix", [".svg", ".pdf"])
@pytest.mark.parametrize("view", ["heatmap", "arcs", "steps"])
def test_control_characters_in_a_text_are_drawn_as_their_pictures_and_the_file_is_well_formed(
        capsys, tmp_path, qapp, view, suffix):
    """A vertical tab (a token of its own in a byte-level vocabulary) went into the SVG as it was: no
    XML parser read the file, and exporting it from the window raised a ParseError."""
    target = tmp_path / f"{view}{suffix}"
    code, _, err = run_cli(capsys, "export", "--model", LLAMA, "--sentence", "the cat\x0bsat\x01on the\x7fmat",
                           "--view", view, "-o", target)
    assert code == 0 and err == ""
    if suffix == ".svg":
        text = ET.fromstring(target.read_bytes()).itertext()
        words = "".join(text)
        assert "␋" in words and "␁" in words and "␡" in words
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", words)
    else:
        assert target.read_bytes().startswith(b"%PDF")
