"""A user's text file split into texts (lines or paragraphs), refused when it cannot be one, and
census results cached per model, texts and settings."""

import os

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine.census import (
    CensusCache,
    CensusSettings,
    builtin_battery,
    cache_key,
    read_texts_file,
    run_census,
    subject_for,
)
from attention_explorer.engine.census.texts import split_texts
from attention_explorer.engine.errors import EngineError


def texts_of(content: str, split: str = "auto") -> tuple[str, list[str]]:
    how, texts = split_texts(content, split)
    return how, list(texts())


def test_one_text_per_line_blank_lines_dropped():
    assert texts_of("The cat sat.\n\n  A dog ran.  \n") == ("lines", ["The cat sat.", "A dog ran."])


def test_lines_without_blank_lines_between_them_are_one_text_each():
    assert texts_of("first\nsecond\nthird\n") == ("lines", ["first", "second", "third"])


def test_paragraphs_join_their_lines():
    content = "The cat\nsat on the mat.\n\nA dog\nran.\n"
    assert texts_of(content) == ("paragraphs", ["The cat sat on the mat.", "A dog ran."])
    assert texts_of(content, "lines")[1] == ["The cat", "sat on the mat.", "A dog", "ran."]


def test_a_file_is_counted_and_named(tmp_path):
    path = tmp_path / "essays.txt"
    path.write_text("one text\nanother text\n", encoding="utf-8")
    source = read_texts_file(path)
    assert source.count == 2
    assert "essays.txt" in source.label and "2 texts" in source.label
    assert [t.text for t in source.texts()] == ["one text", "another text"]
    assert [t.text for t in source.texts()] == ["one text", "another text"]  # a fresh iterator each time


@pytest.mark.parametrize("content, message", [
    (b"", "no text in it"),
    (b"\n \n\t\n", "no text in it"),
    (b"caf\xe9 au lait\n", "not UTF-8"),
])
def test_a_file_that_holds_no_usable_text_is_refused(tmp_path, content, message):
    path = tmp_path / "texts.txt"
    path.write_bytes(content)
    with pytest.raises(EngineError, match=message):
        read_texts_file(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "texts.fifo"
    os.mkfifo(fifo)
    with pytest.raises(EngineError, match="not a regular file"):
        read_texts_file(fifo)


def test_a_missing_file_and_a_folder_are_refused(tmp_path):
    with pytest.raises(EngineError, match="no such file"):
        read_texts_file(tmp_path / "absent.txt")
    with pytest.raises(EngineError, match="folder"):
        read_texts_file(tmp_path)


def test_an_unknown_split_is_refused():
    with pytest.raises(EngineError, match="lines"):
        split_texts("a", "sentences")


def toy_census():
    settings = CensusSettings(("previous", "entropy"))
    subject = subject_for(engine.load_builtin("cat-sat-on-mat"))
    source = builtin_battery(subject, seed=0)
    return subject, source, settings, run_census(subject, source, settings)


def test_a_cached_result_comes_back_equal(tmp_path):
    subject, source, settings, result = toy_census()
    cache = CensusCache(tmp_path / "census")
    key = cache_key(subject.fingerprint(), source.digest, settings)
    assert cache.load(key) is None
    cache.store(key, result)
    back = cache.load(key)
    assert back is not None
    for measure in result.measures:
        np.testing.assert_array_equal(back.grid(measure), result.grid(measure))
        np.testing.assert_array_equal(back.best_text[measure], result.best_text[measure])
    assert back.examples == result.examples and back.source == result.source
    assert back.similar_heads(0, 0) == result.similar_heads(0, 0)


def test_the_key_changes_with_the_model_the_texts_and_the_settings():
    subject, source, settings, _ = toy_census()
    key = cache_key(subject.fingerprint(), source.digest, settings)
    other_model = subject_for(engine.load_builtin("cat-ate-fish"))
    assert cache_key(other_model.fingerprint(), source.digest, settings) != key
    assert cache_key(subject.fingerprint(), "another file", settings) != key
    assert cache_key(subject.fingerprint(), source.digest, CensusSettings(("previous",))) != key
    edited = engine.load_builtin("cat-sat-on-mat")
    edited.w_q[0, 0] += 1
    assert subject_for(edited).fingerprint() != subject.fingerprint()


def test_a_damaged_cache_file_is_ignored(tmp_path):
    subject, source, settings, result = toy_census()
    cache = CensusCache(tmp_path)
    key = cache_key(subject.fingerprint(), source.digest, settings)
    cache.store(key, result)
    cache.path(key).write_bytes(b'{"key": "' + key.encode() + b'", "result": {"model": 3')
    assert cache.load(key) is None


def test_real_models_are_fingerprinted_by_their_files(tiny, tmp_path):
    subject = subject_for(tiny("tiny-llama.gguf"))
    assert subject.fingerprint() == subject.fingerprint()
    assert subject.fingerprint() != subject_for(tiny("tiny-llama")).fingerprint()
