"""Damage to the files as files and bytes: cut short, bits flipped, the wrong kind of file (a FIFO, a
socket, a loop of links), extra shards, safetensors headers with wrong types, shapes and ranges, and
weights that are not numbers."""

from __future__ import annotations

import json
import math
import random
import struct

from .copies import (
    DATA,
    FILES,
    FOLDERS,
    GGUF_NAME,
    NOT_FILES,
    Case,
    fifo,
    folder_case,
    folder_instead,
    gguf_case,
    link_to_copy,
    link_to_fifo,
    original,
    sparse,
)
from .formats import join_safetensors, parse_gguf, split_safetensors, tensor_names

assert DATA.is_dir()


# --- byte-level damage ---------------------------------------------------------------------------

def cut_points(size: int, header_end: int, count: int) -> list[int]:
    points = {0, 1, 4, 7, 8, 9, 16, 24, header_end - 1, header_end, header_end + 1, size - 1}
    points.update(header_end + (size - header_end) * i // count for i in range(1, count))
    points.update(header_end * i // 12 for i in range(1, 12))
    return sorted(p for p in points if 0 <= p < size)


def flipped(data: bytes, position: int, bit: int) -> bytes:
    out = bytearray(data)
    out[position] ^= 1 << bit
    return bytes(out)


def byte_cases() -> list[Case]:
    cases = []
    rng = random.Random(16)
    for source in FOLDERS:
        weights = original(f"{source}/model.safetensors")
        header_end = 8 + struct.unpack("<Q", weights[:8])[0]
        for point in cut_points(len(weights), header_end, 24):
            cases.append(folder_case(f"model.safetensors cut at byte {point}", source,
                                     {"model.safetensors": weights[:point]}))
        positions = sorted(rng.sample(range(header_end), 14)) + sorted(rng.sample(range(header_end, len(weights)), 12))
        for position in positions:
            bit = rng.randrange(8)
            cases.append(folder_case(f"model.safetensors bit {bit} of byte {position} flipped", source,
                                     {"model.safetensors": flipped(weights, position, bit)}))
        for name in ("config.json", "tokenizer.json"):
            text = original(f"{source}/{name}")
            for point in (0, 1, len(text) // 3, len(text) // 2, len(text) - 2):
                cases.append(folder_case(f"{name} cut at byte {point}", source, {name: text[:point]}))
            for position in sorted(rng.sample(range(len(text)), 5)):
                bit = rng.randrange(8)
                cases.append(folder_case(f"{name} bit {bit} of byte {position} flipped", source,
                                         {name: flipped(text, position, bit)}))
    whole = original(GGUF_NAME)
    data_start = _gguf_data_start(whole)
    for point in cut_points(len(whole), data_start, 30):
        cases.append(gguf_case(f"cut at byte {point}", whole[:point]))
    for position in sorted(rng.sample(range(data_start), 40)) + sorted(rng.sample(range(data_start, len(whole)), 20)):
        bit = rng.randrange(8)
        cases.append(gguf_case(f"bit {bit} of byte {position} flipped", flipped(whole, position, bit)))
    return cases


def _gguf_data_start(whole: bytes) -> int:
    g = parse_gguf(whole)
    return len(whole) - sum(len(t.data) for t in g.tensors) - sum(
        -len(t.data) % g.alignment for t in g.tensors[:-1])


# --- files of the wrong kind, extra shards ------------------------------------------------------------

def not_a_file_cases() -> list[Case]:
    cases = []
    for source in FOLDERS:
        for name in FILES:
            for kind, make in NOT_FILES.items():
                cases.append(folder_case(f"{name} is {kind}", source, {name: make}))
            cases.append(folder_case(f"{name} is a link to a good copy", source,
                                     {name: link_to_copy(original(f"{source}/{name}"))}))
            cases.append(folder_case(f"{name} is missing", source, {name: None}))
    for kind, make in NOT_FILES.items():
        cases.append(gguf_case(f"is {kind}", make))
    cases.append(gguf_case("is a link to a good copy", link_to_copy(original(GGUF_NAME))))
    cases.append(gguf_case("is 70 MB of nothing", sparse(70 << 20, b"GGUF")))
    for source in FOLDERS:
        cases.append(folder_case("tokenizer.json is 70 MB", source, {"tokenizer.json": sparse(70 << 20, b"{")}))
        cases.append(folder_case("config.json is 20 MB", source, {"config.json": sparse(20 << 20, b"{")}))
        cases += shard_cases(source)
    return cases


def shard_cases(source: str) -> list[Case]:
    weights = original(f"{source}/model.safetensors")
    header, blob = split_safetensors(weights)
    names = tensor_names(header)
    half = len(names) // 2

    def shard(keep: list[str]) -> bytes:
        part, pieces, offset = {}, [], 0
        for name in keep:
            begin, end = header[name]["data_offsets"]
            part[name] = {**header[name], "data_offsets": [offset, offset + end - begin]}
            pieces.append(blob[begin:end])
            offset += end - begin
        return join_safetensors(part, b"".join(pieces))

    two = {"model.safetensors": shard(names[:half]), "model-2.safetensors": shard(names[half:])}
    layer_2 = {k.replace(".1.", ".2."): v for k, v in header.items() if ".1." in k}
    extra_layer = join_safetensors(layer_2, blob)
    return [
        folder_case("split into two shards", source, two),
        folder_case("a second shard is a FIFO", source, {"model-2.safetensors": fifo}),
        folder_case("a second shard is a link to a FIFO", source, {"model-2.safetensors": link_to_fifo}),
        folder_case("a second shard repeats the first", source, {"model-2.safetensors": weights}),
        folder_case("a second shard is garbage", source, {"model-2.safetensors": bytes(range(256)) * 4}),
        folder_case("a second shard is empty", source, {"model-2.safetensors": b""}),
        folder_case("a second shard is a folder", source, {"model-2.safetensors": folder_instead}),
        folder_case("a second shard holds a third layer", source, {"model-2.safetensors": extra_layer}),
        folder_case("only the second half of a split", source, {"model.safetensors": two["model-2.safetensors"]}),
    ]


# --- safetensors header fields -----------------------------------------------------------------------

def header_cases() -> list[Case]:
    return [case for source in FOLDERS for case in _header_cases(source)]


def _header_cases(source: str) -> list[Case]:
    cases = []
    weights = original(f"{source}/model.safetensors")
    header, blob = split_safetensors(weights)
    names = tensor_names(header)
    biggest = max(names, key=lambda n: header[n]["data_offsets"][1] - header[n]["data_offsets"][0])
    first, last = names[0], names[-1]

    def edited(edit) -> bytes:
        copy = json.loads(json.dumps(header))
        edit(copy)
        return join_safetensors(copy, blob)

    def entry(name, **fields):
        return lambda h: h[name].update(fields)

    def aliases(count):
        return lambda h: h.update({f"alias.{i}": dict(h[biggest]) for i in range(count)})

    def set_value(key, value):
        return lambda h: h.__setitem__(key, value)

    b0, b1 = header[biggest]["data_offsets"]
    edits = {
        "dtype F8_E4M3": entry(first, dtype="F8_E4M3"), "dtype 5": entry(first, dtype=5),
        "dtype missing": lambda h: h[first].pop("dtype"), "dtype F64": entry(biggest, dtype="F64"),
        "dtype F16": entry(biggest, dtype="F16"), "dtype I32": entry(biggest, dtype="I32"),
        "shape []": entry(first, shape=[]), "shape [-1, 32]": entry(first, shape=[-1, 32]),
        "shape of text": entry(first, shape=["32"]), "shape [true]": entry(first, shape=[True]),
        "shape [1e30]": entry(first, shape=[1e30]), "shape 2^40 x 2^40": entry(biggest, shape=[2 ** 40, 2 ** 40]),
        "shape of 9 dimensions": entry(first, shape=[1] * 9), "shape an object": entry(first, shape={"a": 1}),
        "shape transposed": lambda h: h[biggest].update(shape=h[biggest]["shape"][::-1]),
        "offsets reversed": entry(biggest, data_offsets=[b1, b0]),
        "offsets negative": entry(biggest, data_offsets=[-4, b1 - b0 - 4]),
        "offsets past the end": entry(last, data_offsets=[0, 2 ** 62]),
        "a 16 GB tensor": entry(biggest, shape=[2 ** 32], data_offsets=[0, 2 ** 34]),
        "a 16 GB tensor inside the file's claims": entry(biggest, shape=[2 ** 32], data_offsets=[b0, b0 + 2 ** 34]),
        "overlapping the previous tensor": entry(biggest, data_offsets=[b0 + 4, b1 + 4]),
        "offsets of three numbers": entry(first, data_offsets=[0, 4, 8]),
        "offsets of text": entry(first, data_offsets=["0", "4"]),
        "offsets of floats": entry(first, data_offsets=[0.0, 4.0]),
        "entry a list": set_value(first, [1, 2]), "entry a number": set_value(first, 7),
        "30 aliases of one range": aliases(30), "200 aliases of one range": aliases(200),
        "no tensors": lambda h: [h.pop(n) for n in names], "a tensor missing": lambda h: h.pop(biggest),
        "a tensor renamed": lambda h: h.__setitem__("renamed", h.pop(biggest)),
        "metadata a list": set_value("__metadata__", [1]),
        "metadata deep": set_value("__metadata__", json.loads("[" * 200 + "]" * 200)),
        "a layer's tensors twice as a third layer": lambda h: h.update(
            {k.replace(".1.", ".2."): v for k, v in list(h.items()) if ".1." in k}),
    }
    for kind, edit in edits.items():
        cases.append(folder_case(f"model.safetensors header: {kind}", source, {"model.safetensors": edited(edit)}))
    text = json.dumps(header).encode()
    raw = {
        "header length 0": join_safetensors(None, blob, raw_header=b"", header_len=0),
        "header length 1": join_safetensors(None, text + blob, raw_header=b"", header_len=1),
        "header length 2^64 - 1": join_safetensors(None, text + blob, raw_header=b"", header_len=2 ** 64 - 1),
        "header length past the end": join_safetensors(None, text + blob, raw_header=b"",
                                                       header_len=len(text) + len(blob) + 1),
        "header length one short": join_safetensors(None, text + blob, raw_header=b"", header_len=len(text) - 1),
        "header a list": join_safetensors(None, blob, raw_header=b"[1, 2]"),
        "header null": join_safetensors(None, blob, raw_header=b"null"),
        "header nested 5000 deep": join_safetensors(None, blob, raw_header=b"[" * 5000 + b"]" * 5000),
        "header with a key twice": join_safetensors(None, blob, raw_header=text[:-1] + b', "' +
                                                    first.encode() + b'": ' + json.dumps(header[first]).encode()
                                                    + b"}"),
        "header with NaN": join_safetensors(None, blob, raw_header=text.replace(b"[0, ", b"[NaN, ", 1)),
        "header not UTF-8": join_safetensors(None, blob, raw_header=text.replace(b'"', b'"\xff', 1)),
        "header of 17 MB": None,
    }
    for kind, content in raw.items():
        change = sparse(18 << 20, struct.pack("<Q", 17 << 20)) if content is None else content
        cases.append(folder_case(f"model.safetensors: {kind}", source, {"model.safetensors": change}))
    cases += value_cases(source, header, blob)
    return cases


def value_cases(source: str, header: dict, blob: bytes) -> list[Case]:
    """Numbers in the data that are not numbers (NaN), infinite, or so large that products overflow."""
    cases = []
    f32 = [n for n in tensor_names(header) if header[n]["dtype"] == "F32" and len(header[n]["shape"]) == 2]
    for name in (f32[0], f32[len(f32) // 2], f32[-1]):
        begin, end = header[name]["data_offsets"]
        for kind, value in (("NaN", math.nan), ("infinity", math.inf), ("1e38", 1e38)):
            filled = blob[:begin] + struct.pack("<f", value) * ((end - begin) // 4) + blob[end:]
            cases.append(folder_case(f"model.safetensors: {name} all {kind}", source,
                                     {"model.safetensors": join_safetensors(header, filled)}))
    zeros = join_safetensors(header, bytes(len(blob)))
    cases.append(folder_case("model.safetensors: every weight 0", source, {"model.safetensors": zeros}))
    return cases
