"""Our GGUF reader: hand-worked blocks, the tiny checkpoint's header, and agreement with `gguf`'s reader."""

import re
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer.engine.errors import ModelError
from attention_explorer.engine.pretrained.gguf_model import unpermute
from attention_explorer.engine.pretrained.gguf_reader import GGUFFile, dequantize


def _half(value: float) -> bytes:
    return np.float16(value).tobytes()


def test_q8_0_block_is_scale_times_signed_bytes():
    raw = _half(0.5) + np.arange(-16, 16, dtype=np.int8).tobytes()
    np.testing.assert_array_equal(dequantize("Q8_0", np.frombuffer(raw, np.uint8)), np.arange(-16, 16) * 0.5)


def test_q4_0_block_puts_low_nibbles_first_and_centres_on_eight():
    # Byte j holds value j (low nibble) and value j + 16 (high nibble).
    nibbles = bytes((j % 16) | (((j + 3) % 16) << 4) for j in range(16))
    values = dequantize("Q4_0", np.frombuffer(_half(2.0) + nibbles, np.uint8))
    expected = [(j % 16 - 8) * 2.0 for j in range(16)] + [((j + 3) % 16 - 8) * 2.0 for j in range(16)]
    np.testing.assert_array_equal(values, expected)


def test_q4_1_block_is_scale_times_nibble_plus_minimum():
    nibbles = bytes([0x21] * 16)  # low nibble 1, high nibble 2
    values = dequantize("Q4_1", np.frombuffer(_half(0.25) + _half(-1.0) + nibbles, np.uint8))
    np.testing.assert_array_equal(values, [1 * 0.25 - 1.0] * 16 + [2 * 0.25 - 1.0] * 16)


def _one_value_at_a_time(kind: str, raw: bytes) -> list[float]:
    """llama.cpp's block layouts read the slow, obvious way."""
    size = {"Q8_0": 34, "Q4_0": 18, "Q4_1": 20}[kind]
    values = []
    for start in range(0, len(raw), size):
        block = raw[start:start + size]
        d = float(np.frombuffer(block[:2], np.float16)[0])
        if kind == "Q8_0":
            values += [d * q for q in np.frombuffer(block[2:], np.int8).tolist()]
            continue
        m = float(np.frombuffer(block[2:4], np.float16)[0]) if kind == "Q4_1" else 0.0
        quants = block[size - 16:]
        nibbles = [b & 0x0F for b in quants] + [b >> 4 for b in quants]
        values += [(q - 8) * d if kind == "Q4_0" else q * d + m for q in nibbles]
    return values


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["Q8_0", "Q4_0", "Q4_1"]), st.integers(1, 4), st.data())
def test_dequantising_any_blocks_matches_reading_them_one_value_at_a_time(kind, blocks, data):
    size = {"Q8_0": 34, "Q4_0": 18, "Q4_1": 20}[kind]
    scales = data.draw(st.lists(st.floats(-4, 4, width=16), min_size=2 * blocks, max_size=2 * blocks))
    raw = b""
    for b in range(blocks):
        header = _half(scales[2 * b]) + (_half(scales[2 * b + 1]) if kind == "Q4_1" else b"")
        raw += header + data.draw(st.binary(min_size=size - len(header), max_size=size - len(header)))
    expected = np.array(_one_value_at_a_time(kind, raw), dtype=np.float32)
    np.testing.assert_allclose(dequantize(kind, np.frombuffer(raw, np.uint8)), expected, rtol=1e-6, atol=1e-6)


def test_unpermute_restores_hf_row_order():
    # llama.cpp interleaves each head's halves: HF rows (a0 a1 | b0 b1) are stored as (a0 b0 a1 b1).
    stored = np.array([[0], [2], [1], [3], [4], [6], [5], [7]], dtype=np.float32)
    np.testing.assert_array_equal(unpermute(stored, heads=2)[:, 0], np.arange(8))


def test_tiny_llama_header(data):
    gguf = GGUFFile(data / "tiny-llama.gguf")
    assert gguf.metadata["general.architecture"] == "llama"
    assert gguf.metadata["llama.attention.head_count_kv"] == 2
    assert gguf.metadata["tokenizer.ggml.model"] == "gpt2"
    assert gguf.tensors["blk.0.attn_q.weight"].shape == (32, 32)
    assert gguf.tensors["token_embd.weight"].shape == (320, 32)


@pytest.mark.parametrize("name", ["tiny-llama.gguf", "tiny-qwen2.gguf", "tiny-qwen3.gguf", "tiny-gemma.gguf",
                                  "tiny-gemma2.gguf", "tiny-phi3.gguf", "tiny-mistral.gguf", "tiny-gpt2.gguf",
                                  "tiny-gpt-neox.gguf", "tiny-olmo2.gguf", "tiny-gemma3.gguf",
                                  "tiny-bert.gguf", "tiny-roberta.gguf", "tiny-modernbert.gguf"])
def test_every_tensor_matches_the_gguf_package(data, name):
    gguf_package = pytest.importorskip("gguf")
    from gguf.quants import dequantize as reference_dequantize

    ours = GGUFFile(data / name)
    reference = gguf_package.GGUFReader(data / name)
    kinds = set()
    for tensor in reference.tensors:
        kinds.add(tensor.tensor_type.name)
        expected = reference_dequantize(tensor.data, tensor.tensor_type).reshape(ours.tensors[tensor.name].shape)
        np.testing.assert_array_equal(ours.tensor(tensor.name), expected, err_msg=tensor.name)
    assert kinds == {"F32", "F16", "Q8_0", "Q4_0", "Q4_1"}
    assert list(ours.metadata["tokenizer.ggml.tokens"]) == reference.fields["tokenizer.ggml.tokens"].contents()


def test_a_truncated_file_names_the_tensor_that_is_cut_when_it_is_opened(data, tmp_path):
    whole = (data / "tiny-llama.gguf").read_bytes()
    ends = {info.name: info.offset + info.nbytes for info in GGUFFile(data / "tiny-llama.gguf").tensors.values()}
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole[:-1000])
    with pytest.raises(ModelError, match=rf"^cut.gguf: tensor '(.+)' ends at byte ([\d,]+) but the file has "
                                         rf"{len(whole) - 1000:,}; the file is truncated") as refused:
        GGUFFile(cut)  # every range is checked with the header, before any tensor is read
    name, end = re.match(r"cut.gguf: tensor '(.+)' ends at byte ([\d,]+)", str(refused.value)).groups()
    assert ends[name] == int(end.replace(",", "")) > len(whole) - 1000


def test_a_file_cut_inside_its_header_says_so(data, tmp_path):
    cut = tmp_path / "head.gguf"
    cut.write_bytes((data / "tiny-llama.gguf").read_bytes()[:300])
    with pytest.raises(ModelError, match="head.gguf: the GGUF header is truncated"):
        GGUFFile(cut)


@pytest.mark.parametrize("content, message", [
    (b"", "empty"), (b"PK\x03\x04rest", "not a GGUF file"), (b"GGUF" + struct.pack("<I", 1) + bytes(16), "version 1"),
])
def test_files_that_are_not_gguf_are_refused(tmp_path, content, message):
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(ModelError, match=message):
        GGUFFile(path)
