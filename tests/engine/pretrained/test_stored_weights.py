"""Weights kept as the file stores them (bf16 and f16 safetensors, GGUF blocks), each layer converted
when it is computed: every number the engine gives is bit for bit the one of the weights converted to
float32 at open, through the forward, a view's recomputation of a layer, an ablation's rerun, a
generation and the census; the layers a view reads again are not converted again; the choice between
the two forms follows the memory free; a damaged tensor is refused when its layer is first read."""

import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.engine.census.next_token_loss import next_token_losses
from attention_explorer.engine.errors import ModelError
from attention_explorer.engine.pretrained import model as model_module
from attention_explorer.engine.pretrained import open_pretrained, stored_rows
from attention_explorer.engine.pretrained import stored_layers as stored_layers_module
from attention_explorer.engine.pretrained import weights as weights_module
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate
from attention_explorer.engine.pretrained.safetensors_reader import read_safetensors
from attention_explorer.engine.pretrained.stored_layers import KEPT_LAYERS, StoredLayers
from attention_explorer.engine.pretrained.stored_rows import StoredRows

pytest.importorskip("tokenizers")

TEXT = "the cat sat on the mat 2017"
FOLDERS = ["tiny-llama", "tiny-qwen2", "tiny-gpt2", "tiny-gpt-neox", "tiny-bert", "tiny-modernbert", "tiny-gemma2",
           "tiny-phi3"]
GGUF_FILES = ["tiny-llama.gguf", "tiny-qwen2.gguf", "tiny-gpt2.gguf", "tiny-phi3.gguf"]  # Q8_0, Q4_0, Q4_1, F16


def _to_bf16(array: np.ndarray) -> np.ndarray:
    """float32 → bfloat16 bits (uint16), rounded to nearest even, as torch rounds."""
    bits = array.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)


def sixteen_bit_copy(data: Path, tmp_path: Path, name: str, dtype: str, write_safetensors) -> Path:
    """The tiny checkpoint `name` copied under tmp_path with every tensor stored as `dtype` (BF16, F16)."""
    folder = tmp_path / f"{name}-{dtype.lower()}"
    shutil.copytree(data / name, folder)
    for path in folder.glob("*.safetensors"):
        tensors = read_safetensors(path)
        write_safetensors(path, {key: _to_bf16(value) if dtype == "BF16" else value.astype(np.float16)
                                 for key, value in tensors.items()}, dtype=dtype)
    return folder


@pytest.fixture(autouse=True)
def rows_in_small_blocks(monkeypatch):
    """The stored embedding and output matrices read 64 rows at a time, so the tiny models' 320 to 400
    tokens take several blocks, as a real vocabulary does."""
    monkeypatch.setattr(stored_rows, "ROWS_AT_ONCE", 64)


def both(path: Path):
    """The model at `path` opened twice: its weights converted at open, and kept stored."""
    return open_pretrained(path, weights="float32"), open_pretrained(path, weights="stored")


def assert_same_run(converted, stored, ablate=frozenset()):
    a, b = converted.run(TEXT, ablate), stored.run(TEXT, ablate)
    ra, rb = a.forward_result, b.forward_result
    assert all(np.array_equal(x, y) for x, y in zip(ra.layer_inputs, rb.layer_inputs, strict=True))
    assert np.array_equal(ra.thumbnails, rb.thumbnails) and np.array_equal(ra.sinks, rb.sinks)
    assert (ra.next_logits is None and rb.next_logits is None) or np.array_equal(ra.next_logits, rb.next_logits)
    for layer in range(converted.n_layers):
        la, lb = a.layer_trace(layer), b.layer_trace(layer)
        assert np.array_equal(la.output, lb.output)
        for ha, hb in zip(la.heads, lb.heads, strict=True):
            assert all(np.array_equal(getattr(ha, part), getattr(hb, part))
                       for part in ("q", "k", "v", "weights", "scores", "output"))
    return a, b


@pytest.mark.parametrize("dtype", ["BF16", "F16"])
@pytest.mark.parametrize("name", FOLDERS)
def test_a_sixteen_bit_checkpoint_kept_stored_gives_the_numbers_of_its_float32_weights(
        data, tmp_path, write_safetensors, name, dtype):
    converted, stored = both(sixteen_bit_copy(data, tmp_path, name, dtype, write_safetensors))
    assert isinstance(stored.weights.layers, StoredLayers) and isinstance(converted.weights.layers, list)
    assert isinstance(stored.weights.token_embedding, StoredRows)
    first, _ = assert_same_run(converted, stored)
    ablate = frozenset({(converted.n_layers - 1, 0)})  # a rerun from the last layer
    a, b = converted.run(TEXT, ablate, previous=first), stored.run(TEXT, ablate, previous=first)
    assert np.array_equal(a.forward_result.thumbnails, b.forward_result.thumbnails)


@pytest.mark.parametrize("name", GGUF_FILES)
def test_a_quantised_gguf_kept_in_its_blocks_gives_the_numbers_of_its_dequantised_weights(data, name):
    assert_same_run(*both(data / name), ablate=frozenset({(0, 1)}))


@pytest.mark.parametrize("source", ["tiny-llama.gguf", "tiny-gpt2"])
def test_a_generation_and_the_census_read_stored_layers_as_float32_ones(data, source):
    converted, stored = both(data / source)
    settings = GenerationSettings(tokens=6)
    a, b = generate(converted, TEXT, settings), generate(stored, TEXT, settings)
    assert [s.token_id for s in a.steps] == [s.token_id for s in b.steps]
    assert all(np.array_equal(x.attention, y.attention) for x, y in zip(a.steps, b.steps, strict=True))
    losses = [next_token_losses(model, model.run(TEXT)) for model in (converted, stored)]
    assert np.array_equal(*losses)


def test_nothing_of_the_layers_is_read_at_open_and_a_view_of_a_layer_just_run_converts_nothing(data):
    stored = open_pretrained(data / "tiny-llama", weights="stored")
    layers = stored.weights.layers
    assert layers.conversions == 0
    trace = stored.run(TEXT)
    assert layers.conversions == stored.n_layers
    trace.layer_trace(stored.n_layers - 1)
    assert layers.conversions == stored.n_layers


class Maker:
    """A layer maker that records what it made and fails if two layers are made at once."""

    def __init__(self, bad: int = -1):
        self.made, self.busy, self.bad = [], threading.Lock(), bad

    def __call__(self, index: int) -> dict:
        assert self.busy.acquire(blocking=False), "two layers made at once"
        try:
            time.sleep(0.01)
            if index == self.bad:
                raise ModelError(f"layer {index} is damaged")
            self.made.append(index)
            return {"layer": index}
        finally:
            self.busy.release()


def test_layers_read_one_after_another_are_each_made_once_the_next_ahead():
    maker = Maker()
    layers = StoredLayers(5, maker)
    assert [layers[i]["layer"] for i in range(5)] == [0, 1, 2, 3, 4]
    assert maker.made == [0, 1, 2, 3, 4] and layers.conversions == 5
    assert layers[4] is layers[-1] and [layers[3]["layer"], layers[4]["layer"]] == [3, 4]
    assert layers.conversions == 5  # the last KEPT_LAYERS kept
    with pytest.raises(IndexError):
        layers[5]


def test_layers_read_out_of_order_are_made_again_when_not_kept():
    maker = Maker()
    layers = StoredLayers(6, maker)
    assert [layers[i]["layer"] for i in (3, 5, 3, 1, 5)] == [3, 5, 3, 1, 5]
    assert maker.made == [3, 5, 1, 5] and KEPT_LAYERS == 2


def test_a_layer_that_fails_ahead_fails_when_it_is_read():
    maker = Maker(bad=2)
    layers = StoredLayers(4, maker)
    assert layers[1]["layer"] == 1  # reading on makes layer 2 ahead, which fails there
    with pytest.raises(ModelError, match="layer 2 is damaged"):
        layers[2]
    assert layers[0]["layer"] == 0 and layers[3]["layer"] == 3


def test_layers_made_at_open_are_all_kept_until_told_to_hold_a_few_and_kept_again_as_made_after():
    maker = Maker()
    layers = StoredLayers(6, maker, made=[{"layer": i, "at open": True} for i in range(6)])
    assert layers.can_hold_all and layers.holds_all and layers.held == 6
    assert [layers[i]["layer"] for i in (5, 0, 3)] == [5, 0, 3] and maker.made == []  # nothing made again
    layers.hold_all(False)
    assert layers.held == KEPT_LAYERS  # the ones read last stay
    assert layers[0]["at open"] and layers[3]["at open"]
    assert layers[1]["layer"] == 1 and maker.made[0] == 1  # let go: made again from the file
    layers.hold_all(True)
    for i in range(6):
        layers[i]
    assert layers.held == 6 and layers.conversions == len(maker.made)
    made = len(maker.made)
    assert [layers[i]["layer"] for i in range(6)] == list(range(6)) and len(maker.made) == made


def test_stored_layers_hold_a_few_whatever_they_are_told():
    layers = StoredLayers(5, Maker())
    layers.hold_all(True)
    for i in range(5):
        layers[i]
    assert not layers.can_hold_all and layers.held <= KEPT_LAYERS


@pytest.mark.parametrize("source", ["tiny-llama", "tiny-llama.gguf"])
def test_a_decoder_converted_at_open_lets_most_layers_go_for_a_long_text_and_reads_it_to_the_bit(data, monkeypatch,
                                                                                               source):
    """A long text's layer inputs outgrow the layers: the model keeps a few made while it reads one,
    makes the others again from its file (a folder's safetensors, a GGUF file's blocks) as the forward
    reaches them, the same numbers to the bit; a short text, or writing, keeps every layer again."""
    monkeypatch.setattr(model_module, "FEW_LAYERS_FROM_TOKENS", 8)
    monkeypatch.setattr(stored_layers_module, "KEPT_LAYERS", 1)  # of the tiny model's 2
    model = open_pretrained(data / source)
    plain = open_pretrained(data / source, weights="float32")
    layers = model.weights.layers
    short, long = "the cat sat", "the cat sat on the mat because it was tired and the dog was not"
    assert len(model.tokenizer.encode(short).ids) < 8 <= len(model.tokenizer.encode(long).ids)
    model.run(short)
    assert layers.holds_all and layers.held == model.n_layers and layers.conversions == 0
    read = model.run(long, frozenset({(1, 0)}))
    assert not layers.holds_all and layers.held == 1 and layers.conversions > 0
    np.testing.assert_array_equal(read.thumbnails, plain.run(long, frozenset({(1, 0)})).thumbnails)
    np.testing.assert_array_equal(read.layer_weights(1), plain.run(long, frozenset({(1, 0)})).layer_weights(1))
    model.run(short)
    assert layers.holds_all and layers.held == model.n_layers
    model.run(long)
    generate(model, long, GenerationSettings(tokens=2))
    assert layers.holds_all and layers.held == model.n_layers


def _form(model) -> str:
    """"float32", "float32, remade" (converted at open, the file kept open to make layers again: a
    decoder opened "auto") or "stored"."""
    layers = model.weights.layers
    if isinstance(layers, list):
        return "float32"
    return "float32, remade" if layers.can_hold_all and layers.holds_all else "stored"


def test_the_form_follows_the_memory_free_unless_asked(data, monkeypatch):
    """float32 when its weights take at most half the memory free, stored when not, either when asked;
    refused when even the stored form does not fit, or float32 is asked for and does not fit. A decoder
    converted because it fitted keeps its file open, to let most of its layers go for a long text."""
    model = open_pretrained(data / "tiny-llama")
    float32_bytes = model.arch.parameters * 4
    monkeypatch.setattr(weights_module, "free_memory_bytes", lambda: 4 * float32_bytes)
    assert _form(open_pretrained(data / "tiny-llama")) == "float32, remade"
    assert _form(open_pretrained(data / "tiny-llama.gguf")) == "float32, remade"
    assert _form(open_pretrained(data / "tiny-bert")) == "float32"  # an encoder reads at most 512 tokens
    monkeypatch.setattr(weights_module, "free_memory_bytes", lambda: int(1.5 * float32_bytes))
    assert _form(open_pretrained(data / "tiny-llama")) == "stored"
    assert _form(open_pretrained(data / "tiny-llama.gguf")) == "stored"
    assert _form(open_pretrained(data / "tiny-llama", weights="float32")) == "float32"
    monkeypatch.setattr(weights_module, "free_memory_bytes", lambda: None)  # unknown: float32, as before
    assert _form(open_pretrained(data / "tiny-llama")) == "float32, remade"
    assert _form(open_pretrained(data / "tiny-llama", weights="stored")) == "stored"
    with pytest.raises(ValueError, match="weights must be one of auto, float32, stored, not 'bf16'"):
        open_pretrained(data / "tiny-llama", weights="bf16")


@pytest.mark.parametrize(("tensor", "where", "value"), [
    ("layers.1.mlp.down_proj", (0, 0), np.nan), ("layers.1.self_attn.k_proj", (5, 3), -np.inf),
    ("layers.0.mlp.up_proj", (7, 2), np.inf), ("embed_tokens", (300, 5), np.nan)])
def test_a_damaged_tensor_of_stored_weights_is_refused_when_it_is_read(data, tmp_path, write_safetensors, tensor,
                                                                       where, value):
    """A NaN or an infinity (−∞ too: the smallest number, not the largest) in a layer, in a matrix laid
    out beside others (k beside q and v, up beside the gate), or in the embedding's rows of tokens no
    text reads but which every next-token score multiplies."""
    folder = sixteen_bit_copy(data, tmp_path, "tiny-llama", "BF16", write_safetensors)
    path = folder / "model.safetensors"
    tensors = read_safetensors(path)
    name = next(key for key in tensors if tensor in key)
    tensors[name][where] = value
    write_safetensors(path, {key: _to_bf16(value) for key, value in tensors.items()}, dtype="BF16")
    message = (rf"model.safetensors: tensor '[a-z.]*{tensor}.weight' holds values that are not numbers \(NaN\) or "
               rf"infinite; the file is damaged")
    with pytest.raises(ModelError, match=message):
        open_pretrained(folder, weights="float32")
    stored = open_pretrained(folder, weights="stored")  # nothing of them is read at open
    with pytest.raises(ModelError, match=message):
        stored.run(TEXT)


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-roberta", "tiny-distilbert", "tiny-modernbert"])
def test_an_encoder_with_float32_layers_keeps_its_embedding_in_the_file_and_reads_its_text_s_rows(data, name):
    """An encoder has no next-token scores, so a text reads only its own rows of its embedding (MiniLM's
    is half its weights): the rows stay in the file, and the numbers are those of the whole matrix."""
    model = open_pretrained(data / name, weights="float32")
    assert isinstance(model.weights.token_embedding, StoredRows) and isinstance(model.weights.layers, list)
    tensors = read_safetensors(data / name / "model.safetensors")
    embedding = next(value for key, value in tensors.items() if key.endswith(("word_embeddings.weight",
                                                                               "tok_embeddings.weight")))
    ids = model.tokenizer.encode(TEXT).ids
    assert np.array_equal(model.weights.token_embedding[ids], embedding[ids])


def test_an_encoder_s_embedding_kept_in_the_file_is_checked_whole_at_open(data, tmp_path, write_safetensors):
    """A NaN in a row no text reads is refused at open, as in the weights converted at open."""
    folder = tmp_path / "tiny-bert"
    shutil.copytree(data / "tiny-bert", folder)
    path = folder / "model.safetensors"
    tensors = read_safetensors(path)
    name = next(key for key in tensors if key.endswith("word_embeddings.weight"))
    tensors[name][len(tensors[name]) - 1, 3] = np.nan
    write_safetensors(path, tensors)
    with pytest.raises(ModelError, match=r"word_embeddings.weight' holds values that are not numbers \(NaN\)"):
        open_pretrained(folder, weights="float32")


def test_the_command_lines_choices_are_the_engines():
    from attention_explorer.cli_real import WEIGHT_MODES

    assert WEIGHT_MODES == weights_module.WEIGHT_MODES


def test_the_command_line_opens_a_model_kept_stored_and_says_a_wrong_choice_in_one_line(data, tmp_path, capsys):
    from attention_explorer.cli import main

    outputs = []
    for weights in ("float32", "stored"):
        out = tmp_path / f"{weights}.json"
        assert main(["trace", "--model", str(data / "tiny-llama.gguf"), "--sentence", TEXT, "--layer", "2",
                     "--weights", weights, "-o", str(out)]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    capsys.readouterr()
    assert main(["trace", "--model", str(data / "tiny-llama.gguf"), "--weights", "bf16"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--weights" in err and "'bf16'" in err


def test_stored_layers_are_read_from_the_file_that_was_opened_even_once_its_name_is_gone(data, tmp_path):
    folder = tmp_path / "tiny-llama"
    shutil.copytree(data / "tiny-llama", folder)
    converted, stored = both(folder)
    (folder / "model.safetensors").unlink()
    assert np.array_equal(converted.run(TEXT).forward_result.next_logits, stored.run(TEXT).forward_result.next_logits)


def test_two_threads_reading_stored_weights_at_once_read_the_float32_numbers(data, tmp_path, write_safetensors):
    """A forward (its next layer made ahead on a third thread) while another thread scores every token
    with the embedding: each reads the file in its own turn."""
    converted, stored = both(sixteen_bit_copy(data, tmp_path, "tiny-gpt2", "BF16", write_safetensors))
    trace = converted.run(TEXT)
    expected_run, expected_losses = trace.forward_result.thumbnails, next_token_losses(converted, trace)
    stored_trace = stored.run(TEXT)
    failures = []

    def score():
        for _ in range(20):
            if not np.array_equal(next_token_losses(stored, stored_trace), expected_losses):
                failures.append("losses")

    scorer = threading.Thread(target=score)
    scorer.start()
    for _ in range(20):
        if not np.array_equal(stored.run(TEXT).forward_result.thumbnails, expected_run):
            failures.append("forward")
    scorer.join()
    assert failures == []


@pytest.mark.parametrize("name", ["tiny-llama.gguf", "tiny-qwen2.gguf", "tiny-gpt2.gguf", "tiny-phi3.gguf",
                                  "tiny-gpt-neox.gguf", "tiny-gemma2.gguf"])
def test_a_gguf_matrix_read_into_its_layer_s_columns_is_the_dequantised_matrix_transposed(data, name, monkeypatch):
    """A GGUF layer's matrices are dequantised a few rows at a time straight into the layer's columns, in
    the family's row order (Llama's q/k rows, GPT-NeoX's fused qkv) or as stored (GPT-2's transposed
    weights): each the same numbers as the whole matrix dequantised, reordered and transposed. Three rows
    at a time, so every matrix takes several blocks and the reordering crosses them."""
    from attention_explorer.engine.pretrained import gguf_model
    from attention_explorer.engine.pretrained.gguf_reader import GGUFFile
    from attention_explorer.engine.pretrained.weights import FileMatrix

    monkeypatch.setattr(gguf_model, "GGUF_ROWS_AT_ONCE", 3)
    gguf = GGUFFile(data / name)
    _family, spec = gguf_model._spec(gguf)
    arch = gguf_model.architecture_from_gguf(gguf)
    source = gguf_model._tensors(gguf, spec, arch)
    checked = 0
    for tensor in source.shapes:
        shape = source.shapes[tensor]
        if len(shape) != 2 or not tensor.endswith(".weight") or not any(part.isdigit() for part in tensor.split(".")):
            continue
        matrix = source.transposed(tensor, shape)
        assert isinstance(matrix, FileMatrix)
        into = np.full(matrix.shape, np.nan, dtype=np.float32)
        matrix.read(into)
        np.testing.assert_array_equal(into, source.get(tensor, shape).T)
        checked += 1
    assert checked >= 4
