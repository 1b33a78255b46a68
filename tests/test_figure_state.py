"""The view state a figure carries: written and read back the same, and read from untrusted files
strictly (every field checked, one message naming it)."""

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_explorer.figure_state import (
    COLORMAPS,
    GRIDS,
    PARTS,
    READING_FLAGS,
    SPANS,
    VIEWS,
    FigureStateError,
    Focus,
    ViewState,
    state_from_dict,
)
from attention_explorer.figure_text import caption, default_file_stem

pairs = st.tuples(st.integers(0, 40), st.integers(0, 40))
states = st.builds(
    ViewState,
    model=st.text(min_size=1, max_size=40).filter(lambda t: t.strip() and "\0" not in t),
    sentence=st.text(max_size=200).filter(lambda t: "\0" not in t),
    view=st.sampled_from(VIEWS),
    real=st.booleans(),
    model_sha256=st.sampled_from(["", "ab" * 32]),
    layer=st.integers(0, 40), head=st.integers(0, 40),
    matrix=st.sampled_from(["weights", "scores", "scaled", "masked"]),
    reading=st.fixed_dictionaries({name: st.booleans() for name in READING_FLAGS}),
    ablated=st.lists(pairs, max_size=5).map(lambda p: tuple(sorted(set(p)))),
    focus=st.none() | st.builds(Focus, st.integers(0, 500), st.sampled_from(["looking", "looked_at"]),
                                st.text(max_size=20).filter(lambda t: "\0" not in t)),
    colormap=st.sampled_from(COLORMAPS), span=st.none() | st.sampled_from(SPANS),
    step=st.none() | st.sampled_from(["softmax", "scores"]), all_heads=st.booleans(),
    strongest=st.none() | st.integers(0, 512), grid=st.none() | st.sampled_from(GRIDS),
    target=st.none() | st.text(max_size=100).filter(lambda t: "\0" not in t), part=st.sampled_from(PARTS),
)


@given(states)
def test_a_state_reads_back_as_it_was_written_through_json(state):
    if state.real:  # an encoder–decoder's target and part come together
        state = ViewState(**{**state.__dict__, "options": None, "toy_model": None,
                             "part": None if state.target is None else state.part})
    else:
        state = ViewState(**{**state.__dict__, "options": {"scale": True, "causal": False, "positional": True,
                                                              "heads": 2}, "target": None, "part": None})
    assert state_from_dict(json.loads(json.dumps(state.to_dict()))) == state


def good() -> dict:
    return ViewState(model="cat-sat-on-mat", sentence="the cat sat", options={"scale": True, "causal": False,
                                                                             "positional": False, "heads": 2},
                     focus=Focus(2, "looking", "sat")).to_dict()


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(format="something else"), "format"),
    (lambda d: d.update(version=2), "version"),
    (lambda d: d.update(version=True), "version"),
    (lambda d: d.update(view="pie chart"), "view"),
    (lambda d: d["model"].update(source=""), "model.source"),
    (lambda d: d["model"].update(source="x" * 5000), "model.source"),
    (lambda d: d["model"].update(kind="imaginary"), "model.kind"),
    (lambda d: d["model"].update(sha256="not a hash"), "model.sha256"),
    (lambda d: d.update(sentence=None), "sentence"),
    (lambda d: d.update(sentence="a" * 40_000), "sentence"),
    (lambda d: d.update(head=0), "head"),
    (lambda d: d.update(layer=10 ** 9), "layer"),
    (lambda d: d.update(head=1.5), "head"),
    (lambda d: d.update(matrix="q"), "matrix"),
    (lambda d: d.update(reading={"words": "yes"}), "reading.words"),
    (lambda d: d.update(ablated=[[1]]), "ablated"),
    (lambda d: d.update(ablated=[[1, 2]] * 5000), "ablated"),
    (lambda d: d.update(focus={"index": -1}), "focus.index"),
    (lambda d: d.update(focus={"index": 1, "role": "sideways"}), "focus.role"),
    (lambda d: d.update(colormap="jet"), "colormap"),
    (lambda d: d.update(options={"scale": 1, "heads": 2}), "options.scale"),
    (lambda d: d.update(options={"heads": 0}), "options.heads"),
    (lambda d: d.update(arcs={"strongest": -3}), "arcs.strongest"),
    (lambda d: d.update(grid="diagonal"), "grid"),
])
def test_a_damaged_state_is_refused_naming_the_field(change, field):
    data = good()
    change(data)
    with pytest.raises(FigureStateError, match="^" + re.escape(field) + ":"):
        state_from_dict(data)


def test_a_real_models_text_may_be_as_long_as_real_models_take():
    """The limit is the model's: a toy model's text stops at 32,000 characters, a real model's at 64,000,
    so a view of a long real-model text reopens."""
    data = ViewState(model="MiniLM-L6 (encoder)", sentence="a" * 64_000, real=True).to_dict()
    assert len(state_from_dict(data).sentence) == 64_000
    data["sentence"] += "a"
    with pytest.raises(FigureStateError, match="^sentence:"):
        state_from_dict(data)


def test_an_encoder_decoders_target_and_part_are_read_strictly():
    data = ViewState(model="models/bart", sentence="the cat sat", real=True, target="le chat", part="decoder").to_dict()
    assert (data["target"], data["part"]) == ("le chat", "decoder")
    assert state_from_dict(data).target == "le chat" and state_from_dict(data).part == "decoder"
    for key, value in (("part", "both"), ("target", 5), ("target", "x\0y")):
        with pytest.raises(FigureStateError, match=f"^{key}:"):
            state_from_dict({**data, key: value})
    written_before = {key: value for key, value in data.items() if key not in ("target", "part")}
    assert state_from_dict(written_before).target is None  # a figure made before: the target was the source
    assert "target" not in ViewState(model="models/bert", sentence="x", real=True).to_dict()


@pytest.mark.parametrize("junk", [None, [], "text", 3, {"format": "attention-explorer-view"}])
def test_what_is_not_a_state_is_refused_in_one_message(junk):
    with pytest.raises(FigureStateError):
        state_from_dict(junk)


def test_the_default_name_is_model_view_head_and_first_words():
    state = state_from_dict(good())
    assert default_file_stem(state, "cat-sat-on-mat") == "cat-sat-on-mat-heatmap-head1-the-cat-sat"
    real = ViewState(model="MiniLM-L6 (encoder)", sentence="The cat sat on it.", real=True, layer=2, head=3)
    assert default_file_stem(real, "MiniLM-L6 (encoder)") == "minilm-l6-encoder-heatmap-l3h4-the-cat-sat"


def test_the_caption_says_model_text_head_reading_focus_and_the_part_shown():
    from attention_explorer.figure_text import FigureFacts

    state = ViewState(model="m", sentence="The cat sat.", real=True, layer=2, head=3,
                      reading={"words": True, "hide_specials": True, "hide_first": False, "rollout": False},
                      ablated=((0, 1),), focus=Focus(1, "looked_at", "cat"))
    text = caption(state, FigureFacts("MiniLM", 3, 12, 32, "words", 6, None, "hidden: [CLS] — they had 40%",
                                      visible=(range(0, 2), range(1, 3)), span="row"))
    for part in ("MiniLM", "“The cat sat.” (3 words)", "layer 3 of 6, head 4 of 12", "attention weights",
                 "each row coloured from 0 to its largest weight", "hidden: [CLS]", "switched off: L1 H2",
                 "focus: “cat” (who looks at it)", "part shown: rows 1–2 and columns 2–3 of 3"):
        assert part in text, part
