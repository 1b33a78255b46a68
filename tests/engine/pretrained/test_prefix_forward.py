"""A decoder's text edited after its start reads only the tokens after the edit: the tokens before keep
their layer inputs from the last forward. The result is the forward's over the whole new text (1e-5),
its thumbnails and sinks are its own layers' to the bit, and only the new tokens go through each
layer's feed-forward. Encoders, a different set of heads off and a rotary scaling that follows the
text's length read the whole text again."""

import numpy as np
import pytest

from attention_explorer.engine.pretrained import forward as forward_module
from attention_explorer.engine.pretrained import open_pretrained
from attention_explorer.engine.pretrained.forward import forward
from attention_explorer.engine.pretrained.model import shared_start
from attention_explorer.engine.pretrained.recompute import LayerMaker
from tiny_checkpoints import DECODERS, ENCODERS

pytest.importorskip("tokenizers")

TOLERANCE = 1e-5
TEXT = "the cat sat on the mat because it was tired and the dog was not"
EDITS = {
    "last word changed": TEXT.rsplit(" ", 1)[0] + " happy",
    "words added": TEXT + " at all today",
    "last word taken away": TEXT.rsplit(" ", 1)[0],
    "a word in the middle changed": TEXT.replace("tired", "sleepy"),
}


def _checked_against_a_fresh_forward(model, trace) -> None:
    fresh = forward(model.weights, trace.encoded.ids, trace.ablated, special=trace.special)
    result = trace.forward_result
    for kept, expected in zip(result.layer_inputs, fresh.layer_inputs, strict=True):
        # to 1e-5 of the layer input's largest value: the residual stream grows to about 16 here, its
        # float32 sums round at that scale, and BLAS products of different shapes (the new tokens' rows
        # against the whole text's) differ in their last place from one OpenBLAS release to the next
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(kept, expected, rtol=TOLERANCE, atol=TOLERANCE * scale)
    assert np.abs(result.thumbnails - fresh.thumbnails).max() <= TOLERANCE
    assert np.abs(result.sinks - fresh.sinks).max() <= TOLERANCE
    np.testing.assert_allclose(result.next_logits, fresh.next_logits, rtol=TOLERANCE, atol=TOLERANCE)
    for layer in range(model.n_layers):  # what the views show is made from the kept layer inputs
        weights = trace.layer_weights(layer)
        np.testing.assert_array_equal(result.thumbnails[layer], weights)  # the trace's own, to the bit
        assert np.abs(weights - fresh.thumbnails[layer]).max() <= TOLERANCE


@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("ablate", [frozenset(), frozenset({(1, 0)})], ids=["all heads", "head 2:1 off"])
@pytest.mark.parametrize("name", DECODERS)
def test_an_edited_text_reads_from_its_first_new_token_as_a_whole_forward_would(data, name, ablate, edit):
    model = open_pretrained(data / name)
    before = model.run(TEXT, ablate)
    after = model.run(EDITS[edit], ablate, previous=before)
    same = shared_start(before.encoded.ids, after.encoded.ids)
    assert 0 < same < after.n or edit == "last word taken away"
    assert after.forward_result.read_from == min(same, after.n - 1)  # the last token is read: its scores
    assert after.text == EDITS[edit] and after.ablated == ablate
    _checked_against_a_fresh_forward(model, after)
    fresh = model.run(EDITS[edit], ablate)
    assert [t.token_id for t in after.next_tokens] == [t.token_id for t in fresh.next_tokens]


def test_only_the_new_tokens_go_through_each_layer_s_feed_forward(data, monkeypatch):
    model = open_pretrained(data / "tiny-llama")
    before = model.run(TEXT)
    rows = []
    original = forward_module.feed_forward
    monkeypatch.setattr(forward_module, "feed_forward", lambda arch, layer, x, *rest: rows.append(len(x))
                        or original(arch, layer, x, *rest))
    after = model.run(EDITS["words added"], previous=before)
    assert rows == [after.n - before.n] * model.n_layers


@pytest.mark.parametrize("thumb_px, keeps", [(8, True), (64, True), (3, False)],
                         ids=["pooled alike", "a pixel a weight", "pooled otherwise"])
@pytest.mark.parametrize("name", ["tiny-llama", "tiny-gemma2", "tiny-gpt2"])
def test_a_long_text_keeps_the_summaries_of_the_rows_before_the_edit_and_makes_only_the_later_queries(
        data, monkeypatch, name, thumb_px, keeps):
    """A long text (here: every text) keeps the thumbnails and sinks of the row blocks before the first
    new token, and makes the queries and weights of the later blocks only, when its thumbnails pool as
    many tokens a pixel as the earlier text's (with THUMB_PX 3, 30 tokens pool 10 and 32 pool 11): the
    whole forward's to 1e-5 all the same."""
    from attention_explorer.engine.pretrained import blocks, thumbnails

    monkeypatch.setattr(forward_module, "OWN_PAGES_FROM_TOKENS", 1)
    monkeypatch.setattr(blocks, "MIN_BLOCK_ROWS", 4)
    monkeypatch.setattr(blocks, "BLOCK_CELLS", 16)
    monkeypatch.setattr(thumbnails, "THUMB_PX", thumb_px)
    model = open_pretrained(data / name)
    before = model.run(TEXT)
    made = []
    original = forward_module.block_weights
    monkeypatch.setattr(forward_module, "block_weights", lambda arch, q, k_t, start, stop, **kw:
                        made.append(start) or original(arch, q, k_t, start, stop, **kw))
    after = model.run(EDITS["last word changed"], previous=before)
    kept = min(start for start, stop in blocks.row_blocks(after.n) if stop > after.read_from) if keeps else 0
    assert (0 < kept <= after.read_from) == keeps
    assert set(made) == {start for start, _ in blocks.row_blocks(after.n) if start >= kept}
    result, fresh = after.forward_result, forward(model.weights, after.encoded.ids, special=after.special)
    assert np.abs(result.thumbnails - fresh.thumbnails).max() <= TOLERANCE
    assert np.abs(result.sinks - fresh.sinks).max() <= TOLERANCE
    np.testing.assert_allclose(result.next_logits, fresh.next_logits, rtol=TOLERANCE, atol=TOLERANCE)
    maker = LayerMaker(model.weights, fresh, frozenset())
    for layer in range(model.n_layers):
        assert np.abs(after.layer_weights(layer) - maker.layer_weights(layer)).max() <= TOLERANCE


@pytest.mark.parametrize("name", ENCODERS)
def test_an_encoder_reads_the_whole_text_again(data, name):
    """Each of an encoder's tokens reads the tokens after it too."""
    model = open_pretrained(data / name)
    after = model.run(EDITS["words added"], previous=model.run(TEXT))
    assert after.forward_result.read_from == 0
    np.testing.assert_array_equal(after.layer_weights(1), model.run(EDITS["words added"]).layer_weights(1))


def test_other_heads_off_read_the_whole_text_again(data):
    model = open_pretrained(data / "tiny-llama")
    after = model.run(EDITS["words added"], frozenset({(0, 1)}), previous=model.run(TEXT))
    assert after.forward_result.read_from == 0
    np.testing.assert_array_equal(after.thumbnails, model.run(EDITS["words added"], frozenset({(0, 1)})).thumbnails)


@pytest.mark.parametrize("case, kept", [("dynamic (Llama)", False), ("linear (Llama)", True)])
def test_a_rotary_scaling_that_follows_the_text_s_length_reads_the_whole_text_again(scaled_rope, case, kept):
    """Under a dynamic scaling every token is turned by frequencies of the whole text's length: a longer
    text turns the first tokens otherwise. A linear one turns each token by its place alone."""
    model = open_pretrained(scaled_rope(case))
    after = model.run(EDITS["words added"], previous=model.run(TEXT))
    assert (after.forward_result.read_from > 0) == kept
    _checked_against_a_fresh_forward(model, after)


def test_shared_start_counts_the_tokens_two_texts_begin_with():
    assert shared_start(np.array([1, 2, 3]), np.array([1, 2, 4, 5])) == 2
    assert shared_start(np.array([1, 2]), np.array([1, 2, 3])) == 2
    assert shared_start(np.array([7]), np.array([1])) == 0
    assert shared_start(np.array([], dtype=int), np.array([1])) == 0


@pytest.mark.parametrize("name", DECODERS)
def test_a_head_switched_off_after_an_edit_is_the_whole_forward_s_to_the_rounding_and_says_so(data, name):
    """A forward resumed at a layer takes the layers before it from the earlier result: after an edit read
    from its first new token, those are a reading of fewer tokens (found by a random walk, which
    compared such a result with a whole forward to the bit)."""
    model = open_pretrained(data / name)
    edited = model.run(EDITS["words added"], previous=model.run(TEXT))
    assert edited.forward_result.read_from > 0 and not edited.forward_result.to_the_bit
    switched = model.run(EDITS["words added"], frozenset({(1, 0)}), previous=edited)
    assert switched.forward_result.read_from == 0 and not switched.forward_result.to_the_bit
    _checked_against_a_fresh_forward(model, switched)
    again = model.run(EDITS["words added"], previous=switched)  # back on: resumed from that, still rounded
    assert not again.forward_result.to_the_bit


def test_a_head_switched_off_after_a_whole_forward_is_a_whole_forward_to_the_bit(data):
    model = open_pretrained(data / "tiny-llama")
    whole = model.run(TEXT)
    assert whole.forward_result.to_the_bit
    switched = model.run(TEXT, frozenset({(1, 0)}), previous=whole)
    assert switched.forward_result.to_the_bit
    np.testing.assert_array_equal(switched.thumbnails, model.run(TEXT, frozenset({(1, 0)})).thumbnails)
