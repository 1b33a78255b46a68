"""What a forward over a long text keeps lives in pages of its own, given back as soon as it is freed
(a short text's stays on the heap), and a layer's trace holds that layer, not the forward's every layer
input."""

import gc
import mmap
import os
import weakref

import numpy as np
import pytest

from attention_explorer.engine import memory
from attention_explorer.engine.pretrained import forward as forward_module
from attention_explorer.engine.pretrained import open_pretrained
from attention_explorer.engine.pretrained.forward import after_attention, feed_forward, norm

pytest.importorskip("tokenizers")


def _own_mapping(array: np.ndarray) -> bool:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return isinstance(array.base, memoryview) and isinstance(array.base.obj, mmap.mmap)


def test_a_large_array_gets_zeroed_pages_of_its_own_and_a_small_one_is_ordinary():
    large = memory.own_pages((memory.OWN_PAGES_BYTES // 4,))
    assert _own_mapping(large) and large.dtype == np.float32 and not large.any()
    large[:] = 1  # writable
    small = memory.own_pages((3, 4))
    assert not _own_mapping(small) and small.shape == (3, 4) and not small.any()


def test_a_forward_keeps_its_layer_inputs_and_thumbnails_in_pages_of_their_own_and_the_same_numbers(
        data, monkeypatch):
    """Made between the forward's temporaries on glibc's heap, they left holes it could not give back:
    a 2,048-token SmolLM2 window kept some 250 MiB more than it used after each forward."""
    model = open_pretrained(data / "tiny-llama.gguf")
    before = model.run("the cat sat on the mat")
    monkeypatch.setattr(memory, "OWN_PAGES_BYTES", 0)  # a tiny model's arrays stand for large ones
    monkeypatch.setattr(forward_module, "OWN_PAGES_FROM_TOKENS", 1)  # and its short text for a long one
    trace = model.run("the cat sat on the mat")
    kept = trace.forward_result
    assert all(_own_mapping(h) for h in kept.layer_inputs)
    assert _own_mapping(kept.thumbnails) and _own_mapping(kept.sinks)
    for mine, theirs in zip(kept.layer_inputs, before.forward_result.layer_inputs, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(kept.thumbnails, before.thumbnails)
    np.testing.assert_array_equal(kept.next_logits, before.forward_result.next_logits)
    resumed = model.run("the cat sat on the mat", {(0, 0)}, previous=trace).forward_result
    assert resumed.layer_inputs[0] is kept.layer_inputs[0]  # the input of the first layer switched is shared
    assert resumed.layer_inputs[1] is not kept.layer_inputs[1] and _own_mapping(resumed.layer_inputs[1])
    assert _own_mapping(resumed.thumbnails)


def test_a_layer_trace_holds_its_layer_not_the_forward_and_makes_the_same_numbers(data):
    """A view holds the layer trace it draws until it hears of the next one, and the views heard of it
    one after another while the new forward's were made: the old forward's every layer input (135 MiB
    at 2,048 tokens of SmolLM2) was held beside the new one's."""
    trace = open_pretrained(data / "tiny-llama.gguf").run("the cat sat on the mat")
    layer = trace.layer_trace(1)
    expected = trace.layer_trace(1).heads[2].weights.copy()
    forward = weakref.ref(trace.forward_result)
    del trace
    gc.collect()
    assert forward() is None
    head = layer.heads[2]
    np.testing.assert_array_equal(head.weights, expected)
    assert head.scores.shape == head.masked.shape == expected.shape
    assert layer.concat.shape == (layer.n, layer.heads[0].d_k * len(layer.heads))


@pytest.mark.parametrize("name", ["tiny-llama.gguf", "tiny-olmo2.gguf", "tiny-gpt-neox.gguf", "tiny-bert"])
def test_a_layer_s_end_written_into_the_attention_s_output_it_owns_is_the_same_to_the_bit(data, name):
    """The forward hands after_attention its attention output to spend: a pre-norm layer's residual sum
    is written into it, one n × d_model array fewer through the feed-forward. An output a caller keeps
    (the census reads a layer trace's) is left as it was."""
    model = open_pretrained(data / name)
    arch, layer = model.arch, model.weights.layers[0]
    rng = np.random.default_rng(0)
    h, attended = (rng.standard_normal((7, arch.d_model), dtype=np.float32) for _ in range(2))
    kept = attended.copy()
    expected = after_attention(arch, layer, h, attended)
    np.testing.assert_array_equal(attended, kept)
    np.testing.assert_array_equal(after_attention(arch, layer, h, attended.copy(), owned=True), expected)
    if layer.mlp_norm is not None:
        normed = norm(arch, h, layer.mlp_norm, layer.mlp_norm_bias)
        np.testing.assert_array_equal(feed_forward(arch, layer, h, (layer.mlp_norm, layer.mlp_norm_bias)),
                                      feed_forward(arch, layer, normed))


def test_a_tokenizer_looks_a_piece_up_without_keeping_its_vocabulary_as_a_dict(data):
    """SmolLM2's 49,152 pieces as a dict were 7 MB held for the rare look-up of a stop token by name."""
    tokenizer = open_pretrained(data / "tiny-llama.gguf").tokenizer
    vocabulary = tokenizer.tokenizer.get_vocab(with_added_tokens=True)
    assert all(tokenizer.token_id(piece) == token_id for piece, token_id in vocabulary.items())
    assert tokenizer.token_id("no such piece at all") is None
    kept = [value for value in vars(tokenizer).values() if isinstance(value, dict)]
    assert all(len(value) < len(vocabulary) for value in kept)


def test_a_short_text_s_forward_keeps_its_arrays_on_the_heap(data, monkeypatch):
    """Pages of their own are fresh pages at every forward: MiniLM's 4.7 MB of thumbnails cost a
    128-token forward 3 ms of 28 in page faults, for holes that only matter for long texts."""
    monkeypatch.setattr(memory, "OWN_PAGES_BYTES", 0)
    kept = open_pretrained(data / "tiny-llama.gguf").run("the cat sat on the mat").forward_result
    assert not any(_own_mapping(h) for h in kept.layer_inputs)
    assert not _own_mapping(kept.thumbnails) and not _own_mapping(kept.sinks)


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-bert", "tiny-gpt-neox", "tiny-gemma2"],
                         ids=["gated, pre-norm", "post-norm", "parallel", "post-norms of their own"])
def test_a_long_text_goes_through_each_feed_forward_a_few_rows_at_a_time(data, monkeypatch, name):
    """A feed-forward's hidden layer of every token at once (with the gate and the normalised copy
    beside it) was a forward's largest temporary: 47 MB at 2,048 tokens of SmolLM2. Row by row work
    gives each row's numbers as the whole text's product does (to the rounding of products of
    another shape)."""
    model = open_pretrained(data / name)
    text = "the cat sat on the mat because it was tired and the dog was not"
    whole = model.run(text).forward_result
    rows = []
    original = forward_module._feed_forward_rows
    monkeypatch.setattr(forward_module, "_feed_forward_rows", lambda arch, layer, x, *rest: rows.append(len(x))
                        or original(arch, layer, x, *rest))
    monkeypatch.setattr(forward_module, "FFN_ROWS", 4)
    blocked = model.run(text).forward_result
    n = len(whole.layer_inputs[0])
    assert rows == ([4] * (n // 4) + ([n % 4] if n % 4 else [])) * model.n_layers
    for kept, expected in zip(blocked.layer_inputs, whole.layer_inputs, strict=True):
        np.testing.assert_allclose(kept, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(blocked.thumbnails, whole.thumbnails, atol=1e-5)


def _resident_kib(path) -> int:
    """This process's resident memory in the mappings of `path` (/proc/self/smaps), KiB."""
    resident, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:  # a mapping's first line
                inside = len(fields) >= 6 and fields[5] == str(path)
            elif inside and fields[0] == "Rss:":
                resident += int(fields[1])
    return resident


@pytest.mark.skipif(not hasattr(mmap, "MADV_DONTNEED") or not os.path.exists("/proc/self/smaps"),
                    reason="needs madvise and /proc/self/smaps (Linux)")
def test_a_read_tensor_s_pages_go_with_those_the_system_mapped_around_them(tmp_path):
    # reading a page of a mapped file maps its neighbours too (Linux maps 64 KiB around it, or the whole
    # large folio of the file's cache it lies in); letting only the pages wholly inside a tensor go left
    # those, 11 MiB of SmolLM2's window
    from attention_explorer.engine.pretrained.mapped import map_file, release

    path = tmp_path / "weights.bin"
    path.write_bytes(np.arange(1 << 18, dtype=np.float32).tobytes())  # 1 MiB
    with open(path, "rb") as handle:
        data = map_file(handle, path.name)
    start, nbytes = 100_000, 300_000  # a tensor neither beginning nor ending on a page
    values = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=start).copy()
    assert values.sum() > 0 and _resident_kib(path) >= nbytes // 1024
    release(data, start, nbytes)
    # (the pages wholly inside alone: 96 KiB stayed here; 64 KiB around them, the rest of a large folio,
    # 512 KiB in one run of the suite)
    assert _resident_kib(path) < 16
    assert np.array_equal(np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=start), values)  # read again
    data.close()


def test_a_forward_s_attention_reads_q_scaled_in_place_and_holds_no_q_or_k_before_rope(data, monkeypatch):
    """A scaled copy of q, and q and k before RoPE (which only a view of the layer reads), were held
    through each layer's attention: 10 MiB of a forward's largest moment at 2,048 SmolLM2 tokens. What
    a caller keeps (a generation's cache) or a layer kept for the views still has them."""
    from attention_explorer.engine.pretrained.forward import project

    model = open_pretrained(data / "tiny-llama.gguf")
    ids = np.array(model.tokenizer.encode("the cat sat on the mat and the dog").ids)
    arch, weights = model.arch, model.weights
    read = []
    attend = forward_module._attend
    monkeypatch.setattr(forward_module, "_attend", lambda arch, p, *args, **kwargs: (
        read.append(p), attend(arch, p, *args, **kwargs))[1])
    kept = []
    result = forward_module.forward(weights, ids, keep=lambda layer, p: kept.append(p))
    plain = forward_module.forward(weights, ids)
    assert all(p.q_raw is not None and p.scale != 1.0 for p in read[:arch.n_layers])  # kept: untouched
    assert [p.q_raw for p in kept] == [p.q_raw for p in read[:arch.n_layers]]
    for layer, p in enumerate(read[arch.n_layers:]):
        assert p.q_raw is None and p.k_raw is None and p.scale == 1.0
        made = project(arch, weights.layers[layer], forward_module.attention_input(arch, weights.layers[layer],
                       plain.layer_inputs[layer]), forward_module.rope_for(arch, len(ids))[layer])
        np.testing.assert_array_equal(p.q, made.q_scaled())
    np.testing.assert_array_equal(plain.thumbnails, result.thumbnails)
    np.testing.assert_array_equal(plain.next_logits, result.next_logits)
