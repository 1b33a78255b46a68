"""Our float32 forward against transformers' eager attention (output_attentions=True) within 1e-5.

Runs when transformers and torch are installed (the `reference` extra). The tiny random checkpoint
of every family always (make_tiny_checkpoints.py); MiniLM and SmolLM2 when their packages are
installed too. `pytest tests/engine/pretrained/test_parity_transformers.py -q -s` prints each tiny
model's largest differences.
"""

import numpy as np
import pytest

from attention_explorer.engine.pretrained import installed_models, open_pretrained
from attention_explorer.engine.pretrained.rope import Llama3

pytest.importorskip("tokenizers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from tiny_checkpoints import FOLDERS, GGUF, SCALED_ROPE  # noqa: E402
from transformers_reference import llama_from  # noqa: E402

transformers.logging.set_verbosity_error()  # their load reports and bars would bury the differences printed
transformers.utils.logging.disable_progress_bar()

TOLERANCE = 1e-5
TEXT = "The cats were playing in the park, 2017 robots reading"
SHORT_TEXT = "The cat sat on the mat"  # 10 tokens: within the original context of every scaled case
# (what our engine opens, the folder transformers reads): every family's tiny checkpoint
TINY = [(folder, folder) for folder in FOLDERS] + list(GGUF.items())


def reference(folder, ids, decoder: bool, ablate_head=None):
    """transformers' attention weights (layers, heads, n, n) and next-token probabilities."""
    auto = transformers.AutoModelForCausalLM if decoder else transformers.AutoModel
    model = auto.from_pretrained(str(folder), attn_implementation="eager").eval()
    return run_reference(model, ids, ablate_head)


def run_reference(model, ids, ablate_head=None):
    if ablate_head is not None:
        zero_head_in_output_projection(model, *ablate_head)
    with torch.no_grad():
        out = model(torch.tensor(ids)[None], output_attentions=True)
    weights = np.stack([a[0].numpy() for a in out.attentions])
    probabilities = out.logits[0, -1].double().softmax(-1).numpy() if hasattr(out, "logits") else None
    return weights, probabilities


def zero_head_in_output_projection(model, layer: int, head: int) -> None:
    """Switching a head off = zeroing its rows of W_O (the same as zeroing its output)."""
    config = model.config
    d_head = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    cols = slice(head * d_head, (head + 1) * d_head)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if f".{layer}." not in name or not name.endswith("weight"):
                continue
            if name.endswith(("attention.output.dense.weight", "o_proj.weight", "attention.dense.weight",
                              "attention.out_lin.weight", "attn.Wo.weight")):
                param[:, cols] = 0                       # Linear: (out, in)
            elif name.endswith("attn.c_proj.weight"):
                param[cols, :] = 0                       # GPT-2 Conv1D: (in, out)


@pytest.mark.parametrize("name, folder", TINY)
def test_tiny_models_match_transformers(data, name, folder):
    model = open_pretrained(data / name)
    trace = model.run(TEXT)
    their_ids = transformers.AutoTokenizer.from_pretrained(str(data / folder))(TEXT)["input_ids"]
    assert list(trace.encoded.ids) == their_ids
    weights, probabilities = reference(data / folder, trace.encoded.ids, model.is_decoder)
    largest = np.abs(trace.all_weights() - weights).max()
    said = f"{name} ({model.family}, {trace.n} tokens): attention {largest:.1e}"
    assert largest <= TOLERANCE
    if model.is_decoder:
        assert [t.token_id for t in trace.next_tokens] == list(np.argsort(probabilities)[::-1][:5])
        worst = max(abs(token.probability - probabilities[token.token_id]) for token in trace.next_tokens)
        said += f", top-5 probabilities {worst:.1e}"
        assert worst <= TOLERANCE
    print(said)


@pytest.mark.parametrize("name", FOLDERS)
def test_switching_a_head_off_changes_later_layers_as_in_transformers(data, name):
    model = open_pretrained(data / name)
    trace = model.run(TEXT, ablate={(0, 1)})
    weights, probabilities = reference(data / name, trace.encoded.ids, model.is_decoder, ablate_head=(0, 1))
    assert np.abs(trace.all_weights() - weights).max() <= TOLERANCE
    plain = model.run(TEXT)
    assert np.abs(trace.layer_weights(1) - plain.layer_weights(1)).max() > 1e-3  # the ablation did something
    np.testing.assert_array_equal(trace.layer_weights(0), plain.layer_weights(0))  # its own layer's weights stay


def test_roberta_counts_its_positions_from_the_padding_id_as_transformers(data):
    """Positions 2, 3, … (padding id 1 + 1 on), so its 66-row table reads 64 tokens; a padding token
    typed in the text stands at position 1 and the tokens after it count on from the one before."""
    model = open_pretrained(data / "tiny-roberta")
    assert model.max_tokens == 64
    trace = model.run("the cat<pad> sat on the mat")
    assert list(trace.encoded.ids).count(1) == 1
    weights, _ = reference(data / "tiny-roberta", trace.encoded.ids, decoder=False)
    assert np.abs(trace.all_weights() - weights).max() <= TOLERANCE
    longest = model.run("the cat " * 40)
    assert longest.n == 64
    weights, _ = reference(data / "tiny-roberta", longest.encoded.ids, decoder=False)
    assert np.abs(longest.all_weights() - weights).max() <= TOLERANCE


def _installed(name):
    path = installed_models().get(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def test_minilm_matches_transformers_at_about_120_tokens():
    path = _installed("MiniLM-L6 (encoder)")
    model = open_pretrained("MiniLM-L6 (encoder)")
    trace = model.run(" ".join(["the cat sat on the mat because it was tired"] * 12))
    assert trace.n == 122
    weights, _ = reference(path, trace.encoded.ids, decoder=False)
    assert np.abs(trace.all_weights() - weights).max() <= TOLERANCE


def test_smollm2_matches_transformers_on_its_dequantised_weights():
    _installed("SmolLM2-135M (decoder)")
    model = open_pretrained("SmolLM2-135M (decoder)")
    trace = model.run("The cat sat on the mat because it was tired.")
    weights, probabilities = run_reference(llama_from(model.weights), trace.encoded.ids)
    assert np.abs(trace.all_weights() - weights).max() <= TOLERANCE
    assert [t.token_id for t in trace.next_tokens] == list(np.argsort(probabilities)[::-1][:5])


def test_llama_3_rotary_scaling_matches_transformers(data, tmp_path):
    """Llama 3.1's frequency scaling (rope type "llama3") on the tiny Llama, its rotary base 100,000: with an
    original context of 48 and frequency factors 0.25 and 4, its four frequencies (wavelengths 6.3, 112,
    1,987 and 35,333 tokens) are kept, blended and divided by 8, all three cases; the attention, the next
    tokens and a greedy continuation as transformers makes them."""
    import json
    import shutil

    from attention_explorer.engine.pretrained.generate import GenerationSettings, generate
    from transformers_reference import their_tokens

    folder = tmp_path / "tiny-llama-3"
    shutil.copytree(data / "tiny-llama", folder)
    config = json.loads((folder / "config.json").read_text())
    config["rope_parameters"].update({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 0.25,
                                      "high_freq_factor": 4.0, "original_max_position_embeddings": 48})
    (folder / "config.json").write_text(json.dumps(config))
    model = open_pretrained(folder)
    assert model.weights.arch.rope_scaling == Llama3(8.0, 0.25, 4.0, 48)
    trace = model.run(TEXT)
    weights, probabilities = reference(folder, trace.encoded.ids, decoder=True)
    assert np.abs(trace.all_weights() - weights).max() <= TOLERANCE
    plain = open_pretrained(data / "tiny-llama").run(TEXT)
    assert np.abs(trace.all_weights() - plain.all_weights()).max() > 1e-3  # the scaling changes the attention
    assert [t.token_id for t in trace.next_tokens] == list(np.argsort(probabilities)[::-1][:5])
    written = generate(model, TEXT, GenerationSettings(tokens=6))
    reference_model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager")
    assert [s.token_id for s in written.steps] == their_tokens(reference_model.eval(), list(written.prompt_ids), 6,
                                                                written.stop_ids)[:len(written.steps)]
    assert "scaled as Llama 3.1 scales it" in __import__("attention_explorer.engine.step_real", fromlist=["x"]) \
        .rope_formula(trace.layer_trace(0))


@pytest.mark.parametrize("case", SCALED_ROPE)
def test_scaled_rotary_positions_match_transformers(data, scaled_rope, case):
    """Each rotary scaling of tiny_checkpoints.SCALED_ROPE on a text within its original context (10
    tokens) and one past it (29): every layer's and head's attention and the top-5 next tokens as
    transformers makes them, and not the plain model's (dynamic NTK: its own on the shorter text,
    whose base it does not enlarge). `-s` prints the largest differences."""
    folder = scaled_rope(case)
    model = open_pretrained(folder)
    plain = open_pretrained(data / SCALED_ROPE[case][0])
    said = []
    for text in (SHORT_TEXT, TEXT):
        trace = model.run(text)
        weights, probabilities = reference(folder, trace.encoded.ids, decoder=True)
        largest = np.abs(trace.all_weights() - weights).max()
        assert largest <= TOLERANCE
        assert [t.token_id for t in trace.next_tokens] == list(np.argsort(probabilities)[::-1][:5])
        worst = max(abs(token.probability - probabilities[token.token_id]) for token in trace.next_tokens)
        assert worst <= TOLERANCE
        moved = np.abs(trace.all_weights() - plain.run(text).all_weights()).max()
        if case.startswith("dynamic") and text == SHORT_TEXT:
            assert moved == 0
        else:
            assert moved > 1e-2
        said.append(f"{trace.n} tokens: attention {largest:.1e}, top-5 probabilities {worst:.1e}")
    print(f"{case}: " + "; ".join(said))
