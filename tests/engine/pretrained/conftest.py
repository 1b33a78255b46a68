"""The committed tiny checkpoints (see make_tiny_checkpoints.py), copies of them with a scaled RoPE, and a
safetensors writer for broken copies."""

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from tiny_checkpoints import SCALED_ROPE, edited_copy, set_fields

DATA = Path(__file__).with_name("data")


@pytest.fixture
def data() -> Path:
    return DATA


def _write_safetensors(path, tensors: dict[str, np.ndarray], dtype="F32") -> None:
    """The format by hand: header length, JSON header, the raw bytes one after another."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


@pytest.fixture
def scaled_rope(data, tmp_path):
    """scaled_rope(case) → a folder: the tiny checkpoint of tiny_checkpoints.SCALED_ROPE[case] copied with
    that case's config.json fields."""
    def copy(case: str) -> Path:
        name, fields = SCALED_ROPE[case]
        return edited_copy(data, tmp_path, name, lambda config: set_fields(config, fields))

    return copy


@pytest.fixture
def write_safetensors():
    return _write_safetensors
