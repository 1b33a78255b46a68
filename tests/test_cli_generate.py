"""`attention-explorer generate` on the tiny committed checkpoints: the JSON and CSV hold the engine's
own generation (tokens, candidates, attention rows of the layers and heads asked for), the PNG, SVG and
GIF its picture (test_generation_figure looks inside them), the installed program exits 0, and every
mistake is one line on stderr."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli_runner import run_cli

pytest.importorskip("tokenizers")
from attention_explorer.engine.pretrained import open_pretrained  # noqa: E402
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate  # noqa: E402
from attention_explorer.engine.pretrained.sampling import Sampling  # noqa: E402

DATA = Path(__file__).parent / "engine" / "pretrained" / "data"
LLAMA, GPT2, BERT = DATA / "tiny-llama.gguf", DATA / "tiny-gpt2", DATA / "tiny-bert"
PROMPT = "the cat sat on the mat"



def test_the_json_holds_the_engines_generation_and_the_rows_asked_for(capsys, tmp_path):
    target = tmp_path / "gen.json"
    code, _, err = run_cli(capsys, "generate", "--model", LLAMA, "--prompt", PROMPT, "--tokens", 6, "--temperature",
                           "0.9", "--top-k", 50, "--seed", 3, "--ablate", "1:2", "--layer", 2, "-o", target)
    assert code == 0 and err == ""
    model = open_pretrained(LLAMA)
    expected = generate(model, PROMPT, GenerationSettings(6, Sampling(0.9, 50, 1.0, 3), ablate=frozenset({(0, 1)})))
    data = json.loads(target.read_text())
    assert data["prompt"] == PROMPT and data["model"] == "tiny-llama.gguf" and data["stopped"] == "length"
    assert data["settings"]["ablated"] == [[1, 2]] and data["settings"]["temperature"] == 0.9
    assert data["attention_layers"] == [2] and data["attention_heads"] == [1, 2, 3, 4]
    assert [t["token_id"] for t in data["prompt_tokens"]] == list(expected.prompt_ids)
    assert data["written"] == expected.written
    for index, (step, made) in enumerate(zip(data["steps"], expected.steps, strict=True)):
        assert step["step"] == index + 1 and step["token_id"] == made.token_id and step["text"] == made.text
        assert [c["token_id"] for c in step["candidates"]] == [c.token_id for c in made.choice.candidates]
        assert step["probability"] == made.choice.probability
        np.testing.assert_array_equal(np.array(step["attention"], dtype=np.float32), made.attention[[1]])


def test_one_head_of_every_layer_and_json_on_standard_output(capsys):
    code, out, _ = run_cli(capsys, "generate", "--model", GPT2, "--prompt", PROMPT, "--tokens", 3, "--head", 4,
                           "-o", "-")
    data = json.loads(out)
    assert code == 0 and data["attention_layers"] == [1, 2] and data["attention_heads"] == [4]
    assert [len(step["attention"][0][0]) for step in data["steps"]] == [len(data["prompt_tokens"]) + i
                                                                         for i in range(len(data["steps"]))]


def test_the_csv_is_a_row_per_step_with_its_candidates(capsys, tmp_path):
    target = tmp_path / "gen.csv"
    code, _, _ = run_cli(capsys, "generate", "--model", LLAMA, "--prompt", PROMPT, "--tokens", 4, "-o", target)
    rows = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"), newline="")))
    expected = generate(open_pretrained(LLAMA), PROMPT, GenerationSettings(4))
    assert code == 0 and rows[0][:6] == ["step", "token_id", "token", "probability", "candidate_1", "probability_1"]
    assert len(rows) == 5 and len(rows[0]) == 14
    for row, step in zip(rows[1:], expected.steps, strict=True):
        assert int(row[1]) == step.token_id and row[2] == step.text
        assert float(row[3]) == step.choice.probability == float(row[5])  # greedy: the likeliest candidate


def test_the_installed_program_writes_and_exits_zero(tmp_path):
    program = shutil.which("attention-explorer") or str(Path(sys.executable).with_name("attention-explorer"))
    if not Path(program).exists():
        pytest.skip("the attention-explorer program is not installed")
    target = tmp_path / "gen.json"
    result = subprocess.run([program, "generate", "--model", str(LLAMA), "--prompt", PROMPT, "--tokens", "5",
                             "-o", str(target)], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert len(json.loads(target.read_text())["steps"]) == 5


@pytest.mark.parametrize(("args", "message"), [
    (["--prompt", "  "], "--prompt is empty"),
    (["--tokens", "0"], "--tokens must be 1 or more, not 0"),
    (["--tokens", "1000000"], "the prompt holds 9: at most 55 more can be written, not 1,000,000"),
    (["--tokens", "many"], "argument --tokens: invalid int value: 'many'"),
    (["--temperature", "hot"], "argument --temperature: invalid float value: 'hot'"),
    (["--temperature", "inf"], "the temperature is 0 (greedy) or a number up to 100"),
    (["--temperature", "1", "--top-p", "0"], "top-p is a share of the probability above 0"),
    (["--seed", "4"], "--seed shapes a draw, and --temperature 0 (the default) is greedy"),
    (["--chat"], "carry no chat template"),
    (["--ablate", "1:9"], "no head 9 in layer 1"),
    (["--ablate", "x"], "--ablate takes LAYER:HEAD pairs"),
    (["--layer", "3"], "--layer must be between 1 and 2"),
    (["-o", "gen.pdf"], "gen.pdf': end it in .json or .csv (the numbers), .png, .svg or .gif (a picture)"),
    (["--head", "1", "-o", "gen.csv"], "--layer and --head choose the attention rows of a JSON file or the head"),
    (["--span", "row", "-o", "gen.csv"], "--span colours a picture; a CSV holds numbers"),
    (["--span", "row"], "--span colours a picture; a JSON holds numbers"),
    (["--image-scale", "2", "-o", "gen.svg"], "--image-scale applies to PNG and GIF images; an SVG is drawn as"),
    (["--image-scale", "2", "-o", "gen.csv"], "--image-scale applies to PNG and GIF images; a CSV holds numbers"),
    (["--image-scale", "3", "-o", "gen.png"], "argument --image-scale: invalid choice: 3"),
    (["--span", "all", "-o", "gen.gif"], "argument --span: invalid choice: 'all'"),
    (["--layer", "3", "-o", "gen.png"], "--layer must be between 1 and 2"),
    (["--head", "5", "-o", "gen.gif"], "--head must be between 1 and 4"),
    (["--chat", "-o", "gen.png"], "carry no chat template"),
    (["--model", "cats-chase-mice"], "'cats-chase-mice' is a toy model"),
    (["--model", BERT], "tiny-bert is an encoder"),
])
def test_each_mistake_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    argv = ["generate", "--model", LLAMA, "--prompt", PROMPT, "-o", tmp_path / "gen.json"] + args
    if "-o" in args:  # the mistake's own target
        argv = argv[:5] + [tmp_path / a if a.startswith("gen.") else a for a in args]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert not any(tmp_path.iterdir())  # nothing written


def test_a_model_that_is_not_there_is_one_line(capsys, tmp_path):
    code, _, err = run_cli(capsys, "generate", "--model", tmp_path / "none.gguf", "--prompt", PROMPT, "-o",
                           tmp_path / "gen.json")
    assert code == 1 and err.count("\n") == 1 and "none.gguf: no such file or folder" in err


def test_a_name_that_is_no_model_gets_the_list_of_models_as_from_every_command(capsys, tmp_path):
    for command in (["generate", "--prompt", PROMPT, "-o", tmp_path / "gen.json"], ["trace"]):
        code, _, err = run_cli(capsys, *command, "--model", "smollm2")
        assert code == 1 and err.count("\n") == 1 and err.startswith(
            "attention-explorer: no built-in model or file called 'smollm2'; the built-in models are "), err
        assert "the real ones MiniLM-L6 (encoder), SmolLM2-135M (decoder)" in err


def test_a_known_model_is_found_by_its_name_without_its_kind_in_any_case(capsys, tmp_path, monkeypatch):
    from attention_explorer.engine.pretrained import catalog

    monkeypatch.setattr(catalog, "model_location", lambda model: Path(BERT))  # no install needed
    code, _, err = run_cli(capsys, "generate", "--model", "minilm-l6", "--prompt", PROMPT, "-o", tmp_path / "gen.json")
    assert code == 2 and "MiniLM-L6 (encoder) is an encoder" in err, err


@pytest.mark.parametrize(("suffix", "magic"), [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".gif", b"GIF89a")])
def test_a_picture_of_the_generation(capsys, tmp_path, suffix, magic):
    target = tmp_path / f"gen{suffix}"
    scale = ["--image-scale", 2] if suffix != ".svg" else []
    code, out, err = run_cli(capsys, "generate", "--model", GPT2, "--prompt", PROMPT, "--tokens", 4, "--layer", 2,
                             "--head", 3, "--span", "data", *scale, "-o", target)
    assert code == 0 and out == "" and err == "", err
    data = target.read_bytes()
    assert data.startswith(magic)
    command = f"--layer 2 --head 3 --span data {'--image-scale 2 ' if scale else ''}-o {target}".encode()
    if suffix == ".gif":  # a GIF comment is stored in blocks of 255 bytes, each after its length: read it whole
        from PIL import Image

        with Image.open(target) as gif:
            data = gif.info["comment"]
    assert command in data  # the command that makes it again, in the PNG's text, the SVG's metadata, the GIF's comment
    if suffix == ".png":
        from PySide6 import QtGui

        from attention_explorer.generation_figure import built_generation_figure

        model = open_pretrained(GPT2)
        generation = generate(model, PROMPT, GenerationSettings(4))
        with built_generation_figure(model, generation, 1, 2, "data") as drawn:
            size = round(drawn.figure.width * 2), round(drawn.figure.height * 2)
        image = QtGui.QImage.fromData(data)
        assert (image.width(), image.height()) == size


def test_a_picture_too_large_is_refused_before_the_model_writes(capsys, tmp_path, monkeypatch):
    import attention_explorer.engine.pretrained.generate as generating
    import attention_explorer.image_export as image_export

    monkeypatch.setattr(image_export, "MAX_IMAGE_PIXELS", 1_000_000)

    def no_writing(*_args, **_kwargs):
        raise AssertionError("the model wrote")

    monkeypatch.setattr(generating, "generate", no_writing)
    code, out, err = run_cli(capsys, "generate", "--model", LLAMA, "--prompt", PROMPT, "--tokens", 50,
                             "--image-scale", 4, "-o", tmp_path / "gen.png")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "50 tokens after a prompt of 9 could make a picture of" in err and "give a smaller --image-scale" in err
    assert not any(tmp_path.iterdir())


def test_a_picture_that_cannot_be_written_fails_before_the_model_is_opened(capsys, tmp_path, monkeypatch):
    import attention_explorer.engine.pretrained as pretrained

    monkeypatch.setattr(pretrained, "open_pretrained", lambda *_: pytest.fail("the model was opened"))
    code, _, err = run_cli(capsys, "generate", "--model", LLAMA, "--prompt", PROMPT, "-o", tmp_path / "no" / "gen.gif")
    assert code == 1 and err.count("\n") == 1 and "cannot write" in err


def test_the_installed_program_draws_offscreen_by_itself(tmp_path):
    program = shutil.which("attention-explorer") or str(Path(sys.executable).with_name("attention-explorer"))
    if not Path(program).exists():
        pytest.skip("the attention-explorer program is not installed")
    env = {key: value for key, value in os.environ.items() if key not in ("QT_QPA_PLATFORM", "DISPLAY",
                                                                          "WAYLAND_DISPLAY")}
    target = tmp_path / "gen.gif"
    result = subprocess.run([program, "generate", "--model", str(LLAMA), "--prompt", PROMPT, "--tokens", "3",
                             "-o", str(target)], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert target.read_bytes().startswith(b"GIF89a")


BART = DATA / "tiny-bart"


def test_an_encoder_decoder_writes_a_target_for_its_source_as_json(capsys, tmp_path):
    """Drawn with a seed, its steps' candidates and the rows of layer 2, head 3: the engine's own."""
    from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder
    from attention_explorer.engine.pretrained.encoder_decoder_write import write_target
    from attention_explorer.engine.pretrained.generate import GenerationSettings
    from attention_explorer.engine.pretrained.sampling import Sampling

    code, _, err = run_cli(capsys, "generate", "--model", BART, "--prompt", PROMPT, "--tokens", "6", "--temperature",
                           "1.2", "--seed", "5", "--layer", "2", "--head", "3", "-o", tmp_path / "bart.json")
    assert code == 0, err
    written = json.loads((tmp_path / "bart.json").read_text(encoding="utf-8"))
    model = open_encoder_decoder(BART)
    expected = write_target(model, PROMPT, GenerationSettings(tokens=6, sampling=Sampling(temperature=1.2, seed=5)))
    assert [t["token_id"] for t in written["source_tokens"]] == expected.source.ids.tolist()
    assert written["decoder_start"]["token_id"] == 2 and written["source"] == PROMPT
    assert [s["token_id"] for s in written["steps"]] == expected.ids.tolist()
    assert written["written"] == expected.written and written["stopped"] == expected.stopped
    assert (written["attention_layers"], written["attention_heads"]) == ([2], [3])
    for ours, step in zip(written["steps"], expected.steps, strict=True):
        assert [c["token_id"] for c in ours["candidates"]] == [c.token_id for c in step.choice.candidates]
        assert ours["forced"] == step.forced
        np.testing.assert_allclose(ours["cross_attention"][0][0], step.cross_attention[1, 2], atol=1e-7)
        np.testing.assert_allclose(ours["self_attention"][0][0], step.self_attention[1, 2], atol=1e-7)


@pytest.mark.parametrize(("args", "message"), [
    (["--ablate", "1:1", "--layer", "1"], "every head on and no chat template: drop --ablate"),
    (["--chat"], "drop --chat"),
    (["-o", "gen.csv"], "an encoder–decoder's writing is written as JSON"),
    (["--tokens", "65"], "tiny-bart's decoder writes from 1 to 64 tokens, not 65"),
    (["--head", "9"], "--head must be between 1 and 8"),
])
def test_an_encoder_decoder_s_mistakes_are_one_line_and_exit_2(capsys, tmp_path, args, message):
    argv = ["generate", "--model", BART, "--prompt", PROMPT, "-o", tmp_path / "gen.json"] + args
    if "-o" in args:
        argv = argv[:5] + [tmp_path / a if a.startswith("gen.") else a for a in args]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert not any(tmp_path.iterdir())
