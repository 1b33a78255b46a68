"""BART writes a target for a source (encoder_decoder_write.py): greedy, with its self-attention keys and
values cached and its cross-attention's made once, the same tokens as transformers' `generate`
(num_beams=1, do_sample=False, nothing forced), each the likeliest after a whole decoder pass over the
tokens before it (encoder_decoder.decode, no cache).

The parity part runs when transformers and torch are installed (the `reference` extra)."""

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attention_explorer.engine.errors import OptionsError  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder import decode, encode, open_encoder_decoder  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder_write import write_target  # noqa: E402

SOURCES = ["the cat sat on the mat because it was tired", "my dog chased a ball",
           "The cats were playing in the park, 2017 robots reading"]


@pytest.fixture
def model(data):
    return open_encoder_decoder(data / "tiny-bart")


@pytest.mark.parametrize("source", SOURCES)
def test_each_token_is_the_likeliest_after_a_whole_pass_over_those_before_it(model, source):
    written = write_target(model, source, 12)
    assert len(written.ids) == 12 or written.stopped
    read = np.array([model.weights.decoder_start, *written.ids[:-1]], dtype=np.int64)
    memory, _attention, _layers = encode(model.weights, written.source_ids)
    logits, *_rest = decode(model.weights, read, memory)
    np.testing.assert_array_equal(np.argmax(logits, axis=1), written.ids)  # each token the likeliest after the last


def test_a_count_the_decoder_has_no_room_for_is_refused(model):
    for count in (0, 64, True):
        with pytest.raises(OptionsError, match="writes from 1 to 63 tokens"):
            write_target(model, "a dog", count)


def test_the_tokens_are_transformers_generate_s(data, model):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    folder = data / "tiny-bart"
    reference = transformers.BartForConditionalGeneration.from_pretrained(str(folder), attn_implementation="eager")
    reference.eval()
    for source in SOURCES:
        ours = write_target(model, source, 20)
        with torch.no_grad():
            theirs = reference.generate(torch.tensor(ours.source_ids)[None], max_new_tokens=20, num_beams=1,
                                        do_sample=False, forced_eos_token_id=None, forced_bos_token_id=None,
                                        no_repeat_ngram_size=0, min_length=0)
        assert theirs[0, 0] == model.weights.decoder_start
        assert ours.ids.tolist() == theirs[0, 1:1 + len(ours.ids)].tolist(), source
