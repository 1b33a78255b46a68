"""Single edits of a model: checked before they apply, exactly undoable, and never half done."""

import copy

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine import ModelError, model_edits
from attention_explorer.engine.model import VALUE_LIMIT


@pytest.fixture
def model():
    return engine.load_builtin("cats-chase-mice")


def snapshot(model):
    return copy.deepcopy(engine.model_to_dict(model))


def matrix_in(data, field):
    """A field's matrix as the file form holds it."""
    return list(data["vocabulary"].values()) if field == "embeddings" else data[field]


@pytest.mark.parametrize("typed, expected", [
    ("2", 2.0), (" -1.5 ", -1.5), ("−4", -4.0), ("1e6", VALUE_LIMIT), ("-1e6", -VALUE_LIMIT), (0.1 + 0.2, 0.1 + 0.2),
])
def test_typed_numbers_are_read_exactly(typed, expected):
    assert model_edits.parse_number(typed) == expected


@pytest.mark.parametrize("typed, reason", [
    ("abc", "is not a number"), ("", "nothing typed"), ("nan", "not a finite number"), ("inf", "not a finite number"),
    ("-inf", "not a finite number"), ("1e999", "not a finite number"), ("1e308", "too large"),
    ("1000000.5", "too large"), (True, "not a number"), (float("nan"), "not a finite number"), (10**400, "too large"),
])
def test_bad_numbers_are_refused_with_a_reason_and_the_fix(model, typed, reason):
    before = snapshot(model)
    with pytest.raises(ModelError, match=reason) as error:
        model_edits.set_value(model, "w_q", 0, 1, typed)
    assert "W_Q feature 'animal', column 2" in str(error.value)
    assert snapshot(model) == before


def test_a_file_with_an_absurd_number_is_refused_like_a_typed_one(model, tmp_path):
    data = engine.model_to_dict(model)
    data["w_k"][1][0] = 1e300
    with pytest.raises(ModelError, match=r"w_k\[1\]\[0\]: 1e\+300 is too large"):
        engine.model_from_dict(data)
    path = tmp_path / "huge.json"
    path.write_text('{"name": "x", "features": ["a"], "vocabulary": {"x": [' + "9" * 5000 + ']}}')
    with pytest.raises(ModelError, match="huge.json"):
        engine.load_model(path)


@pytest.mark.parametrize("field, row, col", [("embeddings", 2, 2), ("w_q", 1, 0), ("w_k", 2, 1), ("w_v", 0, 0)])
def test_set_value_changes_one_number_and_its_inverse_restores_the_model_bit_for_bit(model, field, row, col):
    before = snapshot(model)
    old = model_edits.set_value(model, field, row, col, "0.1")
    after = model_edits.values(model, field)
    assert after[row, col] == 0.1
    assert np.count_nonzero(after != np.array(matrix_in(before, field))) == 1, "exactly one number changes"
    model_edits.set_value(model, field, row, col, old)
    assert snapshot(model) == before


def test_an_edit_replaces_the_array_so_an_earlier_trace_keeps_its_numbers(model):
    trace = engine.run(model, "cats chase mice")
    w_q = trace.heads[0].w_q.copy()
    model_edits.set_value(model, "w_q", 0, 1, 5)
    np.testing.assert_array_equal(trace.heads[0].w_q, w_q)
    assert engine.run(model, "cats chase mice").heads[0].w_q[0, 1] == 5


def test_cells_outside_the_matrix_and_a_missing_w_o_are_refused(model):
    with pytest.raises(ModelError, match="no cell"):
        model_edits.set_value(model, "w_v", 3, 0, 1)
    with pytest.raises(ModelError, match="has no W_O"):
        model_edits.set_value(model, "w_o", 0, 0, 1)
    with pytest.raises(ModelError, match="not editable"):
        model_edits.values(model, "scores")


def test_add_word_appends_a_typable_word_and_remove_word_undoes_it(model):
    before = snapshot(model)
    assert model_edits.add_word(model, " Dogs ", ["1", "0", "−0.5"]) == "dogs"
    assert list(model.vocabulary)[-1] == "dogs"
    np.testing.assert_array_equal(model.vocabulary["dogs"], [1.0, 0.0, -0.5])
    assert engine.tokenize("dogs chase cats", model.vocabulary).tokens == ["dogs", "chase", "cats"]
    model_edits.remove_word(model, "dogs")
    assert snapshot(model) == before


@pytest.mark.parametrize("word, values, reason", [
    ("", [0, 0, 0], "type the new word"), ("cats", [0, 0, 0], "already in the vocabulary"),
    ("two words", [0, 0, 0], "not one word"), ("x-y", [0, 0, 0], "not one word"),
    ("bird", [0, 0], "expected 3 values"), ("bird", [0, "abc", 0], "feature 'action'"),
    ("bird", [0, 0, "inf"], "not a finite number"),
])
def test_a_bad_new_word_is_refused_and_nothing_is_added(model, word, values, reason):
    before = snapshot(model)
    with pytest.raises(ModelError, match=reason):
        model_edits.add_word(model, word, values)
    assert snapshot(model) == before


def test_the_last_word_cannot_be_removed(model):
    for word in ["cats", "chase"]:
        model_edits.remove_word(model, word)
    with pytest.raises(ModelError, match="only word"):
        model_edits.remove_word(model, "mice")


def test_rename_feature_shows_in_the_trace_and_the_file_and_undoes(model):
    before = snapshot(model)
    assert model_edits.rename_feature(model, 2, "  tiny ") == "small"
    assert model.features == ["animal", "action", "tiny"]
    assert engine.run(model, "cats").features == ["animal", "action", "tiny"]
    assert engine.model_to_dict(model)["features"] == ["animal", "action", "tiny"]
    model_edits.rename_feature(model, 2, "small")
    assert snapshot(model) == before


@pytest.mark.parametrize("name, reason", [("", "type its new name"), ("  ", "type its new name"),
                                          ("action", "appears twice")])
def test_a_bad_feature_name_is_refused(model, name, reason):
    with pytest.raises(ModelError, match=reason):
        model_edits.rename_feature(model, 0, name)
    assert model.features == ["animal", "action", "small"]


def test_a_word_beyond_the_vocabulary_limit_is_refused(model, monkeypatch):
    monkeypatch.setattr(model_edits, "MAX_WORDS", len(model.vocabulary))
    with pytest.raises(ModelError, match="^word: the vocabulary is full; a model may have at most 3 words$"):
        model_edits.add_word(model, "owls", [0, 0, 0])
    assert "owls" not in model.vocabulary
