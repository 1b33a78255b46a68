"""The text so far of a generation, as the trace its decoder's kept inputs make: the same thumbnails, sink
sums and layers as the project's forward over the same tokens (1e-5), at every step, with a head off
and with the cache grown on the way; the written tokens marked; its next tokens the candidates. Under a
rotary scaling whose frequencies follow the text's length, the forward over them as the generation read
them (decode.py)."""

import dataclasses

import numpy as np
import pytest

from attention_explorer.engine.pretrained import decode as decode_module
from attention_explorer.engine.pretrained import open_pretrained
from attention_explorer.engine.pretrained.forward import forward
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate
from attention_explorer.engine.pretrained.generation_info import GenerationInfo
from attention_explorer.engine.pretrained.generation_trace import (
    SharedProjections,
    step_rows,
    trace_so_far,
    written_so_far,
)
from attention_explorer.engine.pretrained.recompute import LayerMaker
from attention_explorer.engine.pretrained.tokenizing import CONTINUATION, WRITTEN_MARK, first_tokens
from tiny_checkpoints import DECODERS

pytest.importorskip("tokenizers")

TOLERANCE = 1e-5
PROMPT = "The cat sat on the mat"


@pytest.mark.parametrize("shared", [False, True], ids=["own projections", "whole text's shared"])
@pytest.mark.parametrize("ablate", [frozenset(), frozenset({(1, 0)})], ids=["all heads", "head 2:1 off"])
@pytest.mark.parametrize("name", DECODERS)
def test_the_text_so_far_is_the_forward_over_it(data, monkeypatch, name, ablate, shared):
    monkeypatch.setattr(decode_module, "FIRST_ROOM", 3)  # the cache (and its kept inputs) grows on the way
    model = dataclasses.replace(open_pretrained(data / name), generation=GenerationInfo())  # no stop token
    generation = generate(model, PROMPT, GenerationSettings(tokens=10, ablate=ablate), keep_reader=True)
    prompt = len(generation.prompt_ids)
    assert written_so_far(generation) == 10  # the last token was read too
    projections = SharedProjections(model, generation) if shared else None
    for written in (0, 1, 5, 10):
        trace = trace_so_far(model, generation, written, projections)
        ids = generation.ids[:prompt + written]
        expected = forward(model.weights, ids, ablate, special=trace.special)
        maker = LayerMaker(model.weights, expected, ablate)
        assert trace.n == prompt + written and np.array_equal(trace.encoded.ids, ids)
        assert not trace.forward_result.to_the_bit  # read a token at a time: to the rounding only
        assert np.abs(trace.thumbnails - expected.thumbnails).max() <= TOLERANCE
        assert np.abs(trace.forward_result.sinks - expected.sinks).max() <= TOLERANCE
        for layer in range(model.n_layers):
            assert np.abs(trace.layer_weights(layer) - maker.layer_weights(layer)).max() <= TOLERANCE
        if written < 10:  # what the next token was chosen from
            assert [t.token_id for t in trace.next_tokens] == \
                [c.token_id for c in generation.steps[written].choice.candidates]
        else:  # the model's guess after the last token: the forward's own scores
            probabilities = np.exp(expected.next_logits - expected.next_logits.max())
            assert trace.next_tokens[0].token_id == int(np.argmax(expected.next_logits))
            assert abs(trace.next_tokens[0].probability - probabilities.max() / probabilities.sum()) <= TOLERANCE
        assert trace.ablated == ablate


def test_texts_so_far_make_no_projection_once_the_whole_texts_are_made(data, monkeypatch):
    from attention_explorer.engine.pretrained import generation_trace, recompute

    model = dataclasses.replace(open_pretrained(data / "tiny-llama"), generation=GenerationInfo())
    generation = generate(model, PROMPT, GenerationSettings(tokens=6), keep_reader=True)
    projections = SharedProjections(model, generation)
    made = []
    for module in (generation_trace, recompute):
        original = module.project
        monkeypatch.setattr(module, "project", lambda *args, original=original: made.append(1) or original(*args))
    first = trace_so_far(model, generation, 6, projections)
    assert len(made) == model.n_layers  # the whole text's, once a layer
    prompt = len(generation.prompt_ids)
    for written in (5, 2, 0):
        trace = trace_so_far(model, generation, written, projections)
        shown = trace.layer_trace(1).heads[0]  # a view of a layer reads them too
        assert shown.weights.shape == (trace.n, trace.n)
        counted = len(made)
        expected = LayerMaker(model.weights, forward(model.weights, generation.ids[:prompt + written]),
                              frozenset()).projections(1)
        del made[counted:]  # the forward's own projections are not the texts so far's
        for shown_here, own in ((shown.q_before_rope, expected.q_raw[0]), (shown.k_before_rope, expected.k_raw[0]),
                                (shown.k, expected.k[0]), (shown.q, expected.q[0])):
            assert np.abs(shown_here - own).max() <= TOLERANCE
    # and layer 2's q and k before RoPE, which the whole text's keep no longer: once for every text so far
    assert len(made) == model.n_layers + 1
    assert first.layer_weights(0)[:, :trace.n, :trace.n] == pytest.approx(trace.layer_weights(0), abs=1e-6)


@pytest.mark.parametrize("pixels", [4, 5])
def test_texts_so_far_take_the_whole_text_s_thumbnail_rows_where_both_pool_alike(data, monkeypatch, pixels):
    """Thumbnails of `pixels` a side, so the texts pool 2, 3 or 4 tokens to a pixel: a text so far pooled
    like its whole text takes every whole block of rows from it and makes only the rows after them."""
    from attention_explorer.engine.pretrained import thumbnails

    monkeypatch.setattr(thumbnails, "THUMB_PX", pixels)
    model = dataclasses.replace(open_pretrained(data / "tiny-llama"), generation=GenerationInfo())
    generation = generate(model, PROMPT, GenerationSettings(tokens=10), keep_reader=True)
    prompt, projections = len(generation.prompt_ids), SharedProjections(model, generation)
    taken, shared_rows = set(), set()
    for written in range(11):
        trace = trace_so_far(model, generation, written, projections)
        result = trace.forward_result
        taken.add(projections.summarised_rows(trace.n, np.zeros_like(result.thumbnails), np.zeros_like(result.sinks)))
        expected = forward(model.weights, generation.ids[:prompt + written], special=trace.special)
        assert trace.thumbnails.shape == expected.thumbnails.shape
        assert np.abs(trace.thumbnails - expected.thumbnails).max() <= TOLERANCE
        assert np.abs(result.sinks - expected.sinks).max() <= TOLERANCE
        shared = trace.thumbnail_rows_shared()  # what it says it shares with the whole text's is that, exactly
        if shared is not None:
            whole_thumbnails, rows = shared
            shared_rows.add(rows)
            assert whole_thumbnails is projections.whole_thumbnails()
            np.testing.assert_array_equal(trace.thumbnails[:, :, :rows],
                                          whole_thumbnails[:, :, :rows, :trace.thumbnails.shape[-1]])
    whole = projections.length
    assert 0 in taken and whole in taken  # pooled otherwise than the whole text; the whole text itself
    assert any(0 < rows < thumbnails.thumb_size(whole) for rows in shared_rows)  # some but not all shared
    assert any(0 < rows < whole and rows % thumbnails.thumb_step(whole) == 0 for rows in taken)  # rows made after


def test_texts_so_far_of_whole_blocks_read_the_whole_text_s_summary_in_place(data):
    """Up to THUMB_PX tokens (a pixel a token) every text so far's thumbnails and sink sums are read-only
    views into the whole text's: nothing copied, nothing to write into what every text so far shares;
    and they are what a forward over the text so far makes. Each cell's largest weight is its own
    corner's."""
    model = dataclasses.replace(open_pretrained(data / "tiny-llama"), generation=GenerationInfo())
    generation = generate(model, PROMPT, GenerationSettings(tokens=6), keep_reader=True)
    prompt, projections = len(generation.prompt_ids), SharedProjections(model, generation)
    whole = trace_so_far(model, generation, 6, projections)
    for written in (6, 3, 0):
        trace = trace_so_far(model, generation, written, projections)
        result = trace.forward_result
        for made, own in ((result.thumbnails, whole.forward_result.thumbnails),
                          (result.sinks, whole.forward_result.sinks)):
            assert np.shares_memory(made, own) and not made.flags.writeable
        expected = forward(model.weights, generation.ids[:prompt + written], special=trace.special)
        assert np.abs(trace.thumbnails - expected.thumbnails).max() <= TOLERANCE
        assert np.abs(result.sinks - expected.sinks).max() <= TOLERANCE
        tops = trace.thumbnail_tops()  # each cell's largest weight of its own corner, kept with the trace
        np.testing.assert_array_equal(tops, trace.thumbnails.max(axis=(2, 3)))
        assert trace.thumbnail_tops() is tops


def test_a_whole_text_too_large_to_share_leaves_each_text_so_far_its_own(data, monkeypatch):
    model = dataclasses.replace(open_pretrained(data / "tiny-llama"), generation=GenerationInfo())
    generation = generate(model, PROMPT, GenerationSettings(tokens=4), keep_reader=True)
    monkeypatch.setattr(SharedProjections, "MAX_BYTES", 1000)
    projections = SharedProjections(model, generation)
    assert projections(0, 5) is None and projections(1, 5) is None
    trace = trace_so_far(model, generation, 2, projections)
    expected = trace_so_far(model, generation, 2)
    assert np.array_equal(trace.thumbnails, expected.thumbnails)


def test_texts_so_far_of_a_short_generation_are_corners_of_the_rows_it_read(data, monkeypatch):
    """Up to THUMB_PX tokens in all (a pixel a token), the decoder keeps every row it reads, and each text
    so far's thumbnails are a read-only corner of them: no layer is projected again for them (40 ms of the
    writer's time at 64 SmolLM2 tokens, each time the window follows the newest text), and they and the
    sink sums are the forward's over the text so far, with a head off too."""
    from attention_explorer.engine.pretrained import recompute

    model = dataclasses.replace(open_pretrained(data / "tiny-mistral"), generation=GenerationInfo())  # a BOS, a window
    ablate = frozenset({(1, 0)})
    generation = generate(model, PROMPT, GenerationSettings(tokens=6, ablate=ablate), keep_reader=True)
    prompt, rows = len(generation.prompt_ids), generation.reader.rows_read
    assert rows.shape == (model.n_layers, model.n_heads, prompt + 6, prompt + 6)
    made, original = [], recompute.project
    monkeypatch.setattr(recompute, "project", lambda *args: made.append(1) or original(*args))
    for written in (6, 3, 0):
        trace = trace_so_far(model, generation, written)
        result = trace.forward_result
        assert not made
        assert np.shares_memory(result.thumbnails, rows) and not result.thumbnails.flags.writeable
        assert trace.special.any()  # a sink sum over a special token is made too
        expected = forward(model.weights, generation.ids[:prompt + written], ablate, special=trace.special)
        assert np.abs(trace.thumbnails - expected.thumbnails).max() <= TOLERANCE
        assert np.abs(result.sinks - expected.sinks).max() <= TOLERANCE


def test_a_text_so_far_made_alone_keeps_none_of_the_layers_its_thumbnails_were_made_from(data, monkeypatch):
    """While a generation past THUMB_PX tokens is written each text so far projects every layer for its
    thumbnails; kept, the last 48 MiB of them stayed with each of the last two texts written (six layers
    each at 1,000 SmolLM2 tokens), though the views then show one layer. (Thumbnails of 4 pixels here:
    the generation's decoder keeps no rows for them.)"""
    import gc
    import weakref

    from attention_explorer.engine.pretrained import recompute, thumbnails

    monkeypatch.setattr(thumbnails, "THUMB_PX", 4)
    model = dataclasses.replace(open_pretrained(data / "tiny-llama"), generation=GenerationInfo())
    generation = generate(model, PROMPT, GenerationSettings(tokens=4), keep_reader=True)
    assert generation.reader.rows_read is None
    made, original = [], recompute.project
    monkeypatch.setattr(recompute, "project", lambda *args: made.append(weakref.ref(p := original(*args))) or p)
    trace = trace_so_far(model, generation, 3)
    gc.collect()
    assert len(made) == model.n_layers and not any(ref() for ref in made)
    expected = forward(model.weights, generation.ids[:len(generation.prompt_ids) + 3], special=trace.special)
    assert np.abs(trace.thumbnails - expected.thumbnails).max() <= TOLERANCE
    assert trace.layer_trace(1).heads[0].weights.shape == (trace.n, trace.n)  # a layer shown is made again


def test_an_ended_generation_s_reader_keeps_its_layer_inputs_and_lets_its_keys_and_values_go(data):
    """Nothing is read after the last token, and the texts so far are made from the layer inputs alone:
    the keys and values went on being held (46 MB at 1,000 SmolLM2 tokens) as long as the generation."""
    model = open_pretrained(data / "tiny-llama")
    generation = generate(model, PROMPT, GenerationSettings(tokens=4), keep_reader=True)
    reader = generation.reader
    assert reader.cache.keys is None and reader.cache.values is None
    inputs = reader.layer_inputs(reader.length)
    assert len(inputs) == model.n_layers and inputs[0].shape[0] == reader.length
    written = written_so_far(generation)
    assert trace_so_far(model, generation, written).n == len(generation.prompt_ids) + written
    with pytest.raises(RuntimeError, match="stopped reading"):
        reader.step(generation.steps[-1].token_id)


def test_a_generation_still_writing_shares_nothing(data):
    model = open_pretrained(data / "tiny-llama")
    generation = generate(model, PROMPT, GenerationSettings(tokens=2), keep_reader=True)
    with pytest.raises(ValueError, match="ended"):
        SharedProjections(model, dataclasses.replace(generation, stopped=""))


def test_written_tokens_are_marked_and_the_text_is_what_was_written(data):
    model = open_pretrained(data / "tiny-gpt2")
    model = dataclasses.replace(model, generation=GenerationInfo())
    generation = generate(model, PROMPT, GenerationSettings(tokens=6), keep_reader=True)
    trace = trace_so_far(model, generation, 6)
    prompt = len(generation.prompt_ids)
    assert not any(WRITTEN_MARK in label for label in trace.tokens[:prompt])
    for label in trace.tokens[prompt:]:
        assert label.removeprefix(CONTINUATION).startswith(WRITTEN_MARK)
    assert trace.text == generation.text + generation.written
    # the words are runs of neighbouring tokens that cover them all, the prompt's as encode() makes them
    assert [i for word in trace.words for i in word] == list(range(trace.n))
    assert trace.words[:len(model.tokenizer.encode(PROMPT).words)] == model.tokenizer.encode(PROMPT).words


@pytest.mark.parametrize("name", DECODERS)
def test_a_text_so_far_shared_is_encoded_as_its_own_tokens_encode(data, name):
    """A text so far takes its tokens, labels and words from the whole text's (first_tokens): the same as
    extending the prompt by its own written tokens, word cut in the middle or not."""
    model = dataclasses.replace(open_pretrained(data / name), generation=GenerationInfo())
    generation = generate(model, "The cat sat on the mat, un-believably", GenerationSettings(tokens=8),
                          keep_reader=True)
    projections = SharedProjections(model, generation)
    for written in range(9):
        ids = [step.token_id for step in generation.steps[:written]]
        own = model.tokenizer.extended(generation.encoded, ids)
        taken = first_tokens(projections.encoded, len(generation.prompt_ids) + written)
        assert np.array_equal(taken.ids, own.ids) and np.array_equal(taken.special, own.special)
        assert (taken.pieces, taken.labels, taken.words, taken.cut) == (own.pieces, own.labels, own.words, own.cut)
        shared, alone = trace_so_far(model, generation, written, projections), trace_so_far(model, generation, written)
        assert (shared.tokens, shared.words) == (alone.tokens, alone.words)


def test_the_cli_keeps_no_reader(data):
    model = open_pretrained(data / "tiny-llama")
    generation = generate(model, PROMPT, GenerationSettings(tokens=3))
    assert generation.reader is None and generation.after_logits is None and written_so_far(generation) is None
    with pytest.raises(ValueError):
        trace_so_far(model, generation, 1)


@pytest.mark.parametrize("name", DECODERS)
def test_a_reader_keeps_no_rows_and_makes_the_same_ones_again(data, name):
    model = dataclasses.replace(open_pretrained(data / name), generation=GenerationInfo())
    kept = generate(model, PROMPT, GenerationSettings(tokens=7))
    reader = generate(model, PROMPT, GenerationSettings(tokens=7), keep_reader=True)
    assert all(step.attention is None for step in reader.steps)
    assert [s.token_id for s in kept.steps] == [s.token_id for s in reader.steps]
    layers, heads = [1, 0], [model.n_heads - 1, 0]
    for made, step in zip(step_rows(model, reader, layers, heads), kept.steps, strict=True):
        assert made.shape == (2, 2, step.attention.shape[-1])
        assert np.abs(made - step.attention[layers][:, heads]).max() <= TOLERANCE


# the scaled cases whose frequencies follow the text's length, and how a text so far was read: its prompt
# at once and then token by token, or (Phi-3, which reads its whole text again past the original
# context) as if at once
BY_LENGTH = {"dynamic (Llama)": "as read", "longrope (Llama)": "as read", "longrope (Phi-3)": "at once"}


@pytest.mark.parametrize("shared", [False, True], ids=["own projections", "whole text's shared"])
@pytest.mark.parametrize("case", BY_LENGTH)
def test_a_scaled_rope_s_text_so_far_is_the_forward_over_it_as_the_generation_read_it(
        scaled_rope, monkeypatch, case, shared):
    """Texts so far of 10, 13, 16, 17 and 22 tokens, the original context 16: each the forward over its
    tokens, the prompt's 10 read at once and the others one at a time (or, in Phi-3, all at once: a
    text of 16 from the cache of the first reading, one of 17 on from the second)."""
    monkeypatch.setattr(decode_module, "FIRST_ROOM", 3)
    model = dataclasses.replace(open_pretrained(scaled_rope(case)), generation=GenerationInfo())
    generation = generate(model, PROMPT, GenerationSettings(tokens=12), keep_reader=True)
    prompt = len(generation.prompt_ids)
    assert prompt == 10 and generation.reader.reread_at == (17 if case == "longrope (Phi-3)" else 0)
    projections = SharedProjections(model, generation) if shared else None
    for written in (0, 3, 6, 7, 12):
        trace = trace_so_far(model, generation, written, projections)
        ids = generation.ids[:prompt + written]
        expected = forward(model.weights, ids, special=trace.special,
                           at_once=prompt if BY_LENGTH[case] == "as read" else None)
        maker = LayerMaker(model.weights, expected, frozenset())
        assert np.abs(trace.thumbnails - expected.thumbnails).max() <= TOLERANCE
        for layer in range(model.n_layers):
            assert np.abs(trace.layer_weights(layer) - maker.layer_weights(layer)).max() <= TOLERANCE


@pytest.mark.parametrize("case", BY_LENGTH)
def test_a_scaled_rope_s_reader_makes_the_rows_it_chose_by_again(scaled_rope, case):
    """The rows each token was chosen by, made again from the texts so far, are those the generation
    made as it wrote, before and after the text outgrew the original context (Phi-3: from the first
    reading and from the second)."""
    model = dataclasses.replace(open_pretrained(scaled_rope(case)), generation=GenerationInfo())
    kept = generate(model, PROMPT, GenerationSettings(tokens=12))
    reader = generate(model, PROMPT, GenerationSettings(tokens=12), keep_reader=True)
    layers, heads = list(range(model.n_layers)), list(range(model.n_heads))
    for made, step in zip(step_rows(model, reader, layers, heads), kept.steps, strict=True):
        assert np.abs(made - step.attention).max() <= TOLERANCE
