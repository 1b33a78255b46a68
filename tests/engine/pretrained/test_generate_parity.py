"""Greedy generation writes the tokens transformers' `generate` writes (with its cache), stop tokens
included. Runs with the `reference` extra (torch, transformers); SmolLM2 when its package is installed,
given to transformers as the weights our engine read from its GGUF file."""

import pytest

from attention_explorer.engine.pretrained import installed_models, open_pretrained
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate

pytest.importorskip("tokenizers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from tiny_checkpoints import DECODERS, GGUF  # noqa: E402
from transformers_reference import llama_from, their_tokens  # noqa: E402

PROMPTS = ("The cat sat on the mat because", "Once upon a time, 2017 robots")


# (what our engine opens, the folder transformers reads): every decoder family's tiny checkpoint
TINY_DECODERS = [(folder, folder) for folder in DECODERS] + list(GGUF.items())


@pytest.mark.parametrize(("name", "folder"), TINY_DECODERS)
def test_tiny_models_write_what_transformers_writes(data, name, folder):
    model = open_pretrained(data / name)
    reference = transformers.AutoModelForCausalLM.from_pretrained(str(data / folder)).eval()
    for prompt in PROMPTS:
        result = generate(model, prompt, GenerationSettings(tokens=20))
        theirs = their_tokens(reference, result.prompt_ids, 20, model.generation.stop_ids)
        assert [s.token_id for s in result.steps] == theirs


def test_smollm2_writes_what_transformers_writes():
    if "SmolLM2-135M (decoder)" not in installed_models():
        pytest.skip("SmolLM2-135M (decoder) is not installed")
    model = open_pretrained("SmolLM2-135M (decoder)")
    reference = llama_from(model.weights)
    for prompt, chat in (("The cat sat on the mat because it was tired, and", False),
                         ("What is the capital of France?", True)):
        result = generate(model, prompt, GenerationSettings(tokens=24, chat=chat))
        theirs = their_tokens(reference, result.prompt_ids, 24, model.generation.stop_ids)
        assert [s.token_id for s in result.steps] == theirs
