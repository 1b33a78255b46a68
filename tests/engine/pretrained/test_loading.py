"""Opening the tiny checkpoints: architecture, tokens, labels, words, progress, and every kind of bad file."""

import json
import math
import os
import shutil

import numpy as np
import pytest

from attention_explorer.engine.errors import ModelError, OptionsError, SentenceError
from attention_explorer.engine.pretrained import Cancelled, open_pretrained
from attention_explorer.engine.pretrained.safetensors_reader import read_safetensors
from tiny_checkpoints import edited_copy

pytest.importorskip("tokenizers")


def test_bert_folder(data):
    model = open_pretrained(data / "tiny-bert")
    assert (model.family, model.kind, model.n_layers, model.n_heads, model.n_kv_heads, model.d_model) == (
        "bert", "encoder", 2, 4, 4, 32)
    assert model.max_tokens == 64  # the position table is shorter than BERT's usual 512
    trace = model.run("The robots were reading")
    assert trace.tokens == ["[CLS]", "the", "robot", "·s", "were", "read", "·ing", "[SEP]"]
    assert trace.special.tolist() == [True, False, False, False, False, False, False, True]
    assert trace.words == ((0,), (1,), (2, 3), (4,), (5, 6), (7,))
    weights = trace.all_weights()
    assert weights.shape == (2, 4, 8, 8) and weights.dtype == np.float32
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-6)
    assert trace.next_tokens == ()


def test_repeated_pieces_get_told_apart_in_the_labels(data):
    trace = open_pretrained(data / "tiny-bert").run("the cat and the dog")
    assert trace.labels[1] == "the₁" and trace.labels[4] == "the₂"


@pytest.mark.parametrize("name", ["tiny-gpt2", "tiny-llama"])
def test_control_characters_are_labelled_by_their_pictures(data, name):
    """A byte-level vocabulary has a token for each control character; shown as it was, a vertical tab
    drew as nothing and made an SVG export ill-formed."""
    model = open_pretrained(data / name)
    labels = model.tokenizer.encode("a\x0bb\x01c\x7fd\ne").labels
    assert labels[:8] == ["a", "␋", "b", "␁", "c", "␡", "d", "↵"]
    assert not any(char < " " or char == "\x7f" for label in labels for char in label)


def test_gpt2_folder_is_a_causal_decoder_with_next_tokens(data):
    model = open_pretrained(data / "tiny-gpt2")
    assert (model.family, model.is_decoder, model.n_heads) == ("gpt2", True, 4)
    trace = model.run("the cat sat")
    assert trace.tokens[:2] == ["the", "cat"]           # "Ġcat" shown as a word of its own
    upper = np.triu(np.ones((trace.n, trace.n), dtype=bool), k=1)
    assert np.all(trace.all_weights()[:, :, upper] == 0)
    assert len(trace.next_tokens) == 5
    probabilities = [t.probability for t in trace.next_tokens]
    assert probabilities == sorted(probabilities, reverse=True) and 0 < sum(probabilities) <= 1


def test_gguf_file_and_hf_folder_of_the_same_llama_agree(data):
    from_gguf = open_pretrained(data / "tiny-llama.gguf")
    from_folder = open_pretrained(data / "tiny-llama")
    assert (from_gguf.family, from_gguf.n_heads, from_gguf.n_kv_heads) == ("llama", 4, 2)
    a, b = from_gguf.run("the cats were playing 2017"), from_folder.run("the cats were playing 2017")
    assert a.tokens == b.tokens
    assert a.tokens[-4:] == ["2", "0", "1", "7"]          # digits split one by one, as SmolLM2 does
    np.testing.assert_allclose(a.all_weights(), b.all_weights(), atol=1e-5)
    assert [t.token_id for t in a.next_tokens] == [t.token_id for t in b.next_tokens]


def test_special_tokens_typed_in_the_text_are_flagged(data):
    trace = open_pretrained(data / "tiny-llama.gguf").run("<|endoftext|>the cat")
    assert trace.tokens[0] == "<|endoftext|>" and trace.special.tolist()[:2] == [True, False]


def test_long_text_is_cut_at_the_model_limit_and_says_so(data):
    trace = open_pretrained(data / "tiny-bert").run("the cat " * 100)
    assert trace.n == 64 and trace.encoded.truncated


def test_bert_keys_with_the_bert_prefix_and_old_norm_names_load_the_same(data, tmp_path, write_safetensors):
    folder = tmp_path / "prefixed"
    shutil.copytree(data / "tiny-bert", folder)
    tensors = read_safetensors(data / "tiny-bert" / "model.safetensors")
    old_names = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
                 for k, v in tensors.items()}  # as older BERT checkpoints name them
    write_safetensors(folder / "model.safetensors", {"bert." + k: np.array(v) for k, v in old_names.items()})
    np.testing.assert_allclose(open_pretrained(folder).run("the cat").all_weights(),
                               open_pretrained(data / "tiny-bert").run("the cat").all_weights(), atol=1e-5)


def test_progress_is_reported_in_order_and_false_cancels(data):
    seen = []
    open_pretrained(data / "tiny-llama.gguf", progress=lambda fraction, text: seen.append(fraction))
    assert seen[0] == 0 and seen[-1] == 1 and seen == sorted(seen)
    with pytest.raises(Cancelled):
        open_pretrained(data / "tiny-bert", progress=lambda fraction, text: fraction < 0.5)


def test_a_forward_reports_each_layer_and_can_be_cancelled_between_layers(data):
    model = open_pretrained(data / "tiny-gpt2")
    heard = []
    model.run("the cat", progress=lambda fraction, text: heard.append(text))
    assert heard == ["layer 1 of 2", "layer 2 of 2"]
    with pytest.raises(Cancelled):
        model.run("the cat", progress=lambda fraction, text: text != "layer 2 of 2")


def test_empty_text_and_missing_heads_are_clear_errors(data):
    model = open_pretrained(data / "tiny-gpt2")
    with pytest.raises(SentenceError, match="no text"):
        model.run("")
    with pytest.raises(SentenceError, match="no text"):
        open_pretrained(data / "tiny-bert").run("  ")  # not a trace of [CLS] and [SEP] alone
    with pytest.raises(OptionsError, match="no head 5 in layer 1: tiny-gpt2 has 2 layers of 4 heads"):
        model.run("the cat", ablate={(0, 4)})


def _broken_copy(data, tmp_path, name="tiny-bert"):
    folder = tmp_path / name
    shutil.copytree(data / name, folder)
    return folder


def test_missing_tensor_names_the_file_and_the_tensor(data, tmp_path, write_safetensors):
    folder = _broken_copy(data, tmp_path)
    tensors = read_safetensors(data / "tiny-bert" / "model.safetensors")
    del tensors["encoder.layer.1.attention.self.key.weight"]
    write_safetensors(folder / "model.safetensors", {k: np.array(v) for k, v in tensors.items()})
    with pytest.raises(ModelError, match="model.safetensors: tensor 'encoder.layer.1.attention.self.key.weight' "
                                         "is missing"):
        open_pretrained(folder)


def test_wrong_shape_names_the_tensor_and_both_shapes(data, tmp_path):
    folder = _broken_copy(data, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["intermediate_size"] = 48
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"tensor 'encoder.layer.0.intermediate.dense.weight' has shape \(64, 32\), "
                                         r"expected \(48, 32\)"):
        open_pretrained(folder)


@pytest.mark.parametrize("change, message", [
    ({"model_type": "xlnet", "architectures": ["XLNetLMHeadModel"]},
     r"config.json: model_type 'xlnet' and architectures 'XLNetLMHeadModel': not a family this app opens; it "
     r"opens BERT \(bert\), RoBERTa \(roberta\), DistilBERT \(distilbert\), ModernBERT \(modernbert\), GPT-2 "
     r"\(gpt2\), GPT-NeoX / Pythia "
     r"\(gpt_neox\), Llama \(llama\), Mistral \(mistral\), Qwen2 / Qwen2.5 \(qwen2\), Qwen3 \(qwen3\), Phi-3 \(phi3\), "
     r"OLMo 2 \(olmo2\), Gemma \(gemma\), Gemma 2 \(gemma2\), Gemma 3 \(gemma3_text\)$"),
    ({"model_type": None, "architectures": ["XLNetLMHeadModel"]},
     r"config.json: architectures 'XLNetLMHeadModel': not a family this app opens; it opens BERT \(bert\)"),
    ({"model_type": None, "architectures": None}, "config.json: neither model_type nor architectures: not a family"),
    ({"num_attention_heads": 5}, "config.json: 5 heads"),
    ({"hidden_act": "relu6"}, "config.json: field 'hidden_act' must be one of gelu, gelu_new, .*, not 'relu6'"),
    ({"num_hidden_layers": None}, "config.json: field 'num_hidden_layers' is missing"),
    ({"intermediate_size": 20_000_000}, r"config.json: the model has about 2.6 billion weights, 10 GiB as "
                                        r"float32; the largest this app opens is 2 billion"),
    ({"position_embedding_type": "relative_key"}, "config.json: 'position_embedding_type' is 'relative_key'; "
                                                  "only 'absolute' is supported"),
])
def test_bad_config_fields_are_named(data, tmp_path, change, message):
    folder = _broken_copy(data, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config.update(change)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=message):
        open_pretrained(folder)


def test_a_config_without_model_type_is_known_by_its_architectures(data, tmp_path):
    folder = _broken_copy(data, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    del config["model_type"]
    assert config["architectures"] == ["BertModel"]
    (folder / "config.json").write_text(json.dumps(config))
    model = open_pretrained(folder)
    assert model.family == "bert"
    np.testing.assert_array_equal(model.run("the cat").all_weights(),
                                  open_pretrained(data / "tiny-bert").run("the cat").all_weights())


def _same_weights_with_config(data, tmp_path, name: str, edit) -> None:
    """tiny-`name` with its config.json edited by `edit` opens to the same weights, to the bit."""
    folder = _broken_copy(data, tmp_path, name)
    config = json.loads((folder / "config.json").read_text())
    edit(config)
    (folder / "config.json").write_text(json.dumps(config))
    text = "the cats were playing 2017"
    np.testing.assert_array_equal(open_pretrained(folder).run(text).all_weights(),
                                  open_pretrained(data / name).run(text).all_weights())


def test_gpt_neox_configs_of_either_age_read_alike(data, tmp_path):
    """Pythia's files on the Hub name the rotary fraction and base rotary_pct and rotary_emb_base at the
    top; transformers 5 writes them in rope_parameters."""
    def older(config):
        rope = config.pop("rope_parameters")
        config.update(rotary_pct=rope["partial_rotary_factor"], rotary_emb_base=rope["rope_theta"])

    assert open_pretrained(data / "tiny-gpt-neox").arch.rotary_dims == 4  # half of each 8-wide head
    _same_weights_with_config(data, tmp_path, "tiny-gpt-neox", older)


def test_gemma3_configs_of_either_age_read_alike(data, tmp_path):
    """Gemma 3's files on the Hub give the global layers' base and scaling at the top (rope_theta,
    rope_scaling), the local ones' as rope_local_base_freq, and the layer kinds as a pattern;
    transformers 5 writes each kind's in rope_parameters and the kinds in layer_types."""
    def older(config):
        config.pop("rope_parameters"), config.pop("layer_types")
        config.update(rope_theta=100000.0, rope_local_base_freq=100.0, sliding_window_pattern=2,
                      rope_scaling={"rope_type": "linear", "factor": 4.0})

    assert open_pretrained(data / "tiny-gemma3").arch.rope_layers == ((100.0, 1.0), (100000.0, 4.0), (100.0, 1.0))
    _same_weights_with_config(data, tmp_path, "tiny-gemma3", older)


def test_modernbert_configs_of_either_age_read_alike(data, tmp_path):
    """ModernBERT's files on the Hub give the layer kinds as global_attn_every_n_layers and the bases as
    global_rope_theta and local_rope_theta; transformers 5 writes layer_types and rope_parameters."""
    def older(config):
        config.pop("rope_parameters"), config.pop("layer_types")
        config.update(global_attn_every_n_layers=2, global_rope_theta=100000.0, local_rope_theta=100.0)

    assert open_pretrained(data / "tiny-modernbert").arch.rope_layers == ((100000.0, 1.0), (100.0, 1.0),
                                                                          (100000.0, 1.0))
    _same_weights_with_config(data, tmp_path, "tiny-modernbert", older)


@pytest.mark.parametrize("change, message", [
    ({"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"]},
     r"config.json: model_type 'gemma3' is Gemma 3 with its vision model \(Gemma3ForConditionalGeneration\); only "
     r"the text model opens, a folder of Gemma3ForCausalLM \(model_type 'gemma3_text'\)$"),
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
     "config.json: field 'rope_parameters' must give the rotary parameters of each kind of layer"),
    ({"rope_parameters": {"full_attention": {"rope_type": "yarn", "factor": 4.0}}},
     "config.json: rope parameters of full_attention: field 'rope_type' must be one of default, linear, not 'yarn'"),
])
def test_gemma3_refuses_its_vision_model_and_rotary_positions_it_does_not_turn(data, tmp_path, change, message):
    folder = _broken_copy(data, tmp_path, "tiny-gemma3")
    config = json.loads((folder / "config.json").read_text())
    config.update(change)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=message):
        open_pretrained(folder)


def test_rotary_positions_over_too_few_or_an_odd_number_of_dims_are_refused(data, tmp_path):
    folder = _broken_copy(data, tmp_path, "tiny-phi3")
    config = json.loads((folder / "config.json").read_text())
    config["rope_parameters"]["partial_rotary_factor"] = 0.2  # of 8 dims: 1
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="config.json: rotary positions over 0.2 of each head of 8 dims turn 1; they "
                                         "pair the halves of what they turn"):
        open_pretrained(folder)


def test_gemma_s_hidden_act_gelu_means_the_tanh_approximation(data, tmp_path):
    """Gemma's own files say hidden_act "gelu" and mean gelu_pytorch_tanh, as transformers reads them."""
    _same_weights_with_config(data, tmp_path, "tiny-gemma", lambda config: config.update(hidden_act="gelu"))


def test_missing_files_are_named(data, tmp_path):
    folder = _broken_copy(data, tmp_path)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match="no tokenizer.json"):
        open_pretrained(folder)
    (folder / "config.json").unlink()
    with pytest.raises(ModelError, match="no config.json"):
        open_pretrained(folder)
    with pytest.raises(ModelError, match="no such file or folder"):
        open_pretrained(tmp_path / "nothing-here")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelError, match="notes.txt: not a model"):
        open_pretrained(tmp_path / "notes.txt")


def test_truncated_weights_are_a_clear_error(data, tmp_path):
    folder = _broken_copy(data, tmp_path, "tiny-gpt2")
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:20000])
    with pytest.raises(ModelError, match="model.safetensors: tensor .* truncated, download it again"):
        open_pretrained(folder)


def test_a_missing_tokenizers_package_says_what_to_install(data, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tokenizers(name, *args, **kwargs):
        if name.split(".")[0] == "tokenizers":
            raise ImportError("No module named 'tokenizers'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tokenizers)
    monkeypatch.delitem(__import__("sys").modules, "tokenizers", raising=False)
    with pytest.raises(ModelError, match=r"needs the 'tokenizers' package.*pip install 'attention-explorer\[real\]'"):
        open_pretrained(data / "tiny-bert")


def test_an_untied_decoder_needs_its_output_matrix(data, tmp_path):
    folder = _broken_copy(data, tmp_path, "tiny-gpt2")
    config = json.loads((folder / "config.json").read_text())
    config["tie_word_embeddings"] = False
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="model.safetensors: tensor 'lm_head.weight' is missing"):
        open_pretrained(folder)


def test_a_character_split_into_byte_pieces_shows_its_bytes(data):
    trace = open_pretrained(data / "tiny-llama.gguf").run("Ü cat")
    assert trace.tokens[:2] == ["\\xc3", "·\\x9c"] and trace.words[0] == (0, 1)


def test_a_config_that_is_not_a_regular_file_is_refused_without_reading_it(data, tmp_path):
    """config.json goes through the toy models' reader: a named pipe would otherwise block the open forever."""
    folder = _broken_copy(data, tmp_path)
    (folder / "config.json").unlink()
    os.mkfifo(folder / "config.json")
    with pytest.raises(ModelError, match="config.json: is not a regular file"):
        open_pretrained(folder)


def test_a_config_with_a_key_twice_is_refused(data, tmp_path):
    folder = _broken_copy(data, tmp_path)
    text = (folder / "config.json").read_text()
    (folder / "config.json").write_text(text.replace("{", '{"model_type": "bert", ', 1))
    with pytest.raises(ModelError, match="config.json: .*'model_type' appears twice"):
        open_pretrained(folder)


@pytest.mark.parametrize("source", ["tiny-bert", "tiny-gpt2", "tiny-llama", "tiny-llama.gguf"])
def test_every_matrix_a_forward_multiplies_by_is_stored_in_row_order_on_an_odd_number_of_cache_lines(data, source):
    # the files store (out, in); the forward multiplies by (in, out), which OpenBLAS does fastest
    # from row order: a transposed view left in place made BERT's projections about a quarter slower.
    # Each row starts an odd number of 64-byte lines after the one before (weights.padded_width).
    for layer in open_pretrained(data / source).weights.layers:
        matrices = {"w_qkv": layer.w_qkv, "w_o": layer.w_o, "w_gate_up": layer.w_gate_up, "w_down": layer.w_down}
        layout = {name: (m.strides, m.shape) for name, m in matrices.items()}
        for m in matrices.values():
            row, number = m.strides
            assert number == 4 and row >= 4 * m.shape[1] and row % 64 == 0 and (row // 64) % 2 == 1, layout
            assert row - 4 * m.shape[1] <= 2 * 64, layout  # at most a line and what a line leaves over


def test_a_model_larger_than_the_free_memory_is_refused_before_it_is_read(data, monkeypatch):
    """The tiny Llama needs well under a megabyte; with 100 kB free it is refused, even kept stored (the
    smaller form "auto" falls back to), saying how much it needs and how much there is, and nothing is read."""
    from attention_explorer.engine.pretrained import weights

    monkeypatch.setattr(weights, "free_memory_bytes", lambda: 100_000)
    with pytest.raises(ModelError, match=r"config.json: the model's 0\.00 billion weights need about 0\.0 GiB kept "
                                         r"as stored, and this machine has 0\.0 GiB free; close other programs"):
        open_pretrained(data / "tiny-llama")
    with pytest.raises(ModelError, match=r"need about 0\.0 GiB as float32, and this machine has 0\.0 GiB free"):
        open_pretrained(data / "tiny-llama", weights="float32")
    monkeypatch.setattr(weights, "free_memory_bytes", lambda: None)  # unknown (not Linux): opened
    assert open_pretrained(data / "tiny-llama").n_layers == 2


def test_free_memory_is_read_from_the_system():
    from attention_explorer.engine.pretrained.weights import free_memory_bytes

    free = free_memory_bytes()
    assert free is None or free > 0


FOUR = "4 numbers above 0, one per frequency of the 8 dims RoPE turns"


@pytest.mark.parametrize(("rope", "message"), [
    ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0, "high_freq_factor": 1.0,
      "original_max_position_embeddings": 8192},
     r"field 'high_freq_factor' must be above 'low_freq_factor' \(4\), not 1.0"),
    ({"rope_type": "linear"}, "field 'factor' is missing"),
    ({"rope_type": "linear", "factor": -2}, "field 'factor' must be a finite number above 0, not -2"),
    ({"rope_type": "dynamic", "factor": 0}, "field 'factor' must be a finite number above 0, not 0"),
    ({"rope_type": "dynamic", "factor": "2"}, "field 'factor' must be a finite number above 0, not '2'"),
    ({"rope_type": "yarn", "original_max_position_embeddings": 16}, "field 'factor' is missing"),
    ({"rope_type": "yarn", "factor": 4.0, "beta_fast": 2, "beta_slow": 4},
     r"field 'beta_fast' must be at least 'beta_slow' \(4\), not 2"),
    ({"rope_type": "yarn", "factor": 4.0, "attention_factor": 0},
     "field 'attention_factor' must be a finite number above 0, not 0"),
    ({"rope_type": "yarn", "factor": 4.0, "mscale": -1, "mscale_all_dim": 1},
     "field 'mscale' must be a finite number above 0, not -1"),
    ({"rope_type": "yarn", "factor": 4.0, "truncate": "no"}, "field 'truncate' must be true or false, not 'no'"),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1},
     r"field 'original_max_position_embeddings' must be a whole number of at least 2 \(at most 2,147,483,647\), "
     r"not 1"),
    ({"rope_type": "longrope", "short_factor": [1, 1, 1], "long_factor": [1, 2, 3, 4]},
     rf"field 'short_factor' must list {FOUR}, not \[1, 1, 1\]"),
    ({"rope_type": "longrope", "short_factor": [1, 1, 1, 1], "long_factor": [1, 2, 0, 4]},
     rf"field 'long_factor' must list {FOUR}, not \[1, 2, 0, 4\]"),
    ({"rope_type": "longrope", "short_factor": [1, 1, 1, 1], "long_factor": "4"},
     rf"field 'long_factor' must list {FOUR}, not '4'"),
    ({"rope_type": "longrope", "short_factor": [1, 1, 1, 1]}, "field 'long_factor' is missing"),
    ({"rope_type": 3}, "field 'rope_type' must be a text, not 3"),
])
def test_a_damaged_rotary_scaling_is_refused_by_its_field(data, tmp_path, rope, message):
    folder = _broken_copy(data, tmp_path, "tiny-llama")
    config = json.loads((folder / "config.json").read_text())
    config["rope_parameters"] = {"rope_theta": 10000.0, **rope}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=f"^config.json: rope_parameters: {message}$"):
        open_pretrained(folder)


@pytest.mark.parametrize(("name", "rope", "message"), [
    ("tiny-llama", {"rope_type": "ntk", "factor": 2.0},
     "rope type 'ntk' is not supported; plain RoPE and rope types linear, dynamic, yarn, longrope, llama3 are"),
    ("tiny-phi3", {"rope_type": "linear", "factor": 2.0},  # transformers' Phi3Config refuses it too
     "rope type 'linear' is not supported; plain RoPE and rope type longrope are"),
    ("tiny-phi3", {"rope_type": "longrope", "short_factor": [1, 1, 1, 1], "long_factor": [1, 1, 1]},
     r"rope_parameters: field 'short_factor' must list 3 numbers above 0, one per frequency of the 6 dims RoPE "
     r"turns, not \[1, 1, 1, 1\]"),
])
def test_a_rope_type_the_family_does_not_read_is_refused_by_name(data, tmp_path, name, rope, message):
    folder = _broken_copy(data, tmp_path, name)
    config = json.loads((folder / "config.json").read_text())
    config["rope_parameters"].update(rope)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=f"^config.json: {message}$"):
        open_pretrained(folder)


def _arch_with(data, tmp_path, name, **fields):
    """The architecture of a copy of tiny checkpoint `name` with config.json's `fields` set (None: removed)."""
    def edit(config: dict) -> None:
        for field, value in fields.items():
            if value is None:
                config.pop(field)
            else:
                config[field] = value
    return open_pretrained(edited_copy(data, tmp_path, name, edit)).arch


def test_rotary_scalings_are_read_as_transformers_reads_them(data, tmp_path):
    """What transformers 5.24's configs do with the fields: an original context not given is the
    model's; Phi-3's is its top-level field, 4,096 when absent, whatever the rope parameters say, and
    its older names "su" and "yarn" are longrope; an older `rope_scaling` is read over `rope_parameters`
    (the base then the top-level one, or 10,000); YaRN's attention factor 0.1·ln s + 1, the ratio of
    DeepSeek's mscale and mscale_all_dim terms, or the file's, and a null factor the context ÷ the
    original; longrope's √(1 + ln s ÷ ln original); dynamic NTK reads up to factor × the context."""
    from attention_explorer.engine.pretrained.rope import Dynamic, Llama3

    def llama(**fields):
        return _arch_with(data, tmp_path, "tiny-llama", **fields)

    assert llama(rope_parameters={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                  "high_freq_factor": 4.0}).rope_scaling == Llama3(8.0, 1.0, 4.0, 64)
    assert llama(rope_parameters={"rope_type": "linear", "factor": 2.5}).rope(1) == (10000.0, 2.5)
    older = llama(rope_parameters=None, rope_theta=500000.0, rope_scaling={"type": "linear", "factor": 2.0})
    assert older.rope(0) == (500000.0, 2.0)
    both = llama(rope_scaling={"type": "dynamic", "factor": 2.0})  # rope_parameters' base 100,000 not read
    assert both.rope_theta == 10000.0 and both.rope_scaling == Dynamic(2.0, 64) and both.max_positions == 128
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
    assert llama(rope_parameters=yarn).rope_scaling.attention == pytest.approx(0.1 * math.log(4) + 1)
    deepseek = llama(rope_parameters={**yarn, "mscale": 1.0, "mscale_all_dim": 0.5}).rope_scaling
    assert deepseek.attention == pytest.approx((0.1 * math.log(4) + 1) / (0.05 * math.log(4) + 1))
    assert llama(rope_parameters={**yarn, "attention_factor": 0.8}).rope_scaling.attention == 0.8
    assert llama(rope_parameters={**yarn, "factor": None}).rope_scaling.factor == 4.0  # 64 ÷ 16
    longrope = {"rope_type": "longrope", "short_factor": [1, 1, 1], "long_factor": [2, 3, 4],
                "original_max_position_embeddings": 8}
    phi3 = _arch_with(data, tmp_path, "tiny-phi3", rope_parameters=longrope,
                      original_max_position_embeddings=16).rope_scaling
    assert phi3.original == 16 and phi3.rereads and phi3.attention == pytest.approx(math.sqrt(1.5))  # s = 64 ÷ 16
    phi3 = _arch_with(data, tmp_path, "tiny-phi3", rope_parameters={**longrope, "rope_type": "su"},
                      original_max_position_embeddings=None).rope_scaling
    assert phi3.original == 4096 and phi3.attention == 1.0  # s = 64 ÷ 4,096
    phi3 = _arch_with(data, tmp_path, "tiny-phi3", rope_parameters={**longrope, "type": "yarn"}).rope_scaling
    assert phi3.short == (1, 1, 1) and phi3.long == (2, 3, 4)
