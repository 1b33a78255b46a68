"""Generation with a key/value cache: every step's attention rows and scores are the project's own full
forward over the prompt and the text written so far (1e-5, with and without a head switched off, the
cache grown on the way), the choice and its candidates come from those scores, and it stops, cancels
and refuses as it says. Under a rotary scaling whose frequencies follow the text's length (dynamic NTK,
a Llama's longrope) a step is that forward as the generation read the text, which past the original
context is not the forward over the text at once: transformers' generate reads it so (decode.py)."""

import dataclasses
import json
import shutil

import numpy as np
import pytest

import tiny_checkpoints
from attention_explorer.engine.errors import ModelError, OptionsError, SentenceError
from attention_explorer.engine.pretrained import Cancelled, open_pretrained
from attention_explorer.engine.pretrained import decode as decode_module
from attention_explorer.engine.pretrained.decode import Decoder
from attention_explorer.engine.pretrained.forward import forward
from attention_explorer.engine.pretrained.generate import CANCELLED, LENGTH, STOP_TOKEN, GenerationSettings, generate
from attention_explorer.engine.pretrained.generation_info import GenerationInfo
from attention_explorer.engine.pretrained.recompute import LayerMaker
from attention_explorer.engine.pretrained.sampling import Sampling, likeliest, softmax

pytest.importorskip("tokenizers")

TOLERANCE = 1e-5
PROMPT = "The cat sat on the mat"
DECODERS = [*tiny_checkpoints.DECODERS, *tiny_checkpoints.GGUF]
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def full_forward(model, ids, ablate, at_once=None):
    """The project's forward over `ids`: the last token's row of every layer and head, and its scores;
    `at_once`: read as a generation reads, that many tokens at once and the others one at a time."""
    result = forward(model.weights, np.asarray(ids), ablate, at_once=at_once)
    maker = LayerMaker(model.weights, result, ablate)
    return np.stack([maker.layer_weights(layer)[:, -1] for layer in range(model.n_layers)]), result.next_logits


@pytest.mark.parametrize("ablate", [frozenset(), frozenset({(0, 1)})], ids=["all heads", "head 1:2 off"])
@pytest.mark.parametrize("name", DECODERS)
def test_every_step_is_the_full_forward_over_the_text_so_far(data, monkeypatch, name, ablate):
    monkeypatch.setattr(decode_module, "FIRST_ROOM", 3)  # the cache grows twice on the way
    model = dataclasses.replace(open_pretrained(data / name), generation=GenerationInfo())  # no stop: 12 tokens
    result = generate(model, PROMPT, GenerationSettings(tokens=12, ablate=ablate))
    assert len(result.steps) == 12 and result.stopped == LENGTH
    n = len(result.prompt_ids)
    decoder = Decoder(model, ablate, n + 12)
    logits, rows = decoder.prefill(result.prompt_ids)
    for i, step in enumerate(result.steps):
        expected_rows, expected_logits = full_forward(model, result.ids[:n + i], ablate)
        assert step.attention.shape == (model.n_layers, model.n_heads, n + i)
        assert np.abs(step.attention - expected_rows).max() <= TOLERANCE
        assert np.abs(rows - expected_rows).max() <= TOLERANCE
        # scores are not bounded as weights are: float32 rounding grows with their size (~4 here)
        assert np.abs(logits - expected_logits).max() <= TOLERANCE * max(1.0, np.abs(expected_logits).max())
        assert step.token_id == int(np.argmax(expected_logits))
        probabilities = softmax(expected_logits)
        assert [c.token_id for c in step.choice.candidates] == list(likeliest(probabilities))
        for candidate in step.choice.candidates:
            assert abs(candidate.probability - probabilities[candidate.token_id]) <= TOLERANCE
        logits, rows = decoder.step(step.token_id)
    if ablate:
        plain = generate(model, PROMPT, GenerationSettings(tokens=12))
        assert not np.array_equal(plain.steps[-1].attention, result.steps[-1].attention)


@pytest.mark.parametrize("case", tiny_checkpoints.SCALED_ROPE)
def test_under_a_scaled_rope_every_step_is_the_forward_over_the_text_as_the_generation_read_it(
        scaled_rope, monkeypatch, case):
    """12 tokens after a prompt of 10, the text outgrowing the original context of 16 on the way. Where
    the frequencies follow the text's length and the cache keeps its keys (dynamic NTK; longrope but in
    Phi-3, which reads its whole text again past the original context) a step is the forward whose
    prompt is read at once and each later token with the frequencies of the text up to it, and differs
    from the forward over the text at once once that text is past the original context; elsewhere it is
    the forward at once."""
    monkeypatch.setattr(decode_module, "FIRST_ROOM", 3)  # the cache, and its rotary tables, grow on the way
    model = dataclasses.replace(open_pretrained(scaled_rope(case)), generation=GenerationInfo())
    result = generate(model, PROMPT, GenerationSettings(tokens=12))
    n = len(result.prompt_ids)
    as_read = case in ("dynamic (Llama)", "dynamic (GPT-NeoX)", "longrope (Llama)")
    original = model.arch.rope_scaling.original if as_read else 0
    for i, step in enumerate(result.steps):
        rows, logits = full_forward(model, result.ids[:n + i], frozenset(), at_once=n if as_read else None)
        assert np.abs(step.attention - rows).max() <= TOLERANCE
        assert step.token_id == int(np.argmax(logits))
        if as_read and n + i > original:
            at_once, _ = full_forward(model, result.ids[:n + i], frozenset())
            assert np.abs(step.attention - at_once).max() > 1e-3


def test_a_seed_writes_the_same_again_and_the_candidates_are_the_models(data):
    model = open_pretrained(data / "tiny-llama")
    settings = GenerationSettings(tokens=10, sampling=Sampling(temperature=1.5, top_k=40, top_p=0.95, seed=7))
    first, again = (generate(model, PROMPT, settings) for _ in range(2))
    assert [s.token_id for s in first.steps] == [s.token_id for s in again.steps]
    other = generate(model, PROMPT, dataclasses.replace(settings, sampling=Sampling(temperature=1.5, seed=8)))
    assert [s.token_id for s in other.steps] != [s.token_id for s in first.steps]
    for step in first.steps:
        assert len(step.choice.candidates) == 5
        assert step.choice.candidates[0].probability >= step.choice.candidates[-1].probability


def test_between_layers_hears_every_layer_read_and_changes_nothing_written(data):
    """A window's worker waits there while the user acts: once after each layer of the prompt and of each
    token read, and the generation is the same with it."""
    model = dataclasses.replace(open_pretrained(data / "tiny-llama"), generation=GenerationInfo())  # no stop
    settings = GenerationSettings(tokens=4)
    plain = generate(model, PROMPT, settings, keep_reader=True)
    heard = []
    paused = generate(model, PROMPT, settings, keep_reader=True, between_layers=lambda: heard.append(1))
    # the prompt, the three tokens read after the first written, and the last (read for its scores)
    assert len(heard) == model.arch.n_layers * (1 + 3 + 1)
    assert [s.token_id for s in paused.steps] == [s.token_id for s in plain.steps]
    np.testing.assert_array_equal(paused.after_logits, plain.after_logits)


def test_it_stops_after_a_stop_token_of_the_model(data):
    model = open_pretrained(data / "tiny-gpt2")
    assert model.generation.stop_ids == (0,)  # config.json's eos_token_id
    first = generate(model, PROMPT, GenerationSettings(tokens=3)).steps[1].token_id
    stopping = dataclasses.replace(model, generation=GenerationInfo(stop_ids=(first,)))
    result = generate(stopping, PROMPT, GenerationSettings(tokens=8))
    assert result.stopped == STOP_TOKEN and result.steps[-1].token_id == first and len(result.steps) == 2
    assert result.written == model.tokenizer.decode([s.token_id for s in result.steps])


def test_a_stop_keeps_what_was_written_and_a_cancel_while_reading_raises(data):
    model = open_pretrained(data / "tiny-llama.gguf")
    heard = []

    def progress(fraction, text):
        heard.append((fraction, text))
        return not text.startswith("token 4")

    written = []
    result = generate(model, PROMPT, GenerationSettings(tokens=10), progress, on_step=written.append)
    assert result.stopped == CANCELLED and len(result.steps) == 3 and written == result.steps
    fractions = [f for f, _ in heard]
    assert fractions == sorted(fractions) and heard[0][1].startswith("reading the prompt")
    with pytest.raises(Cancelled):
        generate(model, PROMPT, GenerationSettings(tokens=10), lambda fraction, text: False)


def test_what_cannot_be_generated_is_refused_in_words(data):
    llama = open_pretrained(data / "tiny-llama")
    with pytest.raises(OptionsError, match="is an encoder"):
        generate(open_pretrained(data / "tiny-bert"), PROMPT)
    with pytest.raises(OptionsError, match="no chat template"):
        generate(llama, PROMPT, GenerationSettings(chat=True))
    with pytest.raises(OptionsError, match="at most 64 tokens .* at most 5. more can be written, not 100"):
        generate(llama, PROMPT, GenerationSettings(tokens=100))
    with pytest.raises(OptionsError, match="no head 9 in layer 1"):
        generate(llama, PROMPT, GenerationSettings(ablate=frozenset({(0, 8)})))
    with pytest.raises(SentenceError):
        generate(llama, "   ")
    for tokens in (0, -1, 2.5, True):
        with pytest.raises(OptionsError, match="whole number from 1"):
            GenerationSettings(tokens=tokens)


def copy_with(data, tmp_path, files: dict[str, object]):
    """tiny-llama's folder with `files` added (JSON objects, or text as it is)."""
    folder = tmp_path / "model"
    shutil.copytree(data / "tiny-llama", folder)
    for name, content in files.items():
        (folder / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return folder


def test_a_chat_reads_the_template_and_stop_ids_of_the_folder(data, tmp_path):
    folder = copy_with(data, tmp_path, {"tokenizer_config.json": {"chat_template": CHATML, "eos_token": "<|im_end|>"},
                                        "generation_config.json": {"eos_token_id": [2, 5]}})
    model = open_pretrained(folder)
    assert model.generation.stop_ids == (2, 5) and model.generation.eos_token == "<|im_end|>"
    result = generate(model, "Hi", GenerationSettings(tokens=4, chat=True))
    assert result.text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n" and result.prompt == "Hi"
    assert list(result.prompt_ids) == list(model.tokenizer.encode(result.text, add_specials=False).ids)
    jinja = copy_with(data, tmp_path / "jinja", {"chat_template.jinja": "{{ messages[0]['content'] }}!"})
    assert generate(open_pretrained(jinja), "Hi", GenerationSettings(tokens=1, chat=True)).text == "Hi!"


@pytest.mark.parametrize(("files", "message"), [
    ({"generation_config.json": {"eos_token_id": 320}}, "generation_config.json: field 'eos_token_id' must be token"),
    ({"generation_config.json": {"eos_token_id": ["2"]}}, "must be token ids"),
    ({"tokenizer_config.json": {"chat_template": 3}}, "'chat_template' must be a template's text"),
    ({"tokenizer_config.json": "[1, 2]"}, "tokenizer_config.json: not a JSON object"),
])
def test_damaged_generation_fields_are_one_model_error(data, tmp_path, files, message):
    with pytest.raises(ModelError, match=message):
        open_pretrained(copy_with(data, tmp_path, files))


def test_the_likeliest_are_a_stable_sorts_first_ones_even_through_ties():
    rng = np.random.default_rng(1)
    for _ in range(200):
        values = rng.integers(0, 6, size=rng.integers(1, 30)).astype(float)
        assert list(likeliest(values)) == list(np.argsort(-values, kind="stable")[:5])


class _CountingTokenizer:
    """A tokenizers.Tokenizer that counts the pieces asked of it (its methods cannot be patched)."""

    def __init__(self, tokenizer):
        self._tokenizer, self.asked = tokenizer, 0

    def id_to_token(self, token_id):
        self.asked += 1
        return self._tokenizer.id_to_token(token_id)


def test_extending_a_text_by_written_tokens_asks_the_tokenizer_once_per_token_ever(data):
    """A scrubber step extends the text so far by every written token: each asked of `tokenizers` once
    (each call holds stderr back through a temporary file), with the same labels as asked one by one."""
    tokenizer = open_pretrained(data / "tiny-gpt2").tokenizer
    encoded, written = tokenizer.encode("the cat sat"), [5, 9, 5, 17, 9]
    counting = tokenizer.tokenizer = _CountingTokenizer(tokenizer.tokenizer)
    first = tokenizer.extended(encoded, written)
    assert counting.asked == 3  # three distinct tokens
    again = tokenizer.extended(encoded, written[:4])
    assert counting.asked == 3
    assert again.labels == first.labels[:-1] and again.pieces == first.pieces[:-1]
    tokenizer.token_label(17)  # a label reads the same pieces
    assert counting.asked == 3


def test_a_next_token_is_labelled_as_it_would_be_written_after_the_text(data):
    """After a word, "the" continues it and " the" starts a new one: the next-token list had named
    both "the". Each candidate reads as the token will once written (extended), "·the" and "the"."""
    tokenizer = open_pretrained(data / "tiny-gpt2").tokenizer
    spaced, joined = tokenizer.token_id("Ġthe"), tokenizer.token_id("the")
    after_word = tokenizer.encode("the cat sat")
    assert after_word.labels[-1] == "·at"
    assert tokenizer.label_after(after_word, spaced) == "the"
    assert tokenizer.label_after(after_word, joined) == "·the"
    for token in (spaced, joined):
        assert tokenizer.label_after(after_word, token) == tokenizer.extended(after_word, [token]).labels[-1]
    after_space = tokenizer.encode("the cat ")
    assert tokenizer.label_after(after_space, joined) == "the"  # nothing to continue


def test_the_next_tokens_of_a_forward_name_a_continuation_as_one(data):
    model = open_pretrained(data / "tiny-gpt2")
    trace = model.run("the mat")
    labels = [candidate.label for candidate in trace.next_tokens]
    assert "cat" in labels and "·at" in labels  # " cat" starts a word, "at" continues "mat"
    for candidate in trace.next_tokens:
        assert candidate.label == model.tokenizer.extended(trace.encoded, [candidate.token_id]).labels[-1]
