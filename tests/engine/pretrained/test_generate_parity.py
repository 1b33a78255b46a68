"""Greedy generation writes the tokens transformers' `generate` writes (with its cache), stop tokens
included; under a scaled RoPE each step's attention is also its generate's. Runs with the `reference`
extra (torch, transformers); SmolLM2 when its package is installed, given to transformers as the weights
our engine read from its GGUF file."""

import numpy as np
import pytest

from attention_explorer.engine.pretrained import installed_models, open_pretrained
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate

pytest.importorskip("tokenizers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from tiny_checkpoints import DECODERS, GGUF, SCALED_ROPE  # noqa: E402
from transformers_reference import llama_from, their_steps, their_tokens  # noqa: E402

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


# Llama's longrope: one step of twenty (the 13th, the text past its original context of 16) reaches
# 1.7e-5 on an AMD EPYC machine's BLAS kernels, every other step ≤ 3.7e-6; within 1e-5 on the
# machine the case was written on. Not yet explained: the bar stays 1e-5 for every other case.
SCALED_ROPE_STEP_TOLERANCE = {"longrope (Llama)": 2e-5}


@pytest.mark.parametrize("case", SCALED_ROPE)
def test_scaled_rotary_positions_write_and_attend_as_transformers_generates(scaled_rope, case):
    """Each rotary scaling of tiny_checkpoints.SCALED_ROPE, 20 tokens after a prompt of 10 that the text
    outgrows the original context on the way: the tokens transformers' greedy generate writes, and
    each step's attention (the row of the token read last, every layer and head) within 1e-5 of its
    generate's. Under dynamic NTK and Llama's longrope its cache keeps the keys as the frequencies of
    their time turned them (decode.py); Phi-3 reads its whole text again past the original context.
    A freshly loaded reference: transformers' dynamic NTK keeps the frequencies of the longest text
    its model has read. `-s` prints the largest difference."""
    folder = scaled_rope(case)
    model = open_pretrained(folder)
    result = generate(model, "The cat sat on the mat", GenerationSettings(tokens=20))
    reference = transformers.AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager").eval()
    tokens, rows = their_steps(reference, result.prompt_ids, 20, model.generation.stop_ids)
    assert [s.token_id for s in result.steps] == tokens
    assert len(result.prompt_ids) + len(result.steps) - 1 > 16  # the text read grew past the original context
    largest = max(np.abs(step.attention - row).max() for step, row in zip(result.steps, rows, strict=True))
    assert largest <= SCALED_ROPE_STEP_TOLERANCE.get(case, 1e-5)
    print(f"{case}: {len(result.steps)} tokens as transformers writes them, their attention {largest:.1e}")
