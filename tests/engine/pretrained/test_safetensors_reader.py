"""Our safetensors reader against the `safetensors` library (bf16, fp16, fp32 read in chunks), and its errors."""

import json
import re
import struct
import tracemalloc

import numpy as np
import pytest

from attention_explorer.engine.errors import ModelError
from attention_explorer.engine.pretrained import safetensors_reader as reader
from attention_explorer.engine.pretrained.safetensors_reader import read_safetensors


def test_reads_what_it_was_given(tmp_path, write_safetensors):
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1.5, -2], dtype=np.float32)
    write_safetensors(tmp_path / "m.safetensors", {"a": a, "b": b})
    tensors = read_safetensors(tmp_path / "m.safetensors")
    np.testing.assert_array_equal(tensors["a"], a)
    np.testing.assert_array_equal(tensors["b"], b)


def test_half_precision_becomes_float32(tmp_path, write_safetensors):
    write_safetensors(tmp_path / "h.safetensors", {"w": np.array([0.5, -3], dtype=np.float16)}, dtype="F16")
    tensor = read_safetensors(tmp_path / "h.safetensors")["w"]
    assert tensor.dtype == np.float32
    np.testing.assert_array_equal(tensor, [0.5, -3])


def test_agrees_with_the_safetensors_library(data):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    path = data / "tiny-gpt2" / "model.safetensors"
    reference = safetensors_numpy.load_file(path)
    ours = read_safetensors(path)
    assert set(ours) == set(reference)
    for name, array in reference.items():
        np.testing.assert_array_equal(ours[name], array, err_msg=name)


def test_a_truncated_file_names_the_tensor_that_is_cut(data, tmp_path):
    cut = tmp_path / "model.safetensors"
    cut.write_bytes((data / "tiny-bert" / "model.safetensors").read_bytes()[:-500])
    with pytest.raises(ModelError, match=r"model.safetensors: tensor '.+' ends at byte .* truncated"):
        read_safetensors(cut)


@pytest.mark.parametrize("content, message", [
    (b"", "empty or truncated"), (struct.pack("<Q", 10 ** 9) + b"{}", "truncated or not a safetensors file"),
    (struct.pack("<Q", 5) + b"{oops", r"bad.safetensors \(its header\): not valid JSON \(line 1, column 2"),
])
def test_broken_headers_are_one_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(ModelError, match=message):
        read_safetensors(path)


# bf16 bit patterns and what they are: 1, −3, 0.15625, the largest bf16, the smallest subnormal, −0
BF16_BITS = [0x3F80, 0xC040, 0x3E20, 0x7F7F, 0x0001, 0x8000]
BF16_VALUES = np.array([1, -3, 0.15625, 3.3895313892515355e38, 2.0 ** -133, -0.0], dtype=np.float32)


def test_bfloat16_becomes_float32_exactly(tmp_path, write_safetensors):
    write_safetensors(tmp_path / "b.safetensors", {"w": np.array(BF16_BITS, dtype=np.uint16).reshape(2, 3)},
                      dtype="BF16")
    tensor = read_safetensors(tmp_path / "b.safetensors")["w"]
    assert tensor.dtype == np.float32 and tensor.shape == (2, 3)
    np.testing.assert_array_equal(tensor.view(np.uint32).ravel(), BF16_VALUES.view(np.uint32))


def test_each_type_of_a_mixed_file(tmp_path):
    """F32, F16 and BF16 side by side in one file, written by the safetensors library from torch."""
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    values = torch.tensor([[0.5, -2.25, 1e-3], [65504, 3.140625, -7]])
    tensors = {"f32": values, "f16": values.half(), "bf16": values.bfloat16(), "empty": torch.zeros(0, 4).bfloat16()}
    safetensors_torch.save_file(tensors, tmp_path / "mixed.safetensors")
    ours = read_safetensors(tmp_path / "mixed.safetensors")
    for name, tensor in tensors.items():
        assert ours[name].dtype == np.float32, name
        np.testing.assert_array_equal(ours[name], tensor.float().numpy(), err_msg=name)


def test_a_tensor_larger_than_one_chunk_is_converted_whole(tmp_path, write_safetensors, monkeypatch):
    monkeypatch.setattr(reader, "_CHUNK_BYTES", 10)  # 5 bf16 or f16 values at a time: 7 reads, the last short
    bits = np.random.default_rng(0).integers(0, 0x7F80, 33).astype(np.uint16)  # finite, positive
    halves = np.random.default_rng(1).standard_normal(33).astype(np.float16)
    write_safetensors(tmp_path / "b.safetensors", {"w": bits.reshape(3, 11)}, dtype="BF16")
    write_safetensors(tmp_path / "h.safetensors", {"w": halves}, dtype="F16")
    bf16 = read_safetensors(tmp_path / "b.safetensors")["w"]
    np.testing.assert_array_equal(bf16.view(np.uint32).ravel(), bits.astype(np.uint32) << 16)
    np.testing.assert_array_equal(read_safetensors(tmp_path / "h.safetensors")["w"], halves.astype(np.float32))


def _every_kind_of_number(dtype: str, count: int) -> np.ndarray:
    """`count` 16-bit numbers of `dtype` (BF16 as uint16 bits): zeros of both signs, subnormals, the
    largest, infinities, NaN and random normal numbers."""
    special = {"BF16": [0x0000, 0x8000, 0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC1],
               "F16": [0x0000, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E01]}[dtype]
    bits = np.random.default_rng(2).integers(0, 1 << 16, count).astype(np.uint16)
    bits[:len(special)] = special
    return bits if dtype == "BF16" else bits.view(np.float16)


@pytest.mark.parametrize("dtype", ["BF16", "F16", "F32"])
def test_a_matrix_read_transposed_into_columns_is_the_one_read_then_transposed_bit_for_bit(
        tmp_path, write_safetensors, monkeypatch, dtype):
    """Straight into a column slice of a wider array (a layer's laid-out q | k | v), a few rows of the
    file at a time (chunks and blocks that do not divide the rows): the numbers `read` gives, every bit
    of them (subnormals, infinities and NaN's payload too: refusing them is the caller's)."""
    monkeypatch.setattr(reader, "_CHUNK_BYTES", 5 * 11 * 2)  # 5 rows of 16 bits at a time: 3 reads, the last short
    monkeypatch.setattr(reader, "_ROWS_TRANSPOSED", 2)
    values = (_every_kind_of_number(dtype, 13 * 11) if dtype != "F32" else
              np.random.default_rng(3).standard_normal(13 * 11).astype(np.float32)).reshape(13, 11)
    write_safetensors(tmp_path / "m.safetensors", {"w": values}, dtype=dtype)
    wide = np.full((11, 20), 7.0, dtype=np.float32)
    with reader.open_safetensors(tmp_path / "m.safetensors") as file:
        file.read_transposed("w", wide[:, 4:17])
        expected = file.read("w")
    np.testing.assert_array_equal(wide[:, 4:17].view(np.uint32), expected.T.view(np.uint32))
    assert (wide[:, :4] == 7).all() and (wide[:, 17:] == 7).all()
    if dtype == "BF16":
        np.testing.assert_array_equal(wide[:, 4:17].view(np.uint32).T, values.astype(np.uint32) << 16)
    elif dtype == "F16":
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(wide[:, 4:17].T, values.astype(np.float32))


@pytest.mark.parametrize("dtype, stored", [("BF16", np.uint16), ("F16", np.float16)])
def test_a_converted_tensor_takes_its_float32_size_and_a_chunk(tmp_path, write_safetensors, dtype, stored):
    """No copy of the raw bytes whole, no uint32 or float64 copy: the peak while reading a 16 MiB
    (as float32) tensor is that tensor and one chunk of the file."""
    count = 1 << 22
    write_safetensors(tmp_path / "big.safetensors", {"w": np.ones(count, dtype=stored)}, dtype=dtype)
    with reader.open_safetensors(tmp_path / "big.safetensors") as file:
        tracemalloc.start()
        try:
            tensor = file.read("w")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert tensor.nbytes == 4 * count
    assert peak <= 4 * count + reader._CHUNK_BYTES + (1 << 16), f"{peak:,} bytes"


@pytest.mark.parametrize("dtype, shape, nbytes", [("BF16", [3], 12), ("F16", [2, 2], 4), ("F32", [2], 4)])
def test_a_type_that_does_not_fit_the_bytes_is_one_error(tmp_path, dtype, shape, nbytes):
    """A header whose type and shape need other than the bytes it gives (F32's 12 bytes called BF16)."""
    text = json.dumps({"w": {"dtype": dtype, "shape": shape, "data_offsets": [0, nbytes]}}).encode()
    path = tmp_path / "m.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + bytes(nbytes))
    with pytest.raises(ModelError) as caught:
        read_safetensors(path)
    message = str(caught.value)
    assert "\n" not in message
    assert re.fullmatch(rf"m\.safetensors: tensor 'w' holds {nbytes} bytes, its shape \({shape[0]},.*\) of {dtype} "
                        r"needs \d+; the header is damaged or not a safetensors header", message), message
