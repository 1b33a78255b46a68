"""The tiny random checkpoints in tests/engine/pretrained/data/ (made by make_tiny_checkpoints.py beside
them), one HF folder per family, for the tests that run every family."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path

ENCODERS = ["tiny-bert", "tiny-roberta", "tiny-distilbert", "tiny-modernbert"]
DECODERS = ["tiny-gpt2", "tiny-gpt-neox", "tiny-llama", "tiny-qwen2", "tiny-mistral", "tiny-qwen3", "tiny-phi3",
            "tiny-olmo2", "tiny-gemma", "tiny-gemma2", "tiny-gemma3"]
FOLDERS = ENCODERS + DECODERS
# a file our engine opens → the folder transformers reads as its reference
GGUF = {"tiny-llama.gguf": "tiny-llama"}
# GGUF files of the other architectures → (what transformers reads as the model, as the tokenizer): the
# file itself where transformers' own GGUF loader reads that architecture exactly, else a folder
# holding the file's dequantised weights (make_tiny_checkpoints.py says why, per file); for
# Gemma, BERT, RoBERTa and ModernBERT, which transformers cannot read from a GGUF at all, the
# tokenizer.json its vocabulary came from; for a "llama" file's SentencePiece vocabulary, transformers'
# tokenizer that spaces its texts as llama.cpp does (transformers_reference.spaced_as_llama_cpp); for a
# file of an architecture transformers reads no model of (GPT-NeoX, OLMo 2), transformers' tokenizer
# built from its vocabulary (built_from_gguf)
GGUF_FAMILIES = {"tiny-qwen2.gguf": ("tiny-qwen2.gguf", "tiny-qwen2.gguf"),
                 "tiny-qwen3.gguf": ("tiny-qwen3-gguf", "tiny-qwen3.gguf"),
                 "tiny-gemma.gguf": ("tiny-gemma-gguf", "tiny-gemma-gguf"),
                 "tiny-gemma2.gguf": ("tiny-gemma2-gguf", "tiny-gemma2.gguf"),
                 "tiny-phi3.gguf": ("tiny-phi3-gguf", "tiny-phi3.gguf"),
                 "tiny-mistral.gguf": ("tiny-mistral.gguf", "spaced as llama.cpp: tiny-mistral.gguf"),
                 "tiny-gpt2.gguf": ("tiny-gpt2-gguf", "tiny-gpt2.gguf"),
                 "tiny-gpt-neox.gguf": ("tiny-gpt-neox-gguf", "built from the vocabulary: tiny-gpt-neox.gguf"),
                 "tiny-olmo2.gguf": ("tiny-olmo2-gguf", "built from the vocabulary: tiny-olmo2.gguf"),
                 "tiny-gemma3.gguf": ("tiny-gemma3-gguf", "tiny-gemma3.gguf"),
                 "tiny-bert.gguf": ("tiny-bert-gguf", "tiny-bert-gguf"),
                 "tiny-roberta.gguf": ("tiny-roberta-gguf", "tiny-roberta-gguf"),
                 "tiny-modernbert.gguf": ("tiny-modernbert-gguf", "tiny-modernbert-gguf")}
# Each rotary scaling on a tiny checkpoint: config.json's fields as the conftest's `scaled_rope` writes
# them into a copy (set_fields). The original contexts
# are 16 tokens (12 in GPT-NeoX's), so a text of 10 tokens is within them and one of 29 past them; the
# factors change every frequency they scale by far more than the test's tolerance.
SCALED_ROPE = {
    "linear (Llama)": ("tiny-llama", {"rope_parameters": {"rope_type": "linear", "factor": 4.0}}),
    "linear (Gemma 2)": ("tiny-gemma2", {"rope_parameters": {"rope_type": "linear", "factor": 2.5}}),
    "linear (GPT-NeoX)": ("tiny-gpt-neox", {"rope_parameters": {"rope_type": "linear", "factor": 3.0}}),
    "dynamic (Llama)": ("tiny-llama", {"rope_parameters": {"rope_type": "dynamic", "factor": 2.0},
                                       "max_position_embeddings": 16}),
    "dynamic (GPT-NeoX)": ("tiny-gpt-neox", {"rope_parameters": {"rope_type": "dynamic", "factor": 3.0},
                                             "max_position_embeddings": 12}),
    # as Qwen2.5's model cards have it: an older file (rope_theta at the top) given a rope_scaling
    "yarn (Qwen2.5, rope_scaling)": ("tiny-qwen2", {
        "rope_parameters": None, "rope_theta": 100000.0,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}}),
    "yarn (Qwen3, DeepSeek's fields)": ("tiny-qwen3", {"rope_parameters": {
        "rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 32, "beta_fast": 8, "beta_slow": 0.5,
        "mscale": 1.0, "mscale_all_dim": 0.5, "truncate": False}}),
    "longrope (Phi-3)": ("tiny-phi3", {"rope_parameters": {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0],
                                                           "long_factor": [2.0, 5.0, 9.0]},
                                       "original_max_position_embeddings": 16}),
    "longrope (Llama)": ("tiny-llama", {"rope_parameters": {
        "rope_type": "longrope", "short_factor": [1.0, 1.2, 1.5, 2.0], "long_factor": [1.5, 4.0, 9.0, 16.0],
        "original_max_position_embeddings": 16}}),
}

# GGUF files with a scaled RoPE → (the committed folder whose weights they hold, the config.json fields it was
# converted with, set as SCALED_ROPE's are). make_tiny_checkpoints.py writes each as llama.cpp's converter
# writes that folder so configured; the reference is transformers reading the folder so edited, for its own
# GGUF loader reads no rotary scaling of these architectures. Llama 3.1's original context is 8,192 here, the
# only one Llama's converter knows (it reads a top-level field config.json does not have, else 8,192).
SCALED_GGUF = {
    "tiny-llama-llama3.gguf": ("tiny-llama", {"rope_parameters": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 128.0,
        "original_max_position_embeddings": 8192}}),
    "tiny-llama-yarn.gguf": ("tiny-llama", {"rope_parameters": {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16, "beta_fast": 8.0, "beta_slow": 0.5,
        "attention_factor": 1.25}}),
    "tiny-phi3-longrope.gguf": ("tiny-phi3-gguf", SCALED_ROPE["longrope (Phi-3)"][1]),
}


def set_fields(config: dict, fields: dict) -> None:
    """`config` with `fields` set in place: `rope_parameters`' own updated, the others set, None removed."""
    for field, value in fields.items():
        if value is None:
            config.pop(field)
        elif field == "rope_parameters":
            config[field].update(value)
        else:
            config[field] = value


def edited_copy(data: Path, tmp_path: Path, name: str, edit: Callable[[dict], None]) -> Path:
    """A copy of tiny checkpoint `name` under tmp_path (a new folder each call) whose config.json
    `edit` changed in place."""
    folder = tmp_path / f"{name}-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(data / name, folder)
    config = json.loads((folder / "config.json").read_text())
    edit(config)
    (folder / "config.json").write_text(json.dumps(config))
    return folder
