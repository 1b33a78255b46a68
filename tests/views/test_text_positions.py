"""Qt positions (UTF-16 units) ↔ Python indices (code points), with hand-counted examples."""

from hypothesis import given
from hypothesis import strategies as st

from attention_explorer.views.text_positions import TextPositions


def test_ascii_and_bmp_text_map_to_themselves():
    for text in ("the cat", "straße", "ca\u0301t", "שלום עולם", ""):
        positions = TextPositions(text)
        assert [positions.to_qt(i) for i in range(len(text) + 1)] == list(range(len(text) + 1))
        assert [positions.to_python(i) for i in range(len(text) + 1)] == list(range(len(text) + 1))


def test_an_emoji_takes_two_qt_positions():
    positions = TextPositions("🐱 the")  # Qt: 🐱=0,1 space=2 t=3 h=4 e=5 end=6
    assert [positions.to_qt(i) for i in range(6)] == [0, 2, 3, 4, 5, 6]
    assert [positions.to_python(p) for p in range(7)] == [0, 0, 1, 2, 3, 4, 5]


def test_several_wide_characters_and_a_joined_family():
    text = "a👩‍👩‍👧b"  # a, woman, ZWJ, woman, ZWJ, girl, b: three wide characters
    positions = TextPositions(text)
    assert positions.to_qt(len(text)) == len(text.encode("utf-16-le")) // 2 == 10
    assert positions.to_qt(6) == 9 and positions.to_python(9) == 6


@given(st.text())
def test_to_python_inverts_to_qt_and_matches_utf16(text):
    positions = TextPositions(text)
    for index in range(len(text) + 1):
        qt = positions.to_qt(index)
        assert qt == len(text[:index].encode("utf-16-le", "surrogatepass")) // 2
        assert positions.to_python(qt) == index
