"""Damage to what the files say: every config.json field a loader reads, missing, of the wrong type,
zero, negative, huge or not a number; config.json and tokenizer.json broken as JSON; tokenizers
that belong to another model, give ids past the embedding, or panic inside the library."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from .copies import FILES, FOLDERS, Case, folder_case, original
from .formats import join_safetensors, split_safetensors

SWOLLEN_CASE_BYTES = 1 << 20

# The fields each family's loader reads (the first name is what the tiny checkpoint writes).
READ_FIELDS = {
    "tiny-bert": ["model_type", "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
                  "vocab_size", "layer_norm_eps", "max_position_embeddings", "hidden_act", "position_embedding_type",
                  "tie_word_embeddings", "head_dim"],
    "tiny-gpt2": ["model_type", "n_embd", "n_head", "n_layer", "n_inner", "vocab_size", "layer_norm_epsilon",
                  "n_positions", "activation_function", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn",
                  "tie_word_embeddings"],
    "tiny-llama": ["model_type", "hidden_size", "num_attention_heads", "num_key_value_heads", "num_hidden_layers",
                   "intermediate_size", "vocab_size", "rms_norm_eps", "max_position_embeddings", "hidden_act",
                   "head_dim", "rope_parameters", "mlp_bias", "tie_word_embeddings"],
}


def _variants(value) -> dict[str, object]:
    """What a damaged or hand-edited config may hold instead of `value`."""
    variants = {"missing": KeyError, "null": None, "the text '384'": "384", "true": True, "false": False,
                "-1": -1, "0": 0, "1.5": 1.5, "10^12": 10 ** 12, "a 400-digit number": 10 ** 400, "NaN": math.nan,
                "Infinity": math.inf, "a list of it": [value], "an object": {"value": value}}
    if isinstance(value, int) and not isinstance(value, bool):
        variants.update({"one more": value + 1, "one less": value - 1, "doubled": value * 2})
    if isinstance(value, str):
        variants["upper case"] = value.upper()
    return variants


def config_cases() -> list[Case]:
    cases = []
    for source in FOLDERS:
        config = json.loads(original(f"{source}/config.json"))
        for name in READ_FIELDS[source]:
            for kind, value in _variants(config.get(name)).items():
                changed = dict(config)
                if value is KeyError:
                    changed.pop(name, None)
                else:
                    changed[name] = value
                cases.append(folder_case(f"config.json: {name} {kind}", source,
                                         {"config.json": json.dumps(changed).encode()}))
        text = original(f"{source}/config.json")
        broken = {"empty": b"", "not JSON": b"model_type = bert", "a list": b"[]", "null": b"null",
                  "nested 5000 deep": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                  "a key twice": text.replace(b"{", b'{"vocab_size": 3, ', 1),
                  "with a byte-order mark": b"\xef\xbb\xbf" + text, "Latin-1": text.replace(b'"', b'"\xe9', 1),
                  "rope parameters a list": json.dumps({**config, "rope_parameters": [1]}).encode(),
                  "rope theta 0": json.dumps({**config, "rope_parameters": {"rope_theta": 0}}).encode(),
                  "rope type linear": json.dumps({**config, "rope_scaling": {"type": "linear"}}).encode()}
        for kind, content in broken.items():
            cases.append(folder_case(f"config.json {kind}", source, {"config.json": content}))
    return cases


def _edited_json(text: bytes, edit) -> bytes:
    data = json.loads(text)
    edit(data)
    return json.dumps(data).encode()


def tokenizer_cases() -> list[Case]:
    cases = []
    for source in FOLDERS:
        text = original(f"{source}/tokenizer.json")
        data = json.loads(text)
        vocab = data["model"]["vocab"]
        some = next(token for token in vocab if token.isalpha())

        def vocab_id(value, token=some):
            return lambda d: d["model"]["vocab"].__setitem__(token, value)

        edits = {
            "an id past the embedding": vocab_id(99_999), "a negative id": vocab_id(-1),
            "an id of 2^40": vocab_id(2 ** 40), "an id that is text": vocab_id("7"),
            "an added token past the embedding": lambda d: d["added_tokens"].append(
                {"id": 99_999, "content": "<extra>", "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True}),
            "an unknown model type": lambda d: d["model"].__setitem__("type", "Unigram2"),
            "no model": lambda d: d.pop("model"), "an empty vocabulary": lambda d: d["model"].__setitem__("vocab", {}),
            "a normaliser that panics": lambda d: d.__setitem__(
                "normalizer", {"type": "Replace", "pattern": {"String": ""}, "content": "x"}),
            "a pattern that does not compile": lambda d: d.__setitem__(
                "pre_tokenizer", {"type": "Split", "pattern": {"Regex": "(("}, "behavior": "Isolated",
                                  "invert": False}),
            "a truncation of its own": lambda d: d.__setitem__(
                "truncation", {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 10}),
            "padding of its own": lambda d: d.__setitem__(
                "padding", {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                            "pad_id": 99_999, "pad_type_id": 0, "pad_token": "[PAD]"}),
        }
        if data.get("post_processor"):
            edits["a template token past the embedding"] = lambda d: d["post_processor"]["special_tokens"][
                "[CLS]"].__setitem__("ids", [99_999])
        if data["model"]["type"] == "WordPiece":
            edits["no unknown token"] = lambda d: d["model"].__setitem__("unk_token", "[NOPE]")
        for kind, edit in edits.items():
            cases.append(folder_case(f"tokenizer.json: {kind}", source, {"tokenizer.json": _edited_json(text, edit)}))
        broken = {"empty": b"", "not JSON": b"tokenizer", "a list": b"[]", "null": b"null",
                  "nested 5000 deep": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                  "with a byte-order mark": b"\xef\xbb\xbf" + text, "Latin-1": text.replace(b'"', b'"\xe9', 1)}
        for kind, content in broken.items():
            cases.append(folder_case(f"tokenizer.json {kind}", source, {"tokenizer.json": content}))
        for other in FOLDERS:
            if other != source:
                cases.append(folder_case(f"tokenizer.json of {other}", source,
                                         {"tokenizer.json": original(f"{other}/tokenizer.json")}))
    return cases


def swollen_cases() -> list[Case]:
    cases = []
    for source in FOLDERS:
        files = {name: original(f"{source}/{name}") for name in FILES}
        for kind, (name, make) in swollen_files(files, SWOLLEN_CASE_BYTES).items():
            cases.append(folder_case(kind, source, {name: lambda path, make=make: path.write_bytes(make())}))
    return cases


def swollen_files(files: dict[str, bytes], size: int) -> dict[str, tuple[str, Callable[[], bytes]]]:
    """A model folder's JSON (`files`: its config.json, tokenizer.json and model.safetensors) grown by
    about `size` bytes of values that take 2 to 4 bytes each as text and 16 to 60 as Python objects:
    empty lists in config.json and in the safetensors header, empty tensors listed in the header,
    tokens added to the tokenizer's vocabulary. kind → (the file changed, a function making it)."""
    def lists() -> str:
        return ", ".join(["[]"] * (size // 4))

    def header(more: Callable[[dict], None]) -> bytes:
        table, blob = split_safetensors(files["model.safetensors"])
        more(table)
        return join_safetensors(table, blob)

    def tokenizer() -> bytes:
        data = json.loads(files["tokenizer.json"])
        vocab = data["model"]["vocab"]
        vocab.update({f"{i:x}q": len(vocab) + i for i in range(size // 16)})
        return json.dumps(data).encode()

    empty = {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}
    swollen = {  # a JSON object with one more key, "notes", holding the lists; or more tensors; or tokens
        "config.json": ("config.json", lambda: files["config.json"].rstrip()[:-1] + b', "notes": ['
                        + lists().encode() + b"]}"),
        "model.safetensors header": ("model.safetensors", lambda: header(
            lambda t: t.__setitem__("notes", json.loads("[" + lists() + "]")))),
        "model.safetensors header of empty tensors": ("model.safetensors", lambda: header(
            lambda t: t.update({f"e{i:x}": empty for i in range(size // 64)}))),
        "tokenizer.json vocabulary": ("tokenizer.json", tokenizer),
    }
    return {f"{kind} swollen by {size:,} bytes": change for kind, change in swollen.items()}
