"""The tokenizer on text beyond ASCII: canonical words (case-folded, NFC), offsets into the text as
typed, combining marks inside words, invalid text refused."""

import pytest

from attention_explorer.engine import SentenceError, tokenize
from attention_explorer.engine.tokenizer import canonical, is_word

VOCABULARY = ["the", "cat", "cát", "straße", "strasse"]


def _spans(text):
    return [(w.text, w.known, text[w.start:w.end]) for w in tokenize(text, VOCABULARY).words]


def test_offsets_point_into_the_text_as_typed():
    assert _spans("🐱 The CAT zebra") == [("the", True, "The"), ("cat", True, "CAT"), ("zebra", False, "zebra")]
    assert _spans("Straße zebra") == [("strasse", True, "Straße"), ("zebra", False, "zebra")]


def test_a_combining_accent_stays_in_its_word_and_composes():
    assert _spans("ca\u0301t") == [("c\u00e1t", True, "ca\u0301t")]
    assert _spans("CA\u0301T c\u00e1t") == [("c\u00e1t", True, "CA\u0301T"), ("c\u00e1t", True, "c\u00e1t")]


def test_scripts_with_vowel_signs_and_right_to_left_are_whole_words():
    assert [s[2] for s in _spans("हिन्दी नमस्ते")] == ["हिन्दी", "नमस्ते"]
    assert [s[2] for s in _spans("שלום, עולם!")] == ["שלום", "עולם"]


def test_punctuation_and_apostrophes_as_before():
    assert [s[0] for s in _spans("it's a-b, dog!")] == ["it's", "a", "b", "dog"]


def test_canonical_form():
    assert canonical("Cát") == canonical("CA\u0301T") == "c\u00e1t"
    assert canonical("İ") == "i\u0307"


def test_is_word_wants_one_canonical_word():
    assert is_word("cát") and is_word("it's")
    assert not is_word("ca\u0301t"), "not NFC: the tokenizer would never produce it"
    assert not is_word("Cat") and not is_word("dog!") and not is_word("a-b") and not is_word("")


@pytest.mark.parametrize("text", ["the \udcff cat", "\ud83d", "cat\udc00"])
def test_lone_surrogates_are_refused_naming_the_place(text):
    with pytest.raises(SentenceError, match="not valid text: character"):
        tokenize(text, VOCABULARY)
