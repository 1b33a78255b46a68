"""The arithmetic a learner reads for one cell, checked against cats-chase-mice worked with a pencil.

q_cats = [0, 2], k_chase = [0, 1]: score cats → chase = 0×0 + 2×1 = 2; scaled 2 ÷ √2 = 1.41;
weight e^1.41 ÷ (e^0 + e^1.41 + e^0) = 0.67; v column 0 = [1, 0, 1], weights of cats
[0.16, 0.67, 0.16]: out_cats[0] = 0.16×1 + 0.67×0 + 0.16×1 = 0.33.
"""

import math

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine.cell_arithmetic import Used, fmt
from attention_explorer.engine.steps import STEP_KEYS, STEPS, cell_arithmetic, heatmap_matrix, skip_reason, step_view


@pytest.fixture
def trace():
    return engine.run(engine.load_builtin("cats-chase-mice"), "cats chase mice")


@pytest.mark.parametrize(("step", "row", "col", "text", "used"), [
    ("scores", 0, 1, "q_cats · k_chase = 0×0 + 2×1 = 2", (Used("q", 0, None), Used("kt", None, 1))),
    ("scaled", 0, 1, "2 ÷ √2 = 1.41", (Used("scores", 0, 1),)),
    ("softmax", 0, 1, "e^1.41 ÷ (e^0 + e^1.41 + e^0) = 0.67", (Used("masked", 0, None),)),
    ("output", 0, 0, "out_cats[0] = 0.16×1 + 0.67×0 + 0.16×1 = 0.33", (Used("weights", 0, None), Used("v", None, 0))),
    ("q", 0, 1, "q_cats[1] = 1×2 + 0×0 + 0×0 = 2", (Used("x", 0, None), Used("w_q", None, 1))),
    ("embed", 2, 2, "x_mice[small] = e_mice[small] = 1", (Used("embedding", 2, 2),)),
])
def test_hand_worked_cells(trace, step, row, col, text, used):
    found = cell_arithmetic(trace, step, 0, row, col)
    assert found.text == text
    assert found.used == used


def test_keys_and_values_are_told_apart_at_their_shared_step(trace):
    assert cell_arithmetic(trace, "kv", 0, 2, 1, "k").text == "k_mice[1] = 1×0 + 0×1 + 1×0 = 0"
    found = cell_arithmetic(trace, "kv", 0, 2, 1, "v")
    assert found.text == "v_mice[1] = 1×0 + 0×1 + 1×1 = 1"
    assert found.used == (Used("x", 2, None), Used("w_v", None, 1))


def test_the_mask_adds_minus_infinity_after_the_diagonal_and_softmax_gives_it_zero():
    trace = engine.run(engine.load_builtin("cats-chase-mice"), "cats chase mice", engine.Options(causal=True))
    assert cell_arithmetic(trace, "masked", 0, 0, 1).text == "1.41 + (−∞) = −∞"
    assert "chase comes after cats" in cell_arithmetic(trace, "masked", 0, 0, 1).what
    assert cell_arithmetic(trace, "masked", 0, 1, 0).text == "1.41 + 0 = 1.41"
    assert cell_arithmetic(trace, "softmax", 0, 0, 1).text == "e^−∞ ÷ (e^0 + e^−∞ + e^−∞) = 0"


def test_several_heads_concatenate_and_mix_through_w_o():
    model = engine.load_builtin("cat-ate-fish")
    trace = engine.run(model, model.default_sentence, model.default_options.with_changes(heads=2))
    found = cell_arithmetic(trace, "concat", 1, 1, 3)
    assert found.text == f"concat_cat[3] = out_cat[1] of head 2 = {fmt(trace.heads[1].output[1, 1])}"
    assert found.used == (Used("out1", 1, 1),)
    w_o = cell_arithmetic(trace, "w_o", 0, 1, 0)
    assert w_o.text.startswith("y_cat[animal] = ") and w_o.text.endswith(f"= {fmt(trace.output[1, 0])}")


def test_numbers_have_two_decimals_at_most_and_no_trailing_zeros():
    assert [fmt(x) for x in (2.0, 0.5, 1.41421, 0.1636, -0.666, -0.001, 10.0, -math.inf)] == \
        ["2", "0.5", "1.41", "0.16", "−0.67", "0", "10", "−∞"]


def test_long_sums_are_shortened_but_keep_their_last_term():
    model = engine.load_builtin("cat-sat-on-mat")
    words = "the cat sat on the mat the dog sat on the box"
    trace = engine.run(model, words, model.default_options.with_changes(heads=1))
    text = cell_arithmetic(trace, "softmax", 0, 0, 0).text
    # the numerator, then 8 places of the 12-term sum: 6 terms, "…", the last term
    assert text.count("e^") == 1 + 7 and " + … + " in text
    assert text.endswith(f" + e^{fmt(trace.heads[0].masked[0, -1])}) = {fmt(trace.heads[0].weights[0, 0])}")


def test_a_skipped_step_has_no_cells(trace):
    with pytest.raises(ValueError, match="skipped"):
        cell_arithmetic(trace, "masked", 0, 0, 0)


def test_steps_that_are_off_stay_in_place_with_a_reason(trace):
    assert [s.key for s in STEPS] == list(STEP_KEYS) and len(STEPS) == 11
    reasons = {key: skip_reason(trace, key) for key in STEP_KEYS}
    assert reasons["masked"] == "skipped: no causal mask"
    assert reasons["concat"] == "skipped: one head, nothing to concatenate"
    assert reasons["w_o"].startswith("skipped: this model has no W_O")
    assert reasons["scaled"] == ""
    unscaled = engine.run(engine.load_builtin("cats-chase-mice"), "cats chase mice", engine.Options(scale=False))
    assert skip_reason(unscaled, "scaled") == "skipped: scaling is off"


def test_step_tables_are_the_traces_own_arrays(trace):
    head = trace.heads[0]
    view = step_view(trace, "scores")
    q, kt = view.inputs
    assert q.values is head.q and np.shares_memory(kt.values, head.k)
    assert kt.rows == ("0", "1") and kt.cols == ("cats", "chase", "mice")
    assert view.results[0].values is head.scores and view.results[0].rows == tuple(trace.labels)
    assert step_view(trace, "softmax").fill_by_row


def test_the_heatmap_shows_each_stage_of_the_scores_then_the_weights():
    assert [heatmap_matrix(k) for k in STEP_KEYS] == [None, None, None, None, "scores", "scaled", "masked",
                                                      "weights", "weights", "weights", "weights"]


def test_the_step_modules_load_no_qt():
    import subprocess
    import sys

    code = ("import sys; import attention_explorer.engine.steps, attention_explorer.engine.step_types, "
            "attention_explorer.engine.cell_arithmetic; "
            "print(','.join(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"the step modules imported Qt: {result.stdout}"
