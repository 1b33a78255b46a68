"""An encoder–decoder seen through one part (encoder_decoder_view.py): each part's layer Trace holds the
run's own weights, its rows and columns are the right texts' tokens, and its scores, mask and softmax
agree with those weights."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder_view import (  # noqa: E402
    CROSS,
    DECODER,
    ENCODER,
    PARTS,
    EncoderDecoderPart,
    EncoderDecoderTrace,
)
from attention_explorer.engine.softmax import softmax  # noqa: E402

BART = Path(__file__).parent / "data" / "tiny-bart"
SOURCE, TARGET = "the cat sat on the mat", "the cat sat"


@pytest.fixture(scope="module")
def run():
    model = open_encoder_decoder(BART)
    return model, model.run(SOURCE, TARGET)


@pytest.mark.parametrize("part", list(PARTS))
def test_every_head_of_every_layer_is_the_runs_own(run, part):
    model, result = run
    shown = EncoderDecoderTrace(model.name, SOURCE, TARGET, result, EncoderDecoderPart(model, part))
    expected = {ENCODER: result.encoder_attention, DECODER: result.decoder_attention,
                CROSS: result.cross_attention}[part]
    assert (shown.n_layers, shown.n_heads) == expected.shape[:2]
    for layer in range(shown.n_layers):
        trace = shown.layer_trace(layer)
        assert len(trace.heads) == expected.shape[1]
        for head in trace.heads:
            assert np.array_equal(head.weights, expected[layer, head.index])
            assert np.abs(softmax(head.masked) - head.weights).max() < 1e-6  # the scores are the run's q·kᵀ


def test_rows_and_columns_are_each_texts_tokens(run):
    model, result = run
    shown = EncoderDecoderTrace(model.name, SOURCE, TARGET, result, EncoderDecoderPart(model, CROSS))
    cross = shown.layer_trace(0)
    assert (cross.n, cross.n_keys) == (len(result.target_labels), len(result.source.labels))
    assert cross.tokens == result.target_labels and cross.key_tokens == result.source.labels
    assert cross.column_labels("weights")[0] == "<s>" and cross.mask is None
    encoder = shown.with_part(EncoderDecoderPart(model, ENCODER)).layer_trace(1)
    assert encoder.tokens == result.source.labels and encoder.key_tokens is None and encoder.n_keys == encoder.n
    decoder = shown.with_part(EncoderDecoderPart(model, DECODER)).layer_trace(1)
    assert decoder.options.causal and decoder.mask[0, 1] and not decoder.mask[1, 0]
    assert EncoderDecoderPart(model, ENCODER).n_heads == 4 and EncoderDecoderPart(model, CROSS).n_heads == 8


def test_the_decoder_s_input_keeps_the_target_s_specials_and_words_one_place_on(run):
    model, _result = run
    target = model.tokenizer.encode("unbelievably, a dog")
    read = model.decoder_input("unbelievably, a dog")
    assert read.labels[0] == "</s>" and read.labels[1:] == target.labels[:-1]  # the start token, then all but </s>
    assert read.special.tolist() == [True, *target.special[:-1].tolist()] and read.special[:2].all()
    assert read.words[0] == (0,) and read.words[2] == tuple(range(2, 14))  # "unbelievably": 12 pieces, one on
    assert [i for word in read.words for i in word] == list(range(len(read.ids)))  # every token once, in order
    assert read.cut is None and model.decoder_input(" ".join(["a dog"] * 60)).cut is not None


@pytest.mark.parametrize("part", list(PARTS))
def test_a_head_switched_off_outputs_zero_and_changes_what_follows(run, part):
    model, result = run
    off = frozenset({(part, 0, 1)})
    switched = model.run(SOURCE, TARGET, off)
    shown = EncoderDecoderTrace(model.name, SOURCE, TARGET, switched, EncoderDecoderPart(model, part), off)
    assert shown.ablated == {(0, 1)}
    layer = shown.layer_trace(0)
    assert layer.ablated_heads == {1} and not layer.heads[1].output.any() and layer.heads[0].output.any()
    # its own weights stand (it still looks), but what it would have written is gone from every later layer
    np.testing.assert_array_equal(layer.heads[1].weights, {ENCODER: result.encoder_attention,
                                                           DECODER: result.decoder_attention,
                                                           CROSS: result.cross_attention}[part][0, 1])
    assert not np.array_equal(switched.logits, result.logits)
