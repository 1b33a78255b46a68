"""The steps are one registry: each entry carries everything about its step, and a new step is one
new entry that the lookups (tables, arithmetic, skipping, heatmap) pick up without another switch."""

import pytest

from attention_explorer import engine
from attention_explorer.engine import steps
from attention_explorer.engine.cell_arithmetic import CellArithmetic, Used, fmt
from attention_explorer.engine.step_types import Step, Tables


@pytest.fixture(scope="module")
def trace():
    return engine.run(engine.load_builtin("cats-chase-mice"), "cats chase mice")


def test_every_entry_is_complete(trace):
    for step in steps.STEPS:
        assert step.explanation.endswith(".") and step.title and step.short
        assert step.formula_for(trace)
        skippable = step.passes_on is not None
        assert skippable == (step.key in ("rope", "scaled", "masked", "concat", "w_o")), step.key
    assert [s.key for s in steps.STEPS if s.per_head] == ["q", "kv", "rope", "scores", "scaled", "masked", "softmax",
                                                          "output"]


def test_the_embedding_formula_follows_the_positions_option():
    model = engine.load_builtin("cats-chase-mice")
    on = engine.run(model, "cats chase", engine.Options(positional=True))
    off = engine.run(model, "cats chase")
    assert steps.step_view(on, "embed").formula == "x_w = e_w + pe_p, the encoding of the word's position p"
    assert steps.step_view(off, "embed").formula == "x_w = e_w (positions are off)"


def test_a_new_step_is_one_entry(trace, monkeypatch):
    def tables(c):
        return Tables((c.table("q", "Q", c.head.q),), (c.table("twice", "2Q", 2 * c.head.q),), arrow="× 2 =")

    def arithmetic(c, row, col, result):
        return CellArithmetic("twice", f"2 × {fmt(c.head.q[row, col])} = {fmt(2 * c.head.q[row, col])}",
                              (Used("q", row, col),))

    doubled = Step("twice", "2Q", "Twice: 2Q", "Only a test.", "t = 2q", tables, arithmetic, per_head=True,
                   heatmap="scores")
    monkeypatch.setattr(steps, "STEPS", (*steps.STEPS, doubled))
    monkeypatch.setattr(steps, "STEP_KEYS", (*steps.STEP_KEYS, "twice"))
    view = steps.step_view(trace, "twice")
    assert view.results[0].values.tolist() == [[0, 4], [4, 0], [0, 4]] and view.formula == "t = 2q"
    assert steps.cell_arithmetic(trace, "twice", 0, 0, 1).text == "2 × 2 = 4"
    assert steps.skip_reason(trace, "twice") == "" and steps.heatmap_matrix("twice") == "scores"


def test_an_unknown_step_is_named():
    with pytest.raises(ValueError, match="unknown step 'alibi'"):
        steps.cell_arithmetic(engine.run(engine.load_builtin("cats-chase-mice"), "cats"), "alibi", 0, 0, 0)


def test_a_step_table_has_a_label_for_every_row_and_column():
    import numpy as np
    import pytest

    from attention_explorer.engine.step_types import StepTable

    with pytest.raises(ValueError, match="3 row and 2 column labels"):
        StepTable("q", "Q", np.zeros((4, 2)), ("a", "b", "c"), ("1", "2"))
