"""The chips' edits: they always make the new list, and for the changes users make they keep every
item that stays."""

from hypothesis import given
from hypothesis import strategies as st

from attention_explorer.views.list_edits import edits, prefix_kept


def _applied(old, new, opcodes):
    made, read_old, read_new = [], 0, 0
    for tag, i1, i2, j1, j2 in opcodes:
        assert (i1, j1) == (read_old, read_new), "the opcodes cover both lists in order, without gaps"
        made += old[i1:i2] if tag == "equal" else new[j1:j2]
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
        read_old, read_new = i2, j2
    assert (read_old, read_new) == (len(old), len(new))
    return made


def _kept(opcodes) -> int:
    return sum(i2 - i1 for tag, i1, i2, _j1, _j2 in opcodes if tag == "equal")


@given(st.lists(st.sampled_from("abc"), max_size=30), st.lists(st.sampled_from("abc"), max_size=30))
def test_the_edits_make_the_new_list_from_the_old(old, new):
    assert _applied(old, new, edits(old, new)) == new


@given(st.lists(st.sampled_from("abcd"), max_size=40),
       st.lists(st.sampled_from("xy"), max_size=2), st.lists(st.sampled_from("xy"), max_size=2))
def test_items_taken_from_or_put_at_both_ends_keep_everything_between(body, front, back):
    whole = front + body + back
    for old, new in ((whole, body), (body, whole)):
        opcodes = edits(old, new)
        assert _applied(old, new, opcodes) == new
        assert _kept(opcodes) >= len(body)


def test_hiding_the_specials_keeps_every_word_between_them():
    old = ["[CLS]", "the", "cat", "sat", "the", "[SEP]"]
    assert edits(old, old[1:-1]) == [("delete", 0, 1, 0, 0), ("equal", 1, 5, 0, 4), ("delete", 5, 6, 4, 4)]
    assert edits(old[1:-1], old) == [("insert", 0, 0, 0, 1), ("equal", 0, 4, 1, 5), ("insert", 4, 4, 5, 6)]


def test_a_word_typed_in_the_middle_keeps_the_words_before_and_after_it():
    old = ["the", "cat", "sat", "on", "the", "mat"]
    new = ["the", "cat", "lay", "down", "on", "the", "mat"]
    assert edits(old, new) == [("equal", 0, 2, 0, 2), ("replace", 2, 3, 2, 4), ("equal", 3, 6, 4, 7)]


def test_a_token_written_or_a_step_back_touches_only_the_end():
    text = ["once", "upon", "a", "time", "there", "was"]
    assert edits(text[:-1], text) == [("equal", 0, 5, 0, 5), ("insert", 5, 5, 5, 6)]
    assert edits(text, text[:-1]) == [("equal", 0, 5, 0, 5), ("delete", 5, 6, 5, 5)]
    assert edits(text, text) == [("equal", 0, 6, 0, 6)]
    assert edits([], text) == [("insert", 0, 0, 0, 6)] and edits(text, []) == [("delete", 0, 6, 0, 0)]


def test_a_list_cut_at_its_end_or_written_on_keeps_its_start_and_any_other_change_none():
    assert prefix_kept("abcd", "ab") == 2 and prefix_kept("ab", "abcd") == 2 and prefix_kept("ab", "ab") == 2
    assert prefix_kept("", "abc") == 0 and prefix_kept("abc", "") == 0
    assert prefix_kept("abcd", "abxd") is None and prefix_kept("abc", "xbc") is None
