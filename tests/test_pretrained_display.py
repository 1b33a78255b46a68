"""What the main views and the model view show of a real model under each reading, against the engine's
own functions (hide_tokens, merge_words, words_after_hiding, attention_rollout) on the tiny checkpoints."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attention_explorer.engine.pretrained import (  # noqa: E402
    attention_rollout,
    hide_tokens,
    merge_words,
    open_pretrained,
    words_after_hiding,
)
from attention_explorer.pretrained_cells import cell_weight, model_cells  # noqa: E402
from attention_explorer.pretrained_display import RealView, shown_trace  # noqa: E402

DATA = Path(__file__).parent / "engine" / "pretrained" / "data"


@pytest.fixture(scope="module")
def bert_trace():
    return open_pretrained(DATA / "tiny-bert").run("the children jumped over mats and reads sleeper")


@pytest.fixture(scope="module")
def llama_trace():
    return open_pretrained(DATA / "tiny-llama.gguf").run("the cat sat on the mat")


def test_hiding_then_merging_is_the_engine_functions_one_after_the_other(bert_trace):
    pt = bert_trace
    assert any(len(word) > 1 for word in pt.words), "the sentence needs a word of several pieces"
    view = RealView(merge_words=True, hide_specials=True)
    hidden = list(np.flatnonzero(pt.special))
    kept = hide_tokens(pt.head_weights(1, 2), hidden)
    expected = merge_words(kept.weights, words_after_hiding(pt.words, kept.kept))
    trace, note = shown_trace(pt, 1, view)
    np.testing.assert_allclose(trace.heads[2].weights, expected, atol=1e-12)
    cells = model_cells(pt, view)
    np.testing.assert_allclose(cells.thumbnails[1, 2], expected, atol=1e-6)  # one pixel a word: n ≤ 128
    assert cells.read and cells.note == ""
    assert cell_weight(pt, view, cells, 1, 2, 2, 3) == float(trace.heads[2].weights[2, 3])
    labels = cells.labels
    assert labels == trace.labels and "[CLS]" not in labels
    assert "hidden: [CLS], [SEP]" in note and "sum over its pieces" in note
    # every array of the shown trace has one row a word
    n = len(labels)
    assert trace.x.shape[0] == n and trace.heads[2].q.shape[0] == n and trace.heads[2].scores.shape == (n, n)


def test_a_reading_s_queries_keys_and_values_are_made_when_read_as_the_pieces_averaged(bert_trace):
    """The views never read a reading's rows of q, k and v (the steps show the layer's own): they are
    made when first read, each row the mean of the kept pieces' rows of the word."""
    from attention_explorer.engine.lazy_trace import is_made
    pt = bert_trace
    source = pt.layer_trace(1)
    trace, _note = shown_trace(pt, 1, RealView(merge_words=True, hide_specials=True))
    head = trace.heads[2]
    assert not any(is_made(head, name) for name in ("q", "k", "v"))
    kept = [i for i in range(pt.n) if not pt.special[i]]
    words = words_after_hiding(pt.words, np.array(kept))
    for name in ("q", "k", "v"):
        rows = getattr(source.heads[2], name)[kept]
        expected = np.stack([rows[list(word)].mean(axis=0) for word in words])
        np.testing.assert_allclose(getattr(head, name), expected, rtol=1e-6, atol=1e-7)
        assert is_made(head, name)
    assert head.q_before_rope is None  # BERT has no rotation: nothing to average


def test_rollout_is_the_same_matrix_for_every_head_of_the_layer(bert_trace):
    trace, note = shown_trace(bert_trace, 1, RealView(rollout=True))
    expected = attention_rollout([bert_trace.layer_weights(layer) for layer in range(2)])[1]
    for head in trace.heads:
        np.testing.assert_allclose(head.weights, expected, atol=1e-12)
    assert "Abnar & Zuidema" in note


def test_a_decoder_merged_keeps_its_causal_mask_by_words(llama_trace):
    trace, _ = shown_trace(llama_trace, 0, RealView(merge_words=True, hide_first=True))
    n = trace.n
    assert trace.mask is not None and trace.mask.shape == (n, n)
    assert trace.mask[np.triu_indices(n, 1)].all() and not trace.mask[np.tril_indices(n)].any()
    np.testing.assert_allclose(trace.heads[0].weights.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("view", [RealView(hide_first=True), RealView(merge_words=True),
                                  RealView(merge_words=True, hide_first=True)], ids=["hidden", "words", "both"])
def test_a_reading_of_a_sliding_window_layer_keeps_its_window_in_the_mask(view):
    """Mistral's window is 4 tokens: a reading's mask hides the keys too far back as the layer's does
    (it used to be the causal mask alone, so those cells were drawn as if looked at)."""
    pt = open_pretrained(DATA / "tiny-mistral").run("the cat sat on the mat because it was tired and cold")
    layer = 0
    assert pt.model.arch.window(layer) == 4 and pt.n > 8
    trace, _ = shown_trace(pt, layer, view)
    own = pt.layer_mask(layer)
    kept = np.setdiff1d(np.arange(pt.n), [0] if view.hide_first else [])
    mask = own[np.ix_(kept, kept)]
    if view.merge_words:
        words = words_after_hiding(pt.words, kept) if view.hide_first else pt.words
        starts = np.array([word[0] for word in words])  # counted among the kept tokens
        mask = np.logical_and.reduceat(np.logical_and.reduceat(mask, starts, axis=1), starts, axis=0)
    np.testing.assert_array_equal(trace.mask, mask)
    assert trace.mask[np.tril_indices(trace.n, -5)].any()  # some keys are too far back
    weights = trace.heads[0].weights
    assert (weights[trace.mask] == 0).all()  # nothing drawn where the mask says nobody looks
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)


def test_with_nothing_on_the_layer_is_the_forward_pass_s_own(bert_trace):
    trace, note = shown_trace(bert_trace, 0, RealView())
    np.testing.assert_array_equal(trace.heads[1].weights, bert_trace.head_weights(0, 1))
    cells = model_cells(bert_trace, RealView())
    assert cells.thumbnails is bert_trace.thumbnails and note == "" and cells.labels == list(bert_trace.labels)
    np.testing.assert_array_equal(cells.thumbnails[0, 1], bert_trace.head_weights(0, 1))  # the forward's own
    assert cell_weight(bert_trace, RealView(), cells, 0, 1, 3, 2) == bert_trace.head_weights(0, 1)[3, 2]


@pytest.mark.parametrize("view", [RealView(hide_first=True), RealView(hide_specials=True, merge_words=True)],
                         ids=["first hidden", "specials hidden, words"])
def test_a_rotary_model_turns_each_shown_token_by_its_own_position(llama_trace, view):
    """The RoPE step's cos θ and sin θ have one row a shown token, as its Q and K have: a row too many
    made its step table ask for a row label past the end, and the app died of it (a native crash)."""
    trace, _ = shown_trace(llama_trace, 0, view)
    n = len(trace.labels)
    assert trace.rope_cos.shape[0] == trace.rope_sin.shape[0] == trace.heads[0].q.shape[0] == n
    if view.hide_first and not view.merge_words:
        whole = llama_trace.layer_trace(0)
        np.testing.assert_array_equal(trace.rope_cos, whole.rope_cos[1:])
        np.testing.assert_array_equal(trace.rope_sin, whole.rope_sin[1:])


@pytest.mark.parametrize("view", [RealView(), RealView(merge_words=True, hide_first=True, rollout=True)],
                         ids=["own", "every reading"])
def test_a_trace_and_its_readings_are_freed_without_the_cycle_collector(view):
    """A closed model's weights (SmolLM2: 550 MB) go as soon as nothing holds its trace: no maker of
    a lazy matrix may hold the trace that keeps it, or the memory waits for Python's collector."""
    import gc
    import weakref

    model = open_pretrained(DATA / "tiny-gpt2")
    enabled = gc.isenabled()
    gc.disable()
    try:
        ptrace = model.run("the cat sat on the mat")
        trace, _note = shown_trace(ptrace, 1, view)
        for head in trace.heads:
            head.weights, head.masked, head.output  # noqa: B018 - made, as the views make them
        trace.mask, trace.concat  # noqa: B018
        gone = weakref.ref(ptrace)
        del ptrace, trace, head
        assert gone() is None
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("view", [RealView(merge_words=True), RealView(hide_specials=True, hide_first=True)],
                         ids=["words", "hidden"])
def test_a_decoder_s_reading_held_by_a_view_holds_none_of_the_forward_it_was_read_from(view):
    """A view holds the trace it draws until it hears of the next one: a reading of a decoder's layer held
    the whole trace through its causal masks, every layer's input with it (135 MiB at 2,048 tokens of
    SmolLM2) beside the new forward's. Its masks are still the trace's own, one array per length."""
    import gc
    import weakref

    ptrace = open_pretrained(DATA / "tiny-llama.gguf").run("the cat sat on the mat")
    trace, _note = shown_trace(ptrace, 1, view)
    weights, mask = trace.heads[1].weights.copy(), trace.mask
    assert ptrace.causal_masks()(len(mask)) is ptrace.causal_mask(len(mask))
    forward = weakref.ref(ptrace.forward_result)
    del ptrace
    gc.collect()
    assert forward() is None
    np.testing.assert_array_equal(trace.heads[1].weights, weights)


def test_each_stage_of_a_reading_keeps_the_weights_it_was_made_from(bert_trace):
    """Hidden specials then words: the hidden stage's weights are the layer's own over every token, the
    words' are those left after hiding (both once read the same variable, the last one, and writing
    out a hidden weight of the last pieces failed on a matrix two tokens short)."""
    shown, _ = shown_trace(bert_trace, 1, RealView(merge_words=True, hide_specials=True))
    hidden, words = shown.reading.stages
    n = bert_trace.n
    np.testing.assert_array_equal(hidden.before[0], bert_trace.head_weights(1, 0))
    assert words.before[0].shape == (n - 2, n - 2)
    last = len(shown.labels) - 1
    text = shown.reading.weight_arithmetic(0, last, last, shown.labels, float(shown.heads[0].weights[last, last]))
    assert text.startswith(("words:", "hidden:"))
    hide_only, _ = shown_trace(bert_trace, 1, RealView(hide_specials=True))
    row = hide_only.n - 1
    value = float(hide_only.heads[0].weights[row, row])
    text = hide_only.reading.weight_arithmetic(0, row, row, hide_only.labels, value)
    assert text.startswith("hidden:") and "of" in text


def test_words_on_a_text_of_one_token_a_word_keeps_the_tokens_own_cells_under_the_words_labels():
    """Words sums no weight where each word is one token: the model view's cells stay the forward's own
    (read again, every layer was summed one token a word and every picture compared with the same
    numbers), labelled as the other views label the words."""
    pt = open_pretrained(DATA / "tiny-llama.gguf").run("the cat the cat")
    assert all(len(word) == 1 for word in pt.words), "the sentence needs one token a word"
    view = RealView(merge_words=True)
    cells = model_cells(pt, view)
    trace, _ = shown_trace(pt, 1, view)
    assert cells.thumbnails is pt.thumbnails and cells.read and cells.note == ""
    assert cells.labels == trace.labels
    np.testing.assert_array_equal(cells.thumbnails[1, 0], trace.heads[0].weights)  # one pixel a word: n ≤ 128
    assert cell_weight(pt, view, cells, 1, 0, 3, 2) == float(trace.heads[0].weights[3, 2])
    hidden = model_cells(pt, RealView(merge_words=True, hide_first=True))  # a reading that changes weights
    assert hidden.thumbnails is not pt.thumbnails and hidden.thumbnails.shape[-1] == pt.n - 1
