"""Toy models take sentences of at most MAX_SENTENCE_WORDS words; longer ones get a clear SentenceError,
and a huge text is refused by its length before it is split into words."""

import json

import pytest

from attention_explorer import engine


@pytest.fixture(scope="module")
def model():
    return engine.load_builtin("cats-chase-mice")


def test_the_documented_limits():
    assert engine.MAX_SENTENCE_WORDS == 1024 >= 512
    assert engine.MAX_SENTENCE_CHARS == 32_000


def test_a_sentence_at_the_limit_is_computed(model):
    trace = engine.run(model, " ".join(["cats chase mice", "cats"] * 256))
    assert trace.n == engine.MAX_SENTENCE_WORDS and trace.heads[0].weights.shape == (1024, 1024)


def test_one_word_more_is_refused_with_the_count_and_the_fix(model):
    with pytest.raises(engine.SentenceError) as info:
        engine.run(model, " ".join(["cats"] * 1025))
    assert str(info.value) == "this sentence has 1,025 words; toy models take at most 1,024: shorten it"


def test_unknown_words_count_too(model):
    with pytest.raises(engine.SentenceError, match="^this sentence has 2,000 words; toy models take at most 1,024"):
        engine.run(model, " ".join(["cats", "zebra"] * 1000))


def test_a_megabyte_of_text_is_refused_by_its_length(model):
    with pytest.raises(engine.SentenceError) as info:
        engine.run(model, "cats " * 200_000)
    assert str(info.value) == "this sentence has 1,000,000 characters; toy models take at most 32,000: shorten it"


def test_cross_attention_keeps_the_same_limits(model):
    with pytest.raises(engine.SentenceError, match="1,025 words"):
        engine.cross_attention(model, "cats chase mice", " ".join(["mice"] * 1025))


def test_a_model_file_with_a_huge_default_sentence_is_refused(tmp_path, model):
    data = engine.model_to_dict(model)
    data["defaults"]["sentence"] = "cats " * 10_000
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(engine.ModelError) as info:
        engine.load_model(path)
    assert str(info.value) == "m.json: defaults.sentence: 50,000 characters; a sentence may have at most 32,000"
