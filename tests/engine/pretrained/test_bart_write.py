"""BART writes a target for a source (encoder_decoder_write.py), its self-attention keys and values cached
and its cross-attention's made once: each step's rows of self- and cross-attention are the last rows of
a whole decoder pass over the tokens read so far (encoder_decoder.decode, no cache) within 1e-5, with
heads on or off, and each greedy token is the likeliest after them; the files' forced tokens apply; a
seed draws the same tokens again; the tokens are transformers' `generate`'s (num_beams=1, greedy, the
model's own forced tokens).

The parity part runs when transformers and torch are installed (the `reference` extra)."""

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attention_explorer.engine.errors import OptionsError  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder import decode, encode, open_encoder_decoder  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder_write import write_target  # noqa: E402
from attention_explorer.engine.pretrained.generate import LENGTH, STOP_TOKEN, GenerationSettings  # noqa: E402
from attention_explorer.engine.pretrained.sampling import Sampling  # noqa: E402
from tiny_checkpoints import edited_copy  # noqa: E402

TOLERANCE = 1e-5
SOURCES = ["the cat sat on the mat because it was tired", "my dog chased a ball",
           "The cats were playing in the park, 2017 robots reading"]
OFF = frozenset({("encoder", 0, 1), ("decoder", 1, 3), ("cross", 0, 5)})


@pytest.fixture
def model(data):
    return open_encoder_decoder(data / "tiny-bart")


def whole_pass(model, generation):
    """encoder_decoder.decode over everything the decoder read, without a cache."""
    memory, _attention, _layers = encode(model.weights, generation.source.ids, generation.off)
    logits, own, read, _layers = decode(model.weights, generation.read_ids, memory, generation.off)
    return logits, own, read


@pytest.mark.parametrize("off", [frozenset(), OFF], ids=["every head", "three heads off"])
@pytest.mark.parametrize("source", SOURCES)
def test_each_step_is_the_last_row_of_a_whole_pass_over_the_tokens_read(model, source, off):
    generation = write_target(model, source, GenerationSettings(tokens=12), off)
    assert generation.stopped in (STOP_TOKEN, LENGTH) and len(generation.steps) <= 12
    logits, own, read = whole_pass(model, generation)
    for at, step in enumerate(generation.steps):
        assert np.abs(step.self_attention - own[:, :, at, :at + 1]).max() <= TOLERANCE
        assert np.abs(step.cross_attention - read[:, :, at]).max() <= TOLERANCE
        if not step.forced:  # each greedy token the likeliest after the tokens before it
            assert step.token_id == int(np.argmax(logits[at]))
            assert step.choice.candidates[0].token_id == step.token_id


def test_the_last_token_a_count_allows_is_the_forced_end_and_a_forced_start_comes_first(model, data, tmp_path):
    generation = write_target(model, SOURCES[0], GenerationSettings(tokens=5))
    assert model.generation.forced_eos == 2 and model.generation.forced_bos is None
    if generation.stopped == LENGTH:
        assert generation.steps[-1].forced and generation.steps[-1].token_id == 2
    assert not any(step.forced for step in generation.steps[:-1])

    def forced_start(config):
        config["forced_bos_token_id"] = 0
    started = write_target(open_encoder_decoder(edited_copy(data, tmp_path, "tiny-bart", forced_start)), SOURCES[0],
                           GenerationSettings(tokens=5))
    assert started.steps[0].forced and started.steps[0].token_id == 0
    assert started.steps[0].choice.candidates == generation.steps[0].choice.candidates  # the model's own


def test_a_seed_draws_the_same_tokens_again_and_another_seed_may_not(model):
    def drawn(seed):
        sampling = Sampling(temperature=1.5, top_k=40, seed=seed)
        settings = GenerationSettings(tokens=10, sampling=sampling)
        return [s.token_id for s in write_target(model, SOURCES[1], settings).steps]
    assert drawn(3) == drawn(3)
    assert len({tuple(drawn(seed)) for seed in range(4)}) > 1


def test_a_count_the_decoder_has_no_room_for_and_a_chat_are_refused(model):
    with pytest.raises(OptionsError, match="writes from 1 to 64 tokens, not 65"):
        write_target(model, "a dog", GenerationSettings(tokens=65))
    with pytest.raises(OptionsError, match="no chat template"):
        write_target(model, "a dog", GenerationSettings(chat=True))
    assert len(write_target(model, "a dog", GenerationSettings(tokens=64)).steps) <= 64


def test_a_stop_asked_for_keeps_what_was_written(model):
    generation = write_target(model, SOURCES[0], GenerationSettings(tokens=20),
                              progress=lambda fraction, _text: fraction < 0.2)
    assert generation.stopped == "cancelled" and 1 <= len(generation.steps) < 20


def test_the_tokens_are_transformers_generate_s(data, model, tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()

    def forced_start(config):
        config["forced_bos_token_id"] = 0
    for folder in (data / "tiny-bart", edited_copy(data, tmp_path, "tiny-bart", forced_start)):
        ours_model = open_encoder_decoder(folder)
        reference = transformers.BartForConditionalGeneration.from_pretrained(str(folder),
                                                                               attn_implementation="eager").eval()
        for source in SOURCES:
            for count in (6, 20):
                ours = write_target(ours_model, source, GenerationSettings(tokens=count))
                with torch.no_grad():  # the model's own forced tokens, one greedy path
                    theirs = reference.generate(torch.tensor(ours.source.ids)[None], max_new_tokens=count, num_beams=1,
                                                do_sample=False, no_repeat_ngram_size=0, min_length=0)
                assert theirs[0, 0] == ours_model.weights.decoder_start
                assert ours.ids.tolist() == theirs[0, 1:].tolist(), (folder.name, source, count)
