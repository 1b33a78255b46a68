"""BART, the encoder–decoder (families/bart.py, encoder_decoder.py), against transformers'
BartForConditionalGeneration with eager attention (output_attentions=True): every layer's and head's
encoder self-attention, decoder causal self-attention and cross-attention within 1e-5, the tokens
transformers' tokenizer gives, and the top-5 next tokens after every target token.

Runs when transformers and torch are installed (the `reference` extra), on the tiny random checkpoint
(make_tiny_checkpoints.py: its embeddings scaled, its decoder's heads and feed-forward other than its
encoder's, a final_logits_bias) and a copy of it without the embedding scale.
`pytest tests/engine/pretrained/test_bart.py -q -s` prints the largest differences.
"""

import numpy as np
import pytest

from attention_explorer.engine.errors import ModelError
from attention_explorer.engine.pretrained import open_pretrained
from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder

pytest.importorskip("tokenizers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from tiny_checkpoints import edited_copy  # noqa: E402

transformers.logging.set_verbosity_error()  # their load reports and bars would bury the differences printed
transformers.utils.logging.disable_progress_bar()

TOLERANCE = 1e-5
# (source, target): a target shorter than its source, one longer, and digits and punctuation in both
PAIRS = [("the cat sat on the mat because it was tired", "the cat was tired"),
         ("my dog chased a ball", "the quick brown fox jumped over the lazy dog in the park"),
         ("The cats were playing in the park, 2017 robots reading", "attention is all you need, said 42 robots")]


def unscaled(data, tmp_path):
    def edit(config):
        config["scale_embedding"] = False
    return edited_copy(data, tmp_path, "tiny-bart", edit)


@pytest.mark.parametrize("scaled", [True, False], ids=["scaled embeddings", "plain embeddings"])
def test_tiny_bart_matches_transformers(data, tmp_path, scaled):
    folder = data / "tiny-bart" if scaled else unscaled(data, tmp_path)
    model = open_encoder_decoder(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    reference = transformers.BartForConditionalGeneration.from_pretrained(str(folder), attn_implementation="eager")
    reference.eval()
    shift = transformers.models.bart.modeling_bart.shift_tokens_right
    largest = dict.fromkeys(("encoder", "decoder", "cross", "logits"), 0.0)
    for source, target in PAIRS:
        result = model.run(source, target)
        theirs = tokenizer(source, text_target=target)
        assert list(result.source.ids) == theirs["input_ids"]
        decoder_ids = shift(torch.tensor(theirs["labels"])[None], reference.config.pad_token_id,
                            reference.config.decoder_start_token_id)
        assert list(result.target_ids) == decoder_ids[0].tolist()
        with torch.no_grad():
            out = reference(input_ids=torch.tensor(theirs["input_ids"])[None], decoder_input_ids=decoder_ids,
                            output_attentions=True)
        for kind, ours, their in (("encoder", result.encoder_attention, out.encoder_attentions),
                                  ("decoder", result.decoder_attention, out.decoder_attentions),
                                  ("cross", result.cross_attention, out.cross_attentions)):
            their = np.stack([layer[0].numpy() for layer in their])
            assert ours.shape == their.shape
            largest[kind] = max(largest[kind], float(np.abs(ours - their).max()))
        logits = out.logits[0].numpy()
        largest["logits"] = max(largest["logits"], float(np.abs(result.logits - logits).max()))
        for position in range(len(result.target_ids)):
            assert list(np.argsort(result.logits[position])[::-1][:5]) == \
                list(np.argsort(logits[position])[::-1][:5])
    print(", ".join(f"{kind} {value:.1e}" for kind, value in largest.items()))
    assert max(largest["encoder"], largest["decoder"], largest["cross"]) <= TOLERANCE


def test_attention_has_the_shapes_and_mask_of_each_kind(data):
    """Encoder and decoder each with their own heads; the decoder's weights after each row's token are
    zero; every row sums to 1; the decoder starts from decoder_start_token_id."""
    model = open_encoder_decoder(data / "tiny-bart")
    result = model.run(*PAIRS[1])
    n_source, n_target = len(result.source.ids), len(result.target_ids)
    assert result.encoder_attention.shape == (2, 4, n_source, n_source)
    assert result.decoder_attention.shape == (2, 8, n_target, n_target)
    assert result.cross_attention.shape == (2, 8, n_target, n_source)
    assert not np.triu(result.decoder_attention, k=1).any()
    for weights in (result.encoder_attention, result.decoder_attention, result.cross_attention):
        np.testing.assert_allclose(weights.sum(axis=-1), 1, atol=1e-5)
    assert result.target_ids[0] == 2 and result.target_labels[0] == "</s>"
    assert result.logits.shape == (n_target, 320)


def test_the_one_text_path_refuses_bart_with_one_message(data):
    with pytest.raises(ModelError, match="BART, an encoder–decoder: it reads a source text and writes a target text"):
        open_pretrained(data / "tiny-bart")


def test_another_family_is_not_opened_as_an_encoder_decoder(data):
    with pytest.raises(ModelError, match="model_type 'bert' is not an encoder–decoder this app opens; it opens BART"):
        open_encoder_decoder(data / "tiny-bert")
