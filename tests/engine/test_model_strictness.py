"""Model files are strict where a silent acceptance would surprise: one test per rule, with the exact
message the user reads."""

import json
import math

import pytest

from attention_explorer import engine
from attention_explorer.engine import ModelError
from attention_explorer.engine.limits import MAX_FEATURES, MAX_PROJECTION_COLUMNS, MAX_WORDS


def _cats() -> dict:
    return engine.model_to_dict(engine.load_builtin("cats-chase-mice"))


def _refusal(tmp_path, data) -> str:
    path = tmp_path / "model.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(ModelError) as info:
        engine.load_model(path)
    return str(info.value)


def test_a_word_twice_in_the_vocabulary_is_an_error_not_last_wins(tmp_path):
    text = json.dumps(_cats()).replace('"vocabulary": {', '"vocabulary": {"mice": [0, 0, 0], ')
    assert _refusal(tmp_path, text) == "model.json: vocabulary: the key 'mice' appears twice; keep one"


def test_a_key_twice_anywhere_is_named_with_its_place(tmp_path):
    text = json.dumps(_cats()).replace('"defaults": {', '"defaults": {"heads": 1, ')
    assert _refusal(tmp_path, text) == "model.json: defaults: the key 'heads' appears twice; keep one"
    top = json.dumps(_cats())[:-1] + ', "name": "other"}'
    assert _refusal(tmp_path, top) == "model.json: the top level: the key 'name' appears twice; keep one"
    nested = json.dumps({**_cats(), "notes": [{"a": 1}, {"b": 1}]}).replace('{"b": 1', '{"b": 1, "b": 2')
    assert _refusal(tmp_path, nested) == "model.json: notes[1]: the key 'b' appears twice; keep one"


@pytest.mark.parametrize("word", ["dog!", "a-b", "two words", "Cats", "_"])
def test_a_word_that_can_never_be_typed_is_an_error(tmp_path, word):
    data = _cats()
    data["vocabulary"][word] = [0, 0, 0]
    assert _refusal(tmp_path, data) == (
        f"model.json: vocabulary[{word!r}]: can never be typed as one word; a word is lower-case letters and "
        "digits (an apostrophe may join two parts, as in it's)")


def test_words_with_apostrophes_and_digits_are_typeable(tmp_path):
    data = _cats()
    data["vocabulary"].update({"it's": [0, 0, 1], "b2": [0, 1, 0], "café": [1, 1, 0]})
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(data))
    assert {"it's", "b2", "café"} <= set(engine.load_model(path).vocabulary)


@pytest.mark.parametrize("version, shown", [(999, "999"), ("1", "'1'"), (None, "null"), (True, "true")])
def test_an_unknown_version_says_which_versions_are_read(tmp_path, version, shown):
    assert _refusal(tmp_path, {**_cats(), "version": version}) == (
        f"model.json: version: {shown} is not a version this app reads; it reads version 1 "
        "(a newer app may have written this file)")


def test_nan_in_an_extra_key_is_refused_with_its_place(tmp_path):
    text = json.dumps({**_cats(), "notes": {"history": [1, 2]}}).replace("[1, 2]", "[1, NaN]")
    assert _refusal(tmp_path, text) == (
        "model.json: notes.history[1]: nan is not a finite number; standard JSON has no NaN or Infinity")
    text = json.dumps({**_cats(), "seed": 1}).replace('"seed": 1', '"seed": -Infinity')
    assert _refusal(tmp_path, text) == (
        "model.json: seed: -inf is not a finite number; standard JSON has no NaN or Infinity")


def test_saving_writes_standard_json_only(tmp_path):
    model = engine.load_builtin("cats-chase-mice")
    path = tmp_path / "saved.json"
    engine.save_model(model, path)
    json.loads(path.read_text(), parse_constant=lambda name: pytest.fail(f"{name} written"))
    model.extra["notes"] = [math.nan]  # only code can put it there: loading refuses it
    with pytest.raises(ModelError, match=r"^notes\[0\]: nan is not a finite number"):
        engine.save_model(model, path)
    assert engine.load_model(path).extra == {}  # the good file stayed as it was


@pytest.mark.parametrize("damage, message", [
    (lambda d: d.__setitem__("w_q", [[0, 2], [2, 0], None]), "w_q[2]: must be a list of 2 numbers, not null"),
    (lambda d: d["w_k"][0].__setitem__(0, None), "w_k[0][0]: null is not a number"),
    (lambda d: d["w_k"][0].__setitem__(1, False), "w_k[0][1]: false is not a number"),
    (lambda d: d.__setitem__("w_v", None), "w_v: must be a list of rows, not null"),
    (lambda d: d.__setitem__("description", None), "description: must be a text, not null"),
])
def test_messages_use_jsons_words(tmp_path, damage, message):
    data = _cats()
    damage(data)
    assert _refusal(tmp_path, data) == f"model.json: {message}"


def test_the_whole_file_being_null_says_null(tmp_path):
    assert _refusal(tmp_path, "null") == "model.json: the file must hold a JSON object (a model), not null"


@pytest.mark.parametrize("damage, message", [
    (lambda d: d["w_q"][1].append(0), "w_q[1]: expected 2 numbers (one per projection column), found 3"),
    (lambda d: d["vocabulary"]["mice"].pop(), "vocabulary['mice']: expected 3 numbers (one per feature), found 2"),
    (lambda d: d["w_k"].pop(), "w_k: expected 3 rows (one per feature), found 2"),
    (lambda d: d.__setitem__("w_o", [[1, 0, 0], [0, 1, 0], [0, 0, 1]]),
     "w_o: expected 2 rows (one per projection column), found 3"),
    (lambda d: d.__setitem__("w_o", [[1, 0], [0, 1]]), "w_o[0]: expected 3 numbers (one per feature), found 2"),
])
def test_counts_name_what_they_count(tmp_path, damage, message):
    data = _cats()
    damage(data)
    assert _refusal(tmp_path, data) == f"model.json: {message}"


def test_more_features_than_the_limit_are_refused(tmp_path):
    data = _cats()
    data["features"] = [f"f{i}" for i in range(MAX_FEATURES + 1)]
    assert MAX_FEATURES == 512
    assert _refusal(tmp_path, data) == "model.json: features: 513 features; a model may have at most 512"


def test_more_projection_columns_than_the_limit_are_refused(tmp_path):
    data = _cats()
    data["w_q"] = [[0] * (MAX_PROJECTION_COLUMNS + 1)] * 3
    assert MAX_PROJECTION_COLUMNS == 512
    assert _refusal(tmp_path, data) == "model.json: w_q: 513 projection columns; a model may have at most 512"


def test_more_words_than_the_limit_are_refused(tmp_path):
    data = _cats()
    data["vocabulary"] = {f"w{i}": [0, 0, 0] for i in range(MAX_WORDS + 1)}
    assert MAX_WORDS == 10_000
    assert _refusal(tmp_path, data) == "model.json: vocabulary: 10,001 words; a model may have at most 10,000"


def test_a_model_at_the_limits_loads(tmp_path):
    data = _cats()
    data["features"] = [f"f{i}" for i in range(MAX_FEATURES)]
    data["vocabulary"] = {"a": [0.5] * MAX_FEATURES}
    data["w_q"] = data["w_k"] = data["w_v"] = [[0.25] * MAX_PROJECTION_COLUMNS] * MAX_FEATURES
    data["w_o"] = None
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    model = engine.load_model(path)
    assert (model.d_model, model.d_proj) == (MAX_FEATURES, MAX_PROJECTION_COLUMNS)
    assert engine.run(model, "a a").heads[0].weights[0].tolist() == [0.5, 0.5]
