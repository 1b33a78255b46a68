"""The messages a damaged real-model file gets: one ModelError naming the file and the field, for
each case that once misled (a TypeError, an IndexError, "nested too deeply" with no file, "no
tokenizer.json" for a pipe, a silent acceptance, a NaN), and the refusals that keep memory bounded."""

import contextlib
import json
import os
import shutil
import socket
import struct
import threading
import tracemalloc

import numpy as np
import pytest

from attention_explorer.engine.errors import ModelError, SentenceError
from attention_explorer.engine.pretrained import open_pretrained
from attention_explorer.engine.pretrained.gguf_model import architecture_from_gguf
from attention_explorer.engine.pretrained.gguf_reader import GGUFFile
from damaged_models.formats import (
    ARRAY,
    BOOL,
    F32,
    STRING,
    U32,
    join_safetensors,
    parse_gguf,
    split_safetensors,
    write_gguf,
)

pytest.importorskip("tokenizers")

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, sockets and symbolic links as POSIX has them")


def copy_of(data, tmp_path, name="tiny-bert"):
    shutil.copytree(data / name, tmp_path / name)
    return tmp_path / name


def edit_json(path, **changes):
    content = json.loads(path.read_text())
    content.update(changes)
    path.write_text(json.dumps(content))


def refusal(source) -> str:
    """The message of opening `source` and running a sentence through it, in a thread with a bound on
    a hang (generous, not a timing measurement)."""
    outcome = []

    def attempt():
        try:
            open_pretrained(source).run("the cat sat on the mat")
            outcome.append("opened")
        except ModelError as error:
            outcome.append(str(error))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert outcome, f"opening {source} hung"
    return outcome[0]


def write_gguf_with(data, tmp_path, key, type_id, value):
    g = parse_gguf((data / "tiny-llama.gguf").read_bytes()).with_meta(key, type_id, value)
    path = tmp_path / "tiny-llama.gguf"
    path.write_bytes(write_gguf(g))
    return path


# --- the messages that misled ---------------------------------------------------------------------

def test_an_activation_given_as_a_list_is_named_not_a_type_error(data, tmp_path):
    folder = copy_of(data, tmp_path)
    edit_json(folder / "config.json", hidden_act=["gelu"])
    assert refusal(folder) == ("config.json: field 'hidden_act' must be one of gelu, gelu_new, gelu_pytorch_tanh, "
                               "gelu_fast, silu, swish, not ['gelu']")


@pytest.mark.parametrize("value, shown", [("384", "'384'"), (True, "True"), (-1, "-1"), (0, "0"), (0.5, "0.5")])
def test_an_epsilon_that_is_text_true_or_not_small_and_positive_is_refused(data, tmp_path, value, shown):
    folder = copy_of(data, tmp_path)
    edit_json(folder / "config.json", layer_norm_eps=value)
    assert refusal(folder) == (f"config.json: field 'layer_norm_eps' must be a small positive number (above 0, "
                               f"at most 0.1), not {shown}")


def test_a_tokenizer_with_ids_past_the_embedding_is_refused_when_opened(data, tmp_path):
    folder = copy_of(data, tmp_path)
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    tokenizer["model"]["vocab"]["cat"] = 99_999
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    assert refusal(folder) == ("tokenizer.json: token id 99,999 ('cat') is past the 57 rows of the model's "
                               "embedding; the tokenizer belongs to another model")


def test_a_template_token_past_the_embedding_is_refused_when_it_appears(data, tmp_path):
    folder = copy_of(data, tmp_path)
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    tokenizer["post_processor"]["special_tokens"]["[CLS]"]["ids"] = [99_999]
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    assert refusal(folder) == ("tokenizer.json: token id 99,999 ('[CLS]') is past the 57 rows of the model's "
                               "embedding; the tokenizer belongs to another model")


def test_deep_nesting_in_a_safetensors_header_names_the_file(data, tmp_path):
    folder = copy_of(data, tmp_path)
    _, blob = split_safetensors((folder / "model.safetensors").read_bytes())
    (folder / "model.safetensors").write_bytes(join_safetensors(None, blob, raw_header=b"[" * 5000 + b"]" * 5000))
    assert refusal(folder) == ("model.safetensors (its header): nested more than 64 levels deep (line 1); a "
                               "safetensors header needs only a few levels")


@pytest.mark.parametrize("value, shown", [(0, "0"), ("4096", "'4096'")])
def test_a_gguf_context_length_of_zero_or_text_is_named_not_no_text_to_look_at(data, tmp_path, value, shown):
    path = write_gguf_with(data, tmp_path, "llama.context_length", STRING if isinstance(value, str) else U32, value)
    assert refusal(path) == (f"tiny-llama.gguf: metadata field 'llama.context_length' must be a positive whole "
                             f"number (at most 2,147,483,647), not {shown}")


def test_a_gguf_with_no_layers_is_refused(data, tmp_path):
    path = write_gguf_with(data, tmp_path, "llama.block_count", U32, 0)
    assert refusal(path).startswith("tiny-llama.gguf: metadata field 'llama.block_count' must be a positive whole")


@pytest.mark.parametrize("alignment", [7, 0, 48, 2 ** 31])
def test_a_gguf_alignment_that_is_not_a_power_of_two_is_refused(data, tmp_path, alignment):
    path = write_gguf_with(data, tmp_path, "general.alignment", U32, alignment)
    assert refusal(path) == (f"tiny-llama.gguf: metadata field 'general.alignment' must be a power of two up to "
                             f"1,048,576, not {alignment}")


def test_a_gguf_flag_of_the_wrong_type_is_named(data, tmp_path):
    path = write_gguf_with(data, tmp_path, "tokenizer.ggml.add_bos_token", STRING, "yes")
    assert refusal(path) == ("tiny-llama.gguf: metadata field 'tokenizer.ggml.add_bos_token' must be true or false, "
                             "not 'yes'")


def test_a_config_with_fewer_layers_than_the_checkpoint_is_refused_not_run_on_part_of_it(data, tmp_path):
    folder = copy_of(data, tmp_path)
    edit_json(folder / "config.json", num_hidden_layers=1)
    assert refusal(folder) == ("config.json ('num_hidden_layers') says 1 layer but model.safetensors holds 2; the "
                               "configuration does not belong to these weights")
    edit_json(folder / "config.json", num_hidden_layers=3)
    assert refusal(folder) == ("config.json ('num_hidden_layers') says 3 layers but model.safetensors has no "
                               "tensors of layer 3; the file is incomplete or not this model's")


def test_a_gguf_with_more_blocks_than_it_declares_is_refused(data, tmp_path):
    g = parse_gguf((data / "tiny-llama.gguf").read_bytes())
    g.tensors += [type(t)(t.name.replace("blk.1.", "blk.2."), t.dims, t.type_id, t.data)
                  for t in g.tensors if t.name.startswith("blk.1.")]
    path = tmp_path / "tiny-llama.gguf"
    path.write_bytes(write_gguf(g))
    assert refusal(path) == ("metadata field 'llama.block_count' says 2 layers but tiny-llama.gguf holds 3; the "
                             "configuration does not belong to these weights")


def test_a_tokenizers_panic_is_a_model_error_naming_the_tokenizer(data, tmp_path):
    """pyo3's PanicException derives from BaseException: it used to pass every `except Exception`."""
    folder = copy_of(data, tmp_path, "tiny-gpt2")
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    tokenizer["normalizer"] = {"type": "Replace", "pattern": {"String": ""}, "content": "x"}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    message = refusal(folder)
    assert message.startswith("tokenizer.json: the tokenizer failed on this text (index out of bounds")


def test_weights_that_are_not_numbers_are_refused_naming_the_tensor(data, tmp_path):
    folder = copy_of(data, tmp_path)
    header, blob = split_safetensors((folder / "model.safetensors").read_bytes())
    begin, end = header["encoder.layer.0.attention.self.query.weight"]["data_offsets"]
    blob = blob[:begin] + struct.pack("<f", float("nan")) * ((end - begin) // 4) + blob[end:]
    (folder / "model.safetensors").write_bytes(join_safetensors(header, blob))
    assert refusal(folder) == ("model.safetensors: tensor 'encoder.layer.0.attention.self.query.weight' holds "
                               "values that are not numbers (NaN) or infinite; the file is damaged, download it again")


def test_weights_so_large_that_the_forward_overflows_are_refused_naming_the_model(data, tmp_path):
    folder = copy_of(data, tmp_path, "tiny-gpt2")
    header, blob = split_safetensors((folder / "model.safetensors").read_bytes())
    begin, end = header["transformer.h.0.attn.c_attn.weight"]["data_offsets"]
    blob = blob[:begin] + struct.pack("<f", 1e38) * ((end - begin) // 4) + blob[end:]
    (folder / "model.safetensors").write_bytes(join_safetensors(header, blob))
    assert refusal(folder) == ("tiny-gpt2: the model's numbers overflow on this text (not a number or infinite in "
                               "layer 1); its weights are damaged or not this model's")


# --- files that are not files -----------------------------------------------------------------------

@posix_only
@pytest.mark.parametrize("name", ["tokenizer.json", "config.json", "model.safetensors"])
def test_a_fifo_in_place_of_a_file_is_refused_at_once_naming_it(data, tmp_path, name):
    folder = copy_of(data, tmp_path)
    (folder / name).unlink()
    os.mkfifo(folder / name)
    assert refusal(folder) == (f"{folder / name}: is not a regular file (a device, pipe or socket); put the "
                               f"model's own {name} there")


@posix_only
def test_a_fifo_as_a_second_shard_or_as_the_gguf_file_is_refused(data, tmp_path):
    folder = copy_of(data, tmp_path)
    os.mkfifo(folder / "model-2.safetensors")
    assert refusal(folder) == (f"{folder / 'model-2.safetensors'}: is not a regular file (a device, pipe or "
                               f"socket); put the model's own model-2.safetensors there")
    os.mkfifo(tmp_path / "pipe.gguf")
    assert refusal(tmp_path / "pipe.gguf") == (f"{tmp_path / 'pipe.gguf'}: is not a regular file (a device, pipe "
                                               f"or socket); choose a .gguf file")


@posix_only
def test_a_link_to_a_fifo_a_loop_of_links_and_a_socket_are_named_not_reported_missing(data, tmp_path):
    folder = copy_of(data, tmp_path)
    tokenizer = folder / "tokenizer.json"
    tokenizer.unlink()
    os.mkfifo(folder / "pipe")
    tokenizer.symlink_to("pipe")
    assert refusal(folder).startswith(f"{tokenizer}: is not a regular file (a device, pipe or socket)")
    tokenizer.unlink()
    (folder / "other").symlink_to("tokenizer.json")
    tokenizer.symlink_to("other")
    assert refusal(folder) == (f"{tokenizer}: is a symbolic link that leads round in a loop; point it at the file "
                               f"itself")
    tokenizer.unlink()
    server = socket.socket(socket.AF_UNIX)  # a socket stands in for a device: nothing of the machine's is touched
    try:
        server.bind(str(tokenizer))
        assert refusal(folder).startswith(f"{tokenizer}: is not a regular file (a device, pipe or socket)")
    finally:
        server.close()


# --- memory: refused before anything is allocated --------------------------------------------------------

def _peak_while_opening(source) -> int:
    """The most memory Python and NumPy held at once while `source` was opened (or refused)."""
    tracemalloc.start()
    try:
        with contextlib.suppress(ModelError):
            open_pretrained(source)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_aliased_ranges_are_refused_without_an_array_per_alias(data, tmp_path):
    folder = copy_of(data, tmp_path)
    header, blob = split_safetensors((folder / "model.safetensors").read_bytes())
    biggest = max((n for n in header if n != "__metadata__"), key=lambda n: np.diff(header[n]["data_offsets"])[0])
    header.update({f"alias.{i}": dict(header[biggest]) for i in range(200)})  # 200 × 8 KB claimed in 8 KB
    (folder / "model.safetensors").write_bytes(join_safetensors(header, blob))
    assert refusal(folder).startswith("model.safetensors: tensors ")
    assert "claim the same bytes" in refusal(folder)
    assert _peak_while_opening(folder) < _peak_while_opening(data / "tiny-bert")  # less than opening the good one


def test_a_header_claiming_a_16_gb_tensor_is_refused_before_it_is_allocated(data, tmp_path):
    folder = copy_of(data, tmp_path)
    header, blob = split_safetensors((folder / "model.safetensors").read_bytes())
    header["embeddings.word_embeddings.weight"].update(shape=[2 ** 32], data_offsets=[0, 2 ** 34])
    (folder / "model.safetensors").write_bytes(join_safetensors(header, blob))
    assert refusal(folder).startswith("model.safetensors: tensor 'embeddings.word_embeddings.weight' ends at byte "
                                      "17,179,")
    assert _peak_while_opening(folder) < _peak_while_opening(data / "tiny-bert")


def test_a_gguf_count_no_file_can_hold_is_refused_at_once(data, tmp_path):
    g = parse_gguf((data / "tiny-llama.gguf").read_bytes())
    g.extra["n_meta"] = 2 ** 63
    path = tmp_path / "tiny-llama.gguf"
    path.write_bytes(write_gguf(g))
    assert refusal(path) == ("tiny-llama.gguf: the GGUF header is truncated or damaged (it lists "
                             "9,223,372,036,854,775,808 metadata entries, more than the 52,704 bytes of the file "
                             "can hold); download the file again")


# --- texts ----------------------------------------------------------------------------------------------

def test_a_real_models_text_is_limited_in_characters_before_it_is_tokenised(data):
    model = open_pretrained(data / "tiny-gpt2")
    with pytest.raises(SentenceError, match="^this text has 64,001 characters; real models take at most 64,000: "
                                            "shorten it$"):
        model.run("a" * 64_001)
    assert model.run("a " * 32_000).encoded.cut is not None  # at the limit: read, and cut to the model's length


def test_lone_surrogates_get_the_toy_models_message(data):
    with pytest.raises(SentenceError, match=r"^the sentence is not valid text: character 5 \(U\+DC80\) is half of a "
                                            r"character or an undecodable byte"):
        open_pretrained(data / "tiny-bert").run("the \udc80 cat")


def test_a_decoder_keeps_the_end_of_a_long_text_and_says_which_tokens(data):
    from tokenizers import Tokenizer

    text = " ".join(f"w{i}" for i in range(100)) + " the end"
    trace = open_pretrained(data / "tiny-gpt2").run(text)
    whole = Tokenizer.from_file(str(data / "tiny-gpt2" / "tokenizer.json")).encode(text)
    cut = trace.encoded.cut
    assert (cut.total_tokens, cut.kept_tokens, cut.keeps) == (len(whole.ids), 64, "end")
    assert trace.encoded.ids.tolist() == whole.ids[-64:]   # the last 64: the next tokens follow the text
    assert text[cut.first_char:].startswith(" w80") and cut.end_char == len(text)
    assert cut.describe() == "kept the last 64 of 294 tokens (from character 310), so the next tokens follow its end"


def test_an_encoder_keeps_the_start_of_a_long_text(data):
    text = " ".join(["the cat sat on the mat"] * 20)
    cut = open_pretrained(data / "tiny-bert").run(text).encoded.cut
    assert (cut.total_tokens, cut.kept_tokens, cut.keeps, cut.first_char) == (122, 64, "start", 0)
    assert cut.describe() == f"kept the first 64 of 122 tokens (up to character {cut.end_char:,})"
    assert text[:cut.end_char].split()[-1] in {"the", "cat", "sat", "on", "mat"}


def test_a_gguf_tokenizer_that_is_not_text_is_named(data, tmp_path):
    path = write_gguf_with(data, tmp_path, "tokenizer.ggml.model", BOOL, True)
    assert refusal(path) == ("tiny-llama.gguf: 'tokenizer.ggml.model' is True; only byte-level BPE ('gpt2'), "
                             "SentencePiece-style ('llama') and WordPiece ('bert') tokenizers are supported in GGUF "
                             "files")


def test_a_layer_whose_recomputed_scores_overflow_is_refused_where_it_is_shown(data, tmp_path):
    """One weight of W_Q made huge: the forward (which scales q before q·k) stays finite, but the layer's
    unscaled scores, √d_head times larger, overflow when the views ask for that layer."""
    folder = copy_of(data, tmp_path, "tiny-gpt2")
    header, blob = split_safetensors((folder / "model.safetensors").read_bytes())
    begin, _ = header["transformer.h.0.attn.c_attn.weight"]["data_offsets"]
    blob = bytearray(blob)
    for row in range(32):  # column 0 of W_Q (q's first feature) in every row: 3e37
        at = begin + 4 * 96 * row
        blob[at:at + 4] = struct.pack("<f", 3e37)
    (folder / "model.safetensors").write_bytes(join_safetensors(header, bytes(blob)))
    trace = open_pretrained(folder).run("the cat sat on the mat")
    assert np.isfinite(trace.all_weights()).all()
    with pytest.raises(ModelError, match=r"^tiny-gpt2: the model's numbers overflow on this text \(not a number or "
                                         r"infinite in layer 1's queries, keys, values or scores\)"):
        trace.layer_trace(0)
    with pytest.raises(ModelError, match="layer 1's queries"):  # asked again, refused again: never kept
        trace.layer_trace(0)
    assert np.isfinite(trace.layer_trace(1).heads[0].scores).all()


# --- GGUF files of the other architectures -----------------------------------------------------------------

def _damaged_gguf(data, tmp_path, name, change):
    """A copy of GGUF file `name` with `change` made to it (in place, or a changed copy returned)."""
    g = parse_gguf((data / name).read_bytes())
    g = change(g) or g
    path = tmp_path / name
    path.write_bytes(write_gguf(g))
    return path


@pytest.mark.parametrize("name", ["tiny-qwen2.gguf", "tiny-qwen3.gguf", "tiny-gemma.gguf", "tiny-gemma2.gguf",
                                  "tiny-phi3.gguf", "tiny-olmo2.gguf", "tiny-gemma3.gguf"])
def test_a_gguf_missing_a_metadata_field_names_its_key(data, tmp_path, name):
    arch = name.removeprefix("tiny-").removesuffix(".gguf")
    key = f"{arch}.attention.layer_norm_rms_epsilon"
    path = _damaged_gguf(data, tmp_path, name, lambda g: g.with_meta(key, None))
    assert refusal(path) == f"{name}: metadata field '{key}' is missing"


def test_a_gguf_count_of_the_wrong_type_names_its_own_key(data, tmp_path):
    path = _damaged_gguf(data, tmp_path, "tiny-qwen2.gguf",
                         lambda g: g.with_meta("qwen2.attention.head_count", STRING, "4"))
    assert refusal(path) == ("tiny-qwen2.gguf: metadata field 'qwen2.attention.head_count' must be a positive whole "
                             "number (at most 2,147,483,647), not '4'")


def _cut_tensor(name: str, width: int):
    def change(g):
        tensor = next(t for t in g.tensors if t.name == name)
        tensor.dims, tensor.data = [width], tensor.data[:4 * width]  # an F32 vector cut short
    return change


@pytest.mark.parametrize("name, tensor, expected", [
    ("tiny-qwen2.gguf", "blk.0.attn_q.bias", "(32,)"), ("tiny-qwen3.gguf", "blk.1.attn_k_norm.weight", "(16,)"),
    ("tiny-gemma.gguf", "blk.0.ffn_norm.weight", "(32,)"), ("tiny-gemma2.gguf", "blk.1.post_ffw_norm.weight", "(32,)"),
    ("tiny-olmo2.gguf", "blk.0.attn_q_norm.weight", "(32,)")])
def test_a_gguf_tensor_of_the_wrong_shape_is_named_as_the_file_names_it(data, tmp_path, name, tensor, expected):
    path = _damaged_gguf(data, tmp_path, name, _cut_tensor(tensor, 8))
    assert refusal(path) == (f"{name}: tensor '{tensor}' has shape (8,), expected {expected} from the model's "
                             f"configuration")


@pytest.mark.parametrize("name, tensor", [("tiny-qwen2.gguf", "blk.1.attn_v.bias"),
                                          ("tiny-qwen3.gguf", "blk.0.attn_q_norm.weight"),
                                          ("tiny-gemma.gguf", "output_norm.weight"),
                                          ("tiny-gemma2.gguf", "blk.0.post_attention_norm.weight"),
                                          ("tiny-phi3.gguf", "blk.1.attn_qkv.weight"),
                                          ("tiny-gpt2.gguf", "position_embd.weight"),
                                          ("tiny-gpt-neox.gguf", "blk.1.ffn_up.bias"),
                                          ("tiny-olmo2.gguf", "blk.1.post_ffw_norm.weight"),
                                          ("tiny-gemma3.gguf", "blk.2.attn_k_norm.weight"),
                                          ("tiny-bert.gguf", "token_embd_norm.bias"),
                                          ("tiny-roberta.gguf", "position_embd.weight"),
                                          ("tiny-modernbert.gguf", "blk.2.attn_norm.weight")])
def test_a_gguf_missing_a_tensor_its_family_needs_names_it(data, tmp_path, name, tensor):
    path = _damaged_gguf(data, tmp_path, name, lambda g: g.tensors.remove(next(t for t in g.tensors
                                                                                if t.name == tensor)))
    assert refusal(path) == (f"{name}: tensor '{tensor}' is missing; the file is incomplete or not a checkpoint of "
                             f"this architecture")


def test_a_gguf_of_an_architecture_that_does_not_open_names_it_and_those_that_do(data, tmp_path):
    path = write_gguf_with(data, tmp_path, "general.architecture", STRING, "mamba")
    assert refusal(path) == ("tiny-llama.gguf: 'general.architecture' is 'mamba', not an architecture this app opens "
                             "from GGUF files; it opens 'llama', 'qwen2', 'qwen3', 'gemma', 'gemma2', 'phi3', 'gpt2', "
                             "'gptneox', 'olmo2', 'gemma3', 'bert', 'modern-bert'")


@pytest.mark.parametrize("pre, said", [("llama-bpe", "'llama-bpe'"), (None, "missing")])
def test_a_gguf_pre_tokenizer_not_known_is_refused_not_split_otherwise(data, tmp_path, pre, said):
    path = _damaged_gguf(data, tmp_path, "tiny-qwen2.gguf",
                         lambda g: g.with_meta("tokenizer.ggml.pre", None if pre is None else STRING, pre))
    assert refusal(path) == (f"tiny-qwen2.gguf: metadata field 'tokenizer.ggml.pre' (how the text is split before "
                             f"its tokens are found) is {said}; the splits known here are 'gpt-2', 'olmo', "
                             f"'roberta-bpe', 'modern-bert', 'smollm', 'starcoder', 'refact', 'qwen2', 'dbrx', and "
                             f"another would give other tokens than llama.cpp does")


@pytest.mark.parametrize("key, type_id, value, said", [
    ("tokenizer.ggml.scores", None, None, "is missing"),
    ("tokenizer.ggml.scores", ARRAY, (F32, [0.0, 1.0]), "must be a finite number for each of the 400 tokens, not "
                                                          "array([0., 1.], dtype=float32)"),
    ("tokenizer.ggml.unknown_token_id", U32, 400, "must be a token (below 400), not 400")])
def test_a_sentencepiece_gguf_tokenizer_with_bad_scores_or_ids_is_named(data, tmp_path, key, type_id, value, said):
    path = _damaged_gguf(data, tmp_path, "tiny-gemma.gguf", lambda g: g.with_meta(key, type_id, value))
    assert refusal(path) == f"tiny-gemma.gguf: metadata field '{key}' {said}"


def _half_the_fused_qkv_rows(g):
    """Layer 1's fused q|k|v matrix with half its rows (its slower dimension) cut."""
    tensor = next(t for t in g.tensors if t.name == "blk.0.attn_qkv.weight")
    tensor.dims = [tensor.dims[0], tensor.dims[1] // 2]
    tensor.data = tensor.data[:len(tensor.data) // 2]


def test_a_gguf_fused_matrix_of_the_wrong_shape_is_named(data, tmp_path):
    """Phi-3's W_qkv holds q, k and v: 32 + 2 · 16 rows of 32."""
    path = _damaged_gguf(data, tmp_path, "tiny-phi3.gguf", _half_the_fused_qkv_rows)
    assert refusal(path) == ("tiny-phi3.gguf: tensor 'blk.0.attn_qkv.weight' has shape (32, 32), expected (64, 32) "
                             "from the model's configuration")


@pytest.mark.parametrize("name, dims, fraction", [("tiny-phi3.gguf", 5, "0.625"), ("tiny-phi3.gguf", 16, "2.0"),
                                                   ("tiny-gpt-neox.gguf", 3, "0.375")])
def test_a_gguf_turning_an_odd_or_too_wide_part_of_each_head_is_refused(data, tmp_path, name, dims, fraction):
    arch = {"tiny-phi3.gguf": "phi3", "tiny-gpt-neox.gguf": "gptneox"}[name]
    path = _damaged_gguf(data, tmp_path, name, lambda g: g.with_meta(f"{arch}.rope.dimension_count", U32, dims))
    assert refusal(path) == (f"{name}: rotary positions over {fraction} of each head of 8 dims turn {dims}; "
                             f"they pair the halves of what they turn, so they must turn an even number of dims, at "
                             f"least 2 and at most the head's")


def test_a_gguf_model_too_large_is_refused_before_its_tokenizer_is_built(data, tmp_path, monkeypatch):
    from attention_explorer.engine.pretrained import gguf_tokenizer

    built = []
    monkeypatch.setattr(gguf_tokenizer, "_merges_by_score", lambda *args: built.append(args) or [])
    path = _damaged_gguf(data, tmp_path, "tiny-gemma.gguf",
                         lambda g: g.with_meta("gemma.feed_forward_length", U32, 20_000_000))
    assert refusal(path) == ("tiny-gemma.gguf: the model has about 3.8 billion weights, 14 GiB as float32; the "
                             "largest this app opens is 2 billion")
    assert not built


@pytest.mark.parametrize("name, arch", [("tiny-gpt2.gguf", "gpt2"), ("tiny-gpt-neox.gguf", "gptneox"),
                                        ("tiny-bert.gguf", "bert")])
def test_a_layernorm_gguf_missing_its_epsilon_names_its_key(data, tmp_path, name, arch):
    """A LayerNorm model's epsilon has a key of its own (RMSNorm's is attention.layer_norm_rms_epsilon),
    named so whether its family reads config.json's `layer_norm_epsilon` (GPT-2) or `layer_norm_eps`."""
    key = f"{arch}.attention.layer_norm_epsilon"
    path = _damaged_gguf(data, tmp_path, name, lambda g: g.with_meta(key, None))
    assert refusal(path) == f"{name}: metadata field '{key}' is missing"


def test_a_modernbert_gguf_reads_its_epsilon_under_either_key_the_converter_writes(data, tmp_path):
    """The converter writes ModernBERT's `norm_eps` under RMSNorm's key (tiny-modernbert.gguf, from a config.json
    saved by transformers 5, has only it), and the released models' `layer_norm_eps` (the same number) under
    LayerNorm's, which llama.cpp reads: either opens, `norm_eps` first; without both, both keys are named."""
    rms, layer = "modern-bert.attention.layer_norm_rms_epsilon", "modern-bert.attention.layer_norm_epsilon"
    assert architecture_from_gguf(GGUFFile(data / "tiny-modernbert.gguf")).norm_eps == pytest.approx(1e-5)
    both = _damaged_gguf(data, tmp_path, "tiny-modernbert.gguf", lambda g: g.with_meta(layer, F32, 1e-3))
    assert architecture_from_gguf(GGUFFile(both)).norm_eps == pytest.approx(1e-5)
    only_layer = _damaged_gguf(data, tmp_path, "tiny-modernbert.gguf",
                               lambda g: g.with_meta(rms, None).with_meta(layer, F32, 1e-3))
    assert architecture_from_gguf(GGUFFile(only_layer)).norm_eps == pytest.approx(1e-3)
    neither = _damaged_gguf(data, tmp_path, "tiny-modernbert.gguf", lambda g: g.with_meta(rms, None))
    assert refusal(neither) == (f"tiny-modernbert.gguf: metadata fields '{rms}' and '{layer}' are both missing; the "
                                f"epsilon is under one of them")


def test_a_modernbert_gguf_naming_its_activation_is_read_with_it(data, tmp_path):
    """llama.cpp reads a derivative's `hidden_activation` (SiLU: a SwiGLU feed-forward), by transformers' names."""
    key = "modern-bert.hidden_activation"
    silu = _damaged_gguf(data, tmp_path, "tiny-modernbert.gguf", lambda g: g.with_meta(key, STRING, "silu"))
    assert architecture_from_gguf(GGUFFile(silu)).activation == "silu"
    assert architecture_from_gguf(GGUFFile(data / "tiny-modernbert.gguf")).activation == "gelu"
    odd = _damaged_gguf(data, tmp_path, "tiny-modernbert.gguf", lambda g: g.with_meta(key, STRING, "relu2"))
    assert refusal(odd).startswith(f"tiny-modernbert.gguf: metadata field '{key}' must be one of gelu, ")


def test_a_gpt_neox_gguf_parallel_residual_that_is_not_a_switch_is_named(data, tmp_path):
    path = _damaged_gguf(data, tmp_path, "tiny-gpt-neox.gguf",
                         lambda g: g.with_meta("gptneox.use_parallel_residual", U32, 1))
    assert refusal(path) == ("tiny-gpt-neox.gguf: metadata field 'gptneox.use_parallel_residual' must be true or "
                             "false, not 1")


def test_a_gpt2_gguf_transposed_weight_of_the_wrong_shape_is_named_in_the_familys_layout(data, tmp_path):
    """GPT-2's W_qkv is stored (out, in) = (96, 32) and read as its Conv1D's (in, out): half its rows
    cut, it is refused as the family reads it, before anything is read."""
    path = _damaged_gguf(data, tmp_path, "tiny-gpt2.gguf", _half_the_fused_qkv_rows)
    assert refusal(path) == ("tiny-gpt2.gguf: tensor 'blk.0.attn_qkv.weight' has shape (32, 48), expected (32, 96) "
                             "from the model's configuration")


def test_a_gemma3_gguf_makes_every_sixth_layer_global_with_the_files_base_and_linear_factor(data, tmp_path):
    """A Gemma 3 file names no layer kinds nor the local layers' base: every sixth layer is global, turned
    with rope.freq_base and rope.scaling.factor, the others with base 10,000 unscaled, as llama.cpp reads
    it. The tiny file's three layers are all local; its header made to say six shows the sixth (nothing
    past the embedding is read for the architecture)."""
    path = _damaged_gguf(data, tmp_path, "tiny-gemma3.gguf", lambda g: g.with_meta("gemma3.block_count", U32, 6))
    arch = architecture_from_gguf(GGUFFile(path))
    assert arch.windows == (4, 4, 4, 4, 4, 0)
    assert arch.rope_layers == ((10000.0, 1.0),) * 5 + ((100000.0, 4.0),)
    assert arch.query_scalar == 8  # the head width, as llama.cpp scales the scores (tiny-gemma3/ says 12)


def test_a_gemma3_gguf_of_another_rope_scaling_is_refused(data, tmp_path):
    path = _damaged_gguf(data, tmp_path, "tiny-gemma3.gguf",
                         lambda g: g.with_meta("gemma3.rope.scaling.type", STRING, "yarn"))
    assert refusal(path) == ("tiny-gemma3.gguf: metadata field 'gemma3.rope.scaling.type' is 'yarn', a rotary scaling "
                             "not supported in a 'gemma3' file; plain RoPE and 'linear' are")


@pytest.mark.parametrize("name, change, message", [
    ("tiny-llama.gguf", [("llama.rope.scaling.type", STRING, "longrope")],
     "metadata field 'llama.rope.scaling.type' is 'longrope', a rotary scaling not supported in a 'llama' file; "
     "plain RoPE, 'linear', 'yarn' and the tensor 'rope_freqs.weight' are"),
    ("tiny-gemma2.gguf", [("gemma2.rope.scaling.type", STRING, "linear")],
     "metadata field 'gemma2.rope.scaling.type' is 'linear', a rotary scaling not supported in a 'gemma2' file; "
     "only plain RoPE is"),
    ("tiny-llama-yarn.gguf", [("llama.rope.scaling.yarn_ext_factor", F32, 0.5)],
     "metadata field 'llama.rope.scaling.yarn_ext_factor' is not read by this app (only 1, which changes nothing, "
     "is), not 0.5"),
    ("tiny-qwen2.gguf", [("qwen2.rope.scaling.type", STRING, "yarn"), ("qwen2.rope.scaling.factor", F32, 4.0),
                         ("qwen2.rope.scaling.yarn_log_multiplier", F32, 0.1)],
     "metadata field 'qwen2.rope.scaling.yarn_log_multiplier' is not read by this app (only 0, which changes "
     "nothing, is), not 0.10000000149011612"),
    ("tiny-olmo2.gguf", [("olmo2.rope.scaling.attn_factor", F32, 2.0)],
     "metadata field 'olmo2.rope.scaling.attn_factor' is not read by this app (only 1, which changes nothing, is), "
     "not 2.0"),
    ("tiny-llama-llama3.gguf", [("llama.rope.scaling.type", STRING, "linear")],
     "metadata field 'llama.rope.scaling.type' must be 'none' beside the tensor 'rope_freqs.weight' (two scalings "
     "at once are not read), not 'linear'"),
])
def test_a_gguf_rope_scaling_that_cannot_be_read_exactly_is_refused(data, tmp_path, name, change, message):
    """A scaling the file names that the model's own rotary scaling cannot reproduce is refused, never opened
    with plain RoPE: Llama's converter writes a longrope's type without its factors, llama.cpp's Gemma 2 has
    no scaling, and YaRN's extrapolation factor and log multiplier, or an attention factor outside YaRN and
    longrope, have no place in transformers' scalings."""
    def damage(g):
        for key, type_id, value in change:
            g = g.with_meta(key, type_id, value)
        return g
    assert refusal(_damaged_gguf(data, tmp_path, name, damage)) == f"{name}: {message}"


def test_a_gguf_rope_scaling_of_a_llama_like_file_is_its_familys(data, tmp_path):
    """Every Llama-like architecture reads the shared converter's keys: a linear factor, and YaRN's with
    transformers' defaults where the file leaves one out (the original context: the file's context)."""
    linear = _damaged_gguf(data, tmp_path, "tiny-olmo2.gguf", lambda g: g.with_meta(
        "olmo2.rope.scaling.type", STRING, "linear").with_meta("olmo2.rope.scaling.factor", F32, 4.0))
    assert architecture_from_gguf(GGUFFile(linear)).rope_factor == 4.0
    yarn = _damaged_gguf(data, tmp_path, "tiny-qwen3.gguf", lambda g: g.with_meta(
        "qwen3.rope.scaling.type", STRING, "yarn").with_meta("qwen3.rope.scaling.factor", F32, 4.0))
    scaling = architecture_from_gguf(GGUFFile(yarn)).rope_scaling
    assert (scaling.factor, scaling.original, scaling.beta_fast, scaling.beta_slow) == (4.0, 64, 32.0, 1.0)
    assert scaling.attention == pytest.approx(0.1 * np.log(4.0) + 1)


@pytest.mark.parametrize("key, default", [("tokenizer.ggml.bos_token_id", 101),
                                          ("tokenizer.ggml.seperator_token_id", 102),
                                          ("tokenizer.ggml.unknown_token_id", 100)])
def test_a_wordpiece_gguf_whose_cls_sep_or_unknown_is_past_its_tokens_is_named(data, tmp_path, key, default):
    """[CLS] (the BOS), [SEP] and [UNK] are looked up by id; without one, llama.cpp takes bert-base's
    101, 102 and 100, past the tiny vocabulary's 57 tokens too."""
    for value, type_id in ((57, U32), (None, None)):
        path = _damaged_gguf(data, tmp_path, "tiny-bert.gguf", lambda g, v=value, t=type_id: g.with_meta(key, t, v))
        assert refusal(path) == (f"tiny-bert.gguf: metadata field '{key}' must be a token (below 57), "
                                 f"not {value or default}")


def test_a_wordpiece_gguf_cuts_words_as_llama_cpp_does_lowercased_with_their_accents(data, tmp_path):
    """llama.cpp's WordPiece: the text decomposed (NFD) and lowercased, its accents kept where an
    uncased BERT's own tokenizer strips them, each word "▁" first and cut into the longest pieces, a
    word that does not come apart into pieces one [UNK]. Two of the tiny vocabulary's tokens are made
    "▁cafe" and a continuing combining acute accent."""
    tokens = list(GGUFFile(data / "tiny-bert.gguf").metadata["tokenizer.ggml.tokens"])
    cafe, accent = tokens.index("▁jump"), tokens.index("ly")
    tokens[cafe], tokens[accent] = "▁cafe", "\u0301"
    path = _damaged_gguf(data, tmp_path, "tiny-bert.gguf",
                         lambda g: g.with_meta("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)))
    encoded = open_pretrained(path).tokenizer.encode("Café CAFÉ robots, cafx")
    cls, sep, unknown, robot, s, comma = (tokens.index(t) for t in ("[CLS]", "[SEP]", "[UNK]", "▁robot", "s", "▁,"))
    assert encoded.ids.tolist() == [cls, cafe, accent, cafe, accent, robot, s, comma, unknown, sep]


@pytest.mark.parametrize("value, type_id, said", [(None, None, "is missing"),
                                                  (320, U32, "must be a token (below 320), not 320")])
def test_a_byte_level_gguf_that_adds_an_eos_it_does_not_name_is_named(data, tmp_path, value, type_id, said):
    """A RoBERTa file puts </s> after every text (`add_eos_token`), found by its id, which must be there."""
    path = _damaged_gguf(data, tmp_path, "tiny-roberta.gguf",
                         lambda g: g.with_meta("tokenizer.ggml.eos_token_id", type_id, value))
    assert refusal(path) == f"tiny-roberta.gguf: metadata field 'tokenizer.ggml.eos_token_id' {said}"


def test_a_roberta_gguf_whose_position_table_is_not_cut_is_refused_by_its_shape(data, tmp_path):
    """The converter writes a RoBERTa's context as the rows left once the padding id's and those before
    it are cut (64 of 66 here); a table of other rows than the context says is named, not read."""
    path = _damaged_gguf(data, tmp_path, "tiny-roberta.gguf",
                         lambda g: g.with_meta("bert.context_length", U32, 66))
    assert refusal(path) == ("tiny-roberta.gguf: tensor 'position_embd.weight' has shape (64, 32), expected (66, 32) "
                             "from the model's configuration")


def test_a_modernbert_gguf_reads_its_window_period_and_both_bases_from_the_metadata(data, tmp_path):
    """The tiny file's three layers are global, local, global (a period of 2, a window of 4: keys at most
    2 away, seen by `windows` as less than 3 away), turned with bases 100,000 and 100; a header made to
    say five layers and a period of 3 has its first and fourth global, and without `rope.freq_base_swa`
    the local layers take the family's 10,000."""
    arch = architecture_from_gguf(GGUFFile(data / "tiny-modernbert.gguf"))
    assert arch.windows == (0, 3, 0)
    assert arch.rope_layers == ((100000.0, 1.0), (100.0, 1.0), (100000.0, 1.0))

    def changed(g):
        return (g.with_meta("modern-bert.block_count", U32, 5)
                .with_meta("modern-bert.attention.sliding_window_pattern", U32, 3)
                .with_meta("modern-bert.rope.freq_base_swa", None))
    arch = architecture_from_gguf(GGUFFile(_damaged_gguf(data, tmp_path, "tiny-modernbert.gguf", changed)))
    assert arch.windows == (0, 3, 3, 0, 3)
    assert [base for base, _ in arch.rope_layers] == [100000.0, 10000.0, 10000.0, 100000.0, 10000.0]
