"""The committed tiny checkpoints of the real-model tests, for the census."""

from pathlib import Path

import pytest

DATA = Path(__file__).parents[1] / "pretrained" / "data"


@pytest.fixture
def data_folder() -> Path:
    return DATA


@pytest.fixture(scope="module")
def tiny():
    """Open a tiny checkpoint by name: tiny-bert, tiny-gpt2, tiny-llama, tiny-llama.gguf."""
    pytest.importorskip("tokenizers")
    from attention_explorer.engine.pretrained import open_pretrained

    opened = {}

    def get(name: str):
        if name not in opened:
            opened[name] = open_pretrained(DATA / name)
        return opened[name]

    return get
