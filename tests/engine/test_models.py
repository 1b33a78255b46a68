"""Model files: the built-ins load, damaged files are refused with the field named, save round-trips."""

import json

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine import ModelError


@pytest.mark.parametrize("name", engine.builtin_model_names())
def test_every_builtin_model_loads_and_runs_its_sentence(name):
    model = engine.load_builtin(name)
    trace = engine.run(model, model.default_sentence)
    assert trace.unknown == []
    assert len(trace.heads) == model.default_options.heads


def test_builtin_models_are_exactly_as_specified():
    cats = engine.load_builtin("cats-chase-mice")
    np.testing.assert_array_equal(cats.w_q, [[0, 2], [2, 0], [0, 0]])
    assert cats.w_o is None
    fish = engine.load_builtin("cat-ate-fish")
    assert fish.default_options.causal and fish.default_options.heads == 2
    np.testing.assert_array_equal(fish.w_o, np.eye(4))
    tired = engine.load_builtin("it-was-tired")
    np.testing.assert_array_equal(tired.w_q[3], [3, 2.4, -4, 0, 0])
    np.testing.assert_array_equal(tired.vocabulary["tired"], [0, 0, 0, 0, 0.5])


def test_cat_sat_on_mat_tells_its_story_in_head_one():
    model = engine.load_builtin("cat-sat-on-mat")
    assert model.d_model == 8 and model.d_proj == 8 and 25 <= len(model.vocabulary) <= 40
    trace = engine.run(model, "the cat sat on the mat")
    w = trace.heads[0].weights
    sat, cat, on, mat = 2, 1, 3, 5
    assert w[sat].argmax() == cat and w[sat, cat] > 0.5
    assert w[on].argmax() == mat and w[on, mat] > 0.5
    assert w[cat, sat] < 0.1  # attention is one-sided
    quick = engine.run(model, "the quick brown fox jumped over the lazy dog")
    fox, dog = 3, 8
    assert quick.heads[0].weights[1, [fox, dog]].sum() > 0.8   # an adjective looks for nouns
    assert quick.heads[0].weights[4, [fox, dog]].sum() > 0.8   # a verb looks for animals
    for sentence in ("the quick brown fox jumped over the lazy dog", "my dog chased a ball in the park"):
        assert engine.run(model, sentence).unknown == []


def _write(tmp_path, data) -> str:
    path = tmp_path / "model.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def _cats() -> dict:
    return engine.model_to_dict(engine.load_builtin("cats-chase-mice"))


@pytest.mark.parametrize("damage, expected", [
    (lambda d: d.pop("w_k"), "w_k: missing"),
    (lambda d: d["w_q"].pop(), "w_q: expected 3 rows"),
    (lambda d: d["w_v"][1].append(1.0), "w_v[1]: expected 2 numbers"),
    (lambda d: d["vocabulary"].update(mice=[1, 0]), "vocabulary['mice']: expected 3 numbers"),
    (lambda d: d["vocabulary"]["cats"].__setitem__(0, "x"), "vocabulary['cats'][0]: 'x' is not a number"),
    (lambda d: d.update(w_o=[[1, 0, 0]]), "w_o: expected 2 rows"),
    (lambda d: d["defaults"].update(heads=3), "defaults.heads: must divide d_proj = 2"),
    (lambda d: d.update(features=["a", "a", "b"]), "appears twice"),
])
def test_damaged_model_names_the_field(tmp_path, damage, expected):
    data = _cats()
    damage(data)
    with pytest.raises(ModelError) as info:
        engine.load_model(_write(tmp_path, data))
    assert expected in str(info.value)


def test_nan_in_a_model_file_is_refused(tmp_path):
    text = json.dumps(_cats()).replace('"w_q": [[0.0, 2.0]', '"w_q": [[NaN, 2.0]')
    with pytest.raises(ModelError, match=r"w_q\[0\]\[0\]: nan is not a finite number"):
        engine.load_model(_write(tmp_path, text))


def test_not_json_is_refused_with_the_position(tmp_path):
    with pytest.raises(ModelError, match=r"not valid JSON \(line 1, column 2"):
        engine.load_model(_write(tmp_path, "{nope"))


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        engine.load_model(tmp_path / "absent.json")


def test_save_and_load_round_trip_bit_for_bit(tmp_path):
    model = engine.load_builtin("cat-sat-on-mat")
    model.w_q[0, 0] = 0.1 + 0.2  # a float with no short decimal form
    engine.save_model(model, tmp_path / "m.json")
    again = engine.load_model(tmp_path / "m.json")
    assert engine.model_to_dict(again) == engine.model_to_dict(model)
    assert again.w_q[0, 0] == 0.1 + 0.2
    assert again.extra["seed"] == 2017


def test_tokenizer_keeps_unknown_words_and_drops_punctuation():
    words = engine.tokenize("The cat, the DOG; sat!", ["the", "cat", "sat"])
    assert words.tokens == ["the", "cat", "the", "sat"]
    assert words.unknown == ["dog"]
    assert engine.token_labels(words.tokens) == ["the₁", "cat", "the₂", "sat"]
    assert engine.nearest_words("catt", ["cat", "mat", "the"])[0] == "cat"


def test_empty_and_all_unknown_sentences_are_clear_errors():
    model = engine.load_builtin("cats-chase-mice")
    with pytest.raises(engine.SentenceError, match="empty"):
        engine.run(model, " ?! ")
    with pytest.raises(engine.SentenceError, match="knows none of these words: dogs"):
        engine.run(model, "dogs")
