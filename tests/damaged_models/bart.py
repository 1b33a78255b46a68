"""Damaged copies of tiny-bart, for its writing (Write in the window, `generate` on the command line).

The same kinds of damage as the other checkpoints' (cut short, bits flipped, weights that are NaN,
infinite or so large that the numbers overflow, a FIFO or a folder in place of a file, counts that are
huge), plus what only writing reads: generation_config.json and config.json's stop, forced and start
token ids, and decoder positions that are damaged only past the first few, so that reading the
window's short target works and writing 32 tokens overflows. Kept apart from `all_cases()`: those
go through `trace` and the walk's loader, which read no generation settings.
"""

from __future__ import annotations

import json
import math
import random
import struct

from .copies import NOT_FILES, Case, fifo, folder_case, link_to_fifo, original, sparse
from .fields import swollen_files
from .files import cut_points, flipped
from .formats import join_safetensors, split_safetensors

SOURCE = "tiny-bart"
GOOD_ROWS = 12  # decoder positions kept whole: the window's first target (its source) reads fewer


def bart_cases() -> list[Case]:
    cases = [*_byte_cases(), *_value_cases(), *_generation_cases(), *_config_cases(), *_not_file_cases(),
             *_swollen_cases()]
    kinds = [case.kind for case in cases]
    assert len(set(kinds)) == len(kinds), "two cases of one kind"
    return cases


def _case(kind: str, changes: dict) -> Case:
    return folder_case(kind, SOURCE, changes)


def _byte_cases() -> list[Case]:
    weights = original(f"{SOURCE}/model.safetensors")
    header_end = 8 + struct.unpack("<Q", weights[:8])[0]
    cases = [_case(f"model.safetensors cut at byte {point}", {"model.safetensors": weights[:point]})
             for point in cut_points(len(weights), header_end, 4)[::2]]
    rng = random.Random(23)
    for position in sorted(rng.sample(range(header_end), 4)) + sorted(rng.sample(range(header_end, len(weights)), 4)):
        bit = rng.randrange(8)
        cases.append(_case(f"model.safetensors bit {bit} of byte {position} flipped",
                           {"model.safetensors": flipped(weights, position, bit)}))
    return cases


def _filled(header: dict, blob: bytes, name: str, value: float, first_row: int = 0) -> bytes:
    """The weights with tensor `name` set to `value` from row `first_row` on."""
    begin, end = header[name]["data_offsets"]
    row = 4 * math.prod(header[name]["shape"][1:])
    begin += first_row * row
    return join_safetensors(header, blob[:begin] + struct.pack("<f", value) * ((end - begin) // 4) + blob[end:])


def _value_cases() -> list[Case]:
    header, blob = split_safetensors(original(f"{SOURCE}/model.safetensors"))
    cases = []
    for kind, value in (("NaN", math.nan), ("infinity", math.inf), ("1e38", 1e38)):
        for name in ("model.shared.weight", "model.decoder.layers.1.fc1.weight", "final_logits_bias"):
            cases.append(_case(f"model.safetensors: {name} all {kind}",
                               {"model.safetensors": _filled(header, blob, name, value)}))
        cases.append(_case(f"model.safetensors: decoder positions past {GOOD_ROWS - 2} all {kind}",
                           {"model.safetensors": _filled(header, blob, "model.decoder.embed_positions.weight",
                                                         value, GOOD_ROWS)}))
    cases.append(_case("model.safetensors: every weight 0",
                       {"model.safetensors": join_safetensors(header, bytes(len(blob)))}))
    return cases


def _json(value) -> bytes:
    return json.dumps(value).encode()


def _generation_cases() -> list[Case]:
    """generation_config.json beside the files (tiny-bart has none): broken, or naming ids it cannot use."""
    broken = {"empty": b"", "not JSON": b"max_length = 20", "a list": b"[]", "null": b"null",
              "nested 5000 deep": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}", "Latin-1": b'{"\xe9": 1}',
              "with a byte-order mark": b'\xef\xbb\xbf{"eos_token_id": 2}'}
    cases = [_case(f"generation_config.json {kind}", {"generation_config.json": text}) for kind, text in broken.items()]
    fields = {"eos_token_id": 2, "forced_eos_token_id": 2, "forced_bos_token_id": 0}
    values = {"320 (past the vocabulary)": 320, "-1": -1, "10^12": 10 ** 12, "a 400-digit number": 10 ** 400,
              "the text '2'": "2", "true": True, "1.5": 1.5, "NaN": math.nan, "an object": {"id": 2},
              "a list with one past the vocabulary": [2, 99_999], "an empty list": [], "null": None}
    for name in fields:
        for kind, value in values.items():
            cases.append(_case(f"generation_config.json: {name} {kind}",
                               {"generation_config.json": _json({**fields, name: value})}))
    cases.append(_case("generation_config.json: forced_bos_token_id 0 (a good one)",
                       {"generation_config.json": _json(fields)}))
    return cases


def _config_cases() -> list[Case]:
    config = json.loads(original(f"{SOURCE}/config.json"))
    changed = {
        "eos_token_id 320": ("eos_token_id", 320), "eos_token_id -1": ("eos_token_id", -1),
        "forced_eos_token_id 320": ("forced_eos_token_id", 320),
        "forced_eos_token_id 10^12": ("forced_eos_token_id", 10 ** 12),
        "forced_bos_token_id 99999": ("forced_bos_token_id", 99_999),
        "forced_bos_token_id a list": ("forced_bos_token_id", [0, 1]),
        "decoder_start_token_id 320": ("decoder_start_token_id", 320),
        "decoder_start_token_id -1": ("decoder_start_token_id", -1),
        "decoder_start_token_id NaN": ("decoder_start_token_id", math.nan),
        "max_position_embeddings 10^12": ("max_position_embeddings", 10 ** 12),
        "max_position_embeddings 2^31": ("max_position_embeddings", 2 ** 31),
        "max_position_embeddings one more": ("max_position_embeddings", 65),
        "max_position_embeddings 0": ("max_position_embeddings", 0),
        "decoder_layers 10^12": ("decoder_layers", 10 ** 12), "decoder_layers 0": ("decoder_layers", 0),
        "decoder_attention_heads 10^12": ("decoder_attention_heads", 10 ** 12),
        "vocab_size 10^12": ("vocab_size", 10 ** 12), "d_model 10^12": ("d_model", 10 ** 12),
        "decoder_ffn_dim 10^12": ("decoder_ffn_dim", 10 ** 12),
    }
    cases = [_case(f"config.json: {kind}", {"config.json": _json({**config, name: value})})
             for kind, (name, value) in changed.items()]
    cases += [_case(f"config.json: {name} missing",
                    {"config.json": _json({k: v for k, v in config.items() if k != name})})
              for name in ("eos_token_id", "forced_eos_token_id", "decoder_start_token_id")]
    text = original(f"{SOURCE}/config.json")
    cases += [_case(f"config.json cut at byte {point}", {"config.json": text[:point]}) for point in (0, len(text) // 2)]
    return cases


def _not_file_cases() -> list[Case]:
    cases = [_case(f"{name} is {kind}", {name: NOT_FILES[kind]})
             for name in ("config.json", "tokenizer.json", "model.safetensors")
             for kind in ("a FIFO", "a link to a FIFO", "a folder")]
    cases += [_case("generation_config.json is a FIFO", {"generation_config.json": fifo}),
              _case("generation_config.json is a link to a FIFO", {"generation_config.json": link_to_fifo}),
              _case("generation_config.json is a folder", {"generation_config.json": NOT_FILES["a folder"]}),
              _case("generation_config.json is 20 MB", {"generation_config.json": sparse(20 << 20, b"{")})]
    return cases


def _swollen_cases() -> list[Case]:
    files = {name: original(f"{SOURCE}/{name}") for name in ("config.json", "tokenizer.json", "model.safetensors")}
    return [_case(kind, {name: lambda path, make=make: path.write_bytes(make())})
            for kind, (name, make) in swollen_files(files, 1 << 20).items()]
