"""Our memory-mapped safetensors reader against the `safetensors` library, and its errors."""

import struct

import numpy as np
import pytest

from attention_explorer.engine.errors import ModelError
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
