"""The step timeline on real models: the RoPE step (Llama only), biases in the Q/K/V arithmetic, and
the key/value head a Llama query head shares — each written out from the layer's own trace."""

import math

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine import steps
from attention_explorer.engine.cell_arithmetic import fmt

pytest.importorskip("tokenizers")
from attention_explorer.engine.pretrained import open_pretrained  # noqa: E402

SENTENCE = "the cat sat on the mat"
LONGER = "The cats were playing in the park, 2017 robots reading"  # 29 tokens: past the scaled cases' original 16


@pytest.fixture(scope="module", params=["tiny-llama", "tiny-llama.gguf"])
def llama_layer(request):
    from .conftest import DATA

    return open_pretrained(DATA / request.param).run(SENTENCE).layer_trace(1)


@pytest.fixture(scope="module", params=["tiny-bert", "tiny-gpt2"])
def biased_layer(request):
    from .conftest import DATA

    return open_pretrained(DATA / request.param).run(SENTENCE).layer_trace(0)


def test_the_rotation_angles_are_position_times_frequency(llama_layer):
    # tiny Llama: d_head 8, RoPE base 100,000; dimension j turns with j + 4 at frequency base^(−2j/8)
    cos, sin = llama_layer.rope_cos, llama_layer.rope_sin
    assert cos.shape == (llama_layer.n, 8)
    assert np.allclose(cos[0], 1) and np.allclose(sin[0], 0)              # position 0 is not turned
    assert cos[1, 0] == pytest.approx(math.cos(1.0), abs=1e-6)            # θ = 1 × 1
    assert sin[1, 1] == pytest.approx(math.sin(100000 ** -0.25), abs=1e-6)  # θ = 1 × 0.0562
    assert sin[3, 5] == pytest.approx(math.sin(3 * 100000 ** -0.25), abs=1e-6)  # dims 1 and 5 share it


def test_the_rope_arithmetic_of_every_cell_is_the_trace_value(llama_layer):
    trace = llama_layer
    assert steps.skip_reason(trace, "rope") == ""
    for h, head in enumerate(trace.heads):
        for name in ("q", "k"):
            before, after = getattr(head, f"{name}_before_rope"), getattr(head, name)
            for row in range(trace.n):
                for col in range(head.d_k):
                    partner = (col + 4) % 8
                    sign = -1 if col < 4 else 1
                    cos, sin = trace.rope_cos[row, col], trace.rope_sin[row, col]
                    assert before[row, col] * cos + sign * before[row, partner] * sin == pytest.approx(
                        after[row, col], abs=1e-5)
                    cell = steps.cell_arithmetic(trace, "rope", h, row, col, name)
                    assert cell.text.endswith(f" = {fmt(after[row, col])}")
                    assert f"{name}_{trace.labels[row]}[{partner}]·sin θ" in cell.text
                    assert {u.table for u in cell.used} == {f"{name}_raw", "cos", "sin"}


@pytest.mark.parametrize("name, turned", [("tiny-gpt-neox", 4), ("tiny-phi3", 6)])
def test_a_head_turned_in_part_writes_its_cells_over_the_dims_turned(name, turned):
    """GPT-NeoX turns the first half of each 8-wide head (rotary_pct), Phi-3 its first 6 (0.75): dimension
    j turns with j + r/2 among those r, and the rest pass as they were."""
    from .conftest import DATA

    trace = open_pretrained(DATA / name).run(SENTENCE).layer_trace(1)
    half = turned // 2
    assert trace.rope_cos.shape == (trace.n, turned)
    assert f"over the first r = {turned} of the 8 dims" in steps.step_view(trace, "rope").formula
    for h, head in enumerate(trace.heads):
        for name in ("q", "k"):
            before, after = getattr(head, f"{name}_before_rope"), getattr(head, name)
            np.testing.assert_array_equal(after[:, turned:], before[:, turned:])
            for row in range(trace.n):
                for col in range(head.d_k):
                    cell = steps.cell_arithmetic(trace, "rope", h, row, col, name)
                    assert cell.text.endswith(f" = {fmt(after[row, col])}")
                    if col >= turned:
                        assert {u.table for u in cell.used} == {f"{name}_raw"}
                        continue
                    partner = (col + half) % turned
                    sign = -1 if col < half else 1
                    cos, sin = trace.rope_cos[row, col], trace.rope_sin[row, col]
                    assert before[row, col] * cos + sign * before[row, partner] * sin == pytest.approx(
                        after[row, col], abs=1e-5)
                    assert f"{name}_{trace.labels[row]}[{partner}]·sin θ" in cell.text


def test_the_rope_cell_written_out_by_hand(llama_layer):
    trace, head = llama_layer, llama_layer.heads[0]
    q = head.q_before_rope
    cell = steps.cell_arithmetic(trace, "rope", 0, 1, 0, "q")
    a = trace.labels[1]
    c, s = math.cos(1.0), math.sin(1.0)
    minus = "−"
    expected = (f"q'_{a}[0] = q_{a}[0]·cos θ − q_{a}[4]·sin θ = {fmt(q[1, 0])}×{fmt(c)} {minus} "
                f"{'(' + fmt(q[1, 4]) + ')' if q[1, 4] < 0 else fmt(q[1, 4])}×{fmt(s)} = {fmt(head.q[1, 0])}")
    assert cell.text == expected


def test_the_q_and_k_steps_show_them_before_rotation_and_the_scores_after(llama_layer):
    trace, head = llama_layer, llama_layer.heads[2]
    view = steps.step_view(trace, "q", 2)
    assert np.array_equal(view.results[0].values, head.q_before_rope)
    rope = steps.step_view(trace, "rope", 2)
    assert [t.key for t in rope.inputs] == ["q_raw", "k_raw", "cos", "sin"]
    assert [t.key for t in rope.results] == ["q", "k"]
    assert np.array_equal(rope.results[0].values, head.q) and np.array_equal(rope.results[1].values, head.k)
    scores = steps.cell_arithmetic(trace, "scores", 2, 3, 1)
    assert np.dot(head.q[3], head.k[1]) == pytest.approx(head.scores[3, 1], abs=1e-5)
    assert scores.text.endswith(f" = {fmt(head.scores[3, 1])}")


def test_shared_key_value_heads_are_said_on_the_kv_step(llama_layer):
    # tiny Llama: 4 query heads share 2 key/value heads, query head h reads h // 2
    view = steps.step_view(llama_layer, "kv", 3)
    assert view.note == "query head 4 reads key/value head 2 of 2"
    assert view.results[0].title == "K (key/value head 2, shared)"
    assert steps.step_view(llama_layer, "kv", 0).note == "query head 1 reads key/value head 1 of 2"


def test_toy_models_show_the_rope_step_skipped():
    trace = engine.run(engine.load_builtin("cats-chase-mice"), "cats chase mice")
    reason = steps.skip_reason(trace, "rope")
    assert reason == "skipped: this model does not turn q and k by position; models with rotary positions do"
    view = steps.step_view(trace, "rope")
    assert view.results == () and view.skipped == reason
    assert np.array_equal(view.inputs[0].values, trace.heads[0].q)
    assert steps.step_view(trace, "kv").note == ""
    with pytest.raises(ValueError, match="skipped"):
        steps.cell_arithmetic(trace, "rope", 0, 0, 0)


def test_bert_and_gpt2_skip_rope_and_show_their_biases(biased_layer):
    trace, head = biased_layer, biased_layer.heads[1]
    assert steps.skip_reason(trace, "rope") == ("skipped: this model adds learned positions to the embedding "
                                                "instead of turning q and k")
    assert steps.step_view(trace, "q").formula == "q_w[j] = x_w · W_Q[:, j] + b_Q[j]"
    kv = steps.step_view(trace, "kv", 1)
    assert [t.key for t in kv.inputs] == ["x", "w_k", "b_k", "w_v", "b_v"]
    assert kv.ops == ("·", "+", ",", "+")  # X · W_K + b_K, W_V + b_V
    for name in ("q", "k", "v"):
        weights, bias, values = getattr(head, f"w_{name}"), getattr(head, f"b_{name}"), getattr(head, name)
        assert trace.x[2] @ weights[:, 3] + bias[3] == pytest.approx(values[2, 3], abs=1e-5)
        step = "q" if name == "q" else "kv"
        cell = steps.cell_arithmetic(trace, step, 1, 2, 3, None if name == "q" else name)
        bias_text = fmt(bias[3])
        assert cell.text.endswith(f" + {'(' + bias_text + ')' if bias[3] < 0 else bias_text} = {fmt(values[2, 3])}")
    w_o = steps.cell_arithmetic(trace, "w_o", 0, 1, 2)
    assert "b_O" in steps.step_view(trace, "w_o").formula and w_o.text.endswith(f" = {fmt(trace.output[1, 2])}")


def test_a_switched_off_heads_output_says_so():
    from .conftest import DATA

    trace = open_pretrained(DATA / "tiny-bert").run(SENTENCE, ablate=frozenset({(1, 2)})).layer_trace(1)
    cell = steps.cell_arithmetic(trace, "output", 2, 1, 0)
    assert cell.text == f"head 3 is switched off: out_{trace.labels[1]}[0] = 0"
    assert steps.cell_arithmetic(trace, "output", 1, 1, 0).text.startswith(f"out_{trace.labels[1]}[0] = ")


@pytest.mark.parametrize("name", ["tiny-qwen3", "tiny-olmo2"])
def test_q_and_k_after_their_norm_are_written_as_the_sum_then_the_norm(data, name):
    """Qwen3 and OLMo 2 normalise q and k before turning them: the Q step's cell says the sum x·W_Q,
    its value, then the norm, whose result is the cell's own number."""
    layer = open_pretrained(data / name).run(SENTENCE).layer_trace(0)
    head = layer.heads[1]
    cell = steps.cell_arithmetic(layer, "q", 1, 2, 3)
    raw = float(np.dot(layer.x[2].astype(np.float64), head.w_q[:, 3]) + (0 if head.b_q is None else head.b_q[3]))
    assert "then RMS-normalised" in cell.what
    assert "= norm(" in cell.text and f"= {fmt(raw)})" in cell.text
    assert cell.text.endswith(f"= {fmt(steps.projected(head, 'q')[2, 3])}")
    assert "then RMS-normalised" in steps.STEPS[steps.step_index("q")].formula_for(layer)


def test_gemma2_scaled_scores_are_written_with_their_root_and_cap(data):
    layer = open_pretrained(data / "tiny-gemma2").run(SENTENCE).layer_trace(0)
    head = layer.heads[0]
    cell = steps.cell_arithmetic(layer, "scaled", 0, 3, 1)
    assert cell.text == (f"5 · tanh({fmt(head.scores[3, 1])} ÷ √12 ÷ 5) = {fmt(head.scaled[3, 1])}")
    assert math.isclose(5 * math.tanh(head.scores[3, 1] / math.sqrt(12) / 5), head.scaled[3, 1], rel_tol=1e-5)
    assert steps.STEPS[steps.step_index("scaled")].formula_for(layer) == \
        "scaled(a → b) = 5 · tanh(score(a → b) ÷ √12 ÷ 5)"


def test_gemma3_rope_step_divides_the_positions_of_its_scaled_global_layer(data):
    """Gemma 3's global layer reads positions ÷ 4 (a linear rope_scaling); its sliding layers do not."""
    trace = open_pretrained(data / "tiny-gemma3").run(SENTENCE)
    rope = steps.STEPS[steps.step_index("rope")]
    assert "θ = (position ÷ 4) × base^(−2j/d)" in rope.formula_for(trace.layer_trace(1))
    assert "θ = position × base^(−2j/d)" in rope.formula_for(trace.layer_trace(0))
    layer = trace.layer_trace(1)
    cell = steps.cell_arithmetic(layer, "rope", 0, 3, 1)
    assert cell.text.endswith(f"= {fmt(layer.heads[0].q[3, 1])}")


def test_an_encoder_s_window_is_written_as_one_reaching_both_ways(data):
    layer = open_pretrained(data / "tiny-modernbert").run(SENTENCE).layer_trace(1)
    masked = steps.STEPS[steps.step_index("masked")]
    assert masked.formula_for(layer).endswith("when b is outside a's sliding window (either side)")
    assert steps.cell_arithmetic(layer, "masked", 0, 0, 4).what == \
        "[CLS] → on: on is too far ahead for the layer's sliding window, so it is hidden"
    assert steps.cell_arithmetic(layer, "masked", 0, 4, 0).what == \
        "on → [CLS]: [CLS] is too far back for the layer's sliding window, so it is hidden"


@pytest.mark.parametrize(("case", "text", "says"), [
    ("linear (Llama)", SENTENCE, "θ = (position ÷ 4) × base^(−2j/d); the same for k"),
    ("dynamic (Llama)", SENTENCE, "f_j = base^(−2j/d) as it is (dynamic NTK scaling: the base as it is for a text "
                                  "of at most 16 tokens, base·(2·m ÷ 16 − 1)^(8/6) for one of m tokens past them)"),
    ("dynamic (Llama)", LONGER, "f_j = base^(−2j/d) with the base 362,109 of this text's 29 tokens"),
    ("yarn (Qwen2.5, rope_scaling)", SENTENCE,
     "f_j = base^(−2j/d) kept for j up to 0, ÷ 4 from j = 1 on, blended between (YaRN over an original 16 tokens); "
     "cos θ and sin θ are × 1.139 (YaRN's attention factor), so every score q·k is × 1.296"),
    ("longrope (Phi-3)", LONGER, "f_j = base^(−2j/r) ÷ long_factor_j, this text of 29 tokens being past the "
                                 "original"),
])
def test_the_rope_step_says_how_a_scaling_made_its_frequencies(scaled_rope, case, text, says):
    """The RoPE step's formula names the scaling and its numbers on this text; its tables are the ones the
    forward turned by (an attention factor m in them: cos² + sin² = m²), and every cell's sum is the
    turned number."""
    model = open_pretrained(scaled_rope(case))
    trace = model.run(text).layer_trace(1)
    assert says in steps.step_view(trace, "rope").formula
    m = 1.0 if model.arch.rope_scaling is None else model.arch.rope_scaling.attention
    np.testing.assert_allclose(trace.rope_cos ** 2 + trace.rope_sin ** 2, m * m, rtol=1e-5)
    for row in range(trace.n):
        cell = steps.cell_arithmetic(trace, "rope", 0, row, 1, "k")
        assert cell.text.endswith(f" = {fmt(trace.heads[0].k[row, 1])}")
