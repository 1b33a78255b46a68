"""A reading's arithmetic, on hand-built weights whose every number is known: each shown weight is
written out from the numbers it was made of, and those numbers give it."""

from dataclasses import replace

import numpy as np

from attention_explorer.engine import load_builtin, run
from attention_explorer.engine.reading import HiddenStage, Reading, RolloutStage, WordsStage, weight

PIECES = np.array([[0.1, 0.2, 0.7],
                   [0.3, 0.3, 0.4],
                   [0.5, 0.25, 0.25]])


def reading(*stages, groups=((0,), (1, 2))) -> Reading:
    source = run(load_builtin("cats-chase-mice"), "cats chase mice")
    return Reading(source, stages, groups, rule="")


def test_a_word_of_one_piece_looking_at_a_word_of_two_sums_over_them():
    words = reading(WordsStage((PIECES,), ((0,), (1, 2))))
    assert words.weight_arithmetic(0, 0, 1, ["cats", "chase"], 0.9) == \
        "words: 0.2 + 0.7 = 0.9 (summed over the pieces of chase)"


def test_a_word_of_two_pieces_averages_its_pieces_sums():
    words = reading(WordsStage((PIECES,), ((0,), (1, 2))))
    assert words.weight_arithmetic(0, 1, 0, ["cats", "chase"], 0.4) == \
        "words: (0.3 + 0.5) ÷ 2 = 0.4 (each of chase's 2 pieces summed over cats's, then averaged)"
    assert words.weight_arithmetic(0, 1, 1, ["cats", "chase"], 0.6) == \
        "words: ((0.3 + 0.4) + (0.25 + 0.25)) ÷ 2 = 0.6 (each of chase's 2 pieces summed over chase's, then averaged)"


def test_hiding_divides_by_what_the_row_gives_the_tokens_left():
    hidden = reading(HiddenStage((PIECES,), np.array([1, 2]), "[CLS]"), groups=((1,), (2,)))
    # row "chase" (token 1) gives 0.3 + 0.4 = 0.7 to the kept tokens 1 and 2
    assert hidden.weight_arithmetic(0, 0, 1, ["chase", "mice"], 0.4 / 0.7) == \
        "hidden: 0.4 ÷ 0.7 = 0.571 (0.7 of chase's weight is on the shown tokens; the rest was on [CLS])"


def test_rollout_at_the_first_layer_is_the_heads_mean_with_the_residual():
    heads = np.stack([PIECES, PIECES, PIECES * 0.5, PIECES * 1.5])  # averaged: PIECES
    rollout = reading(RolloutStage(0, heads, None), groups=((0,), (1,), (2,)))
    assert rollout.weight_arithmetic(0, 1, 1, ["a", "b", "c"], 0.65) == \
        "rollout: R₁[b, b] = (mean of the 4 heads 0.3 + 1) ÷ 2 = 0.65"


def test_a_rollout_row_is_the_row_of_the_layer_s_mix():
    from attention_explorer.engine.pretrained.analysis import rollout_mix
    heads = np.random.default_rng(3).random((5, 6, 6), dtype=np.float32)
    heads /= heads.sum(axis=2, keepdims=True)
    stage = RolloutStage(2, heads, None)
    mixed = rollout_mix(heads)
    for row in range(6):
        np.testing.assert_array_equal(stage.mixed_row(row), mixed[row])
        np.testing.assert_array_equal(stage.mean_row(row), heads.mean(axis=0, dtype=np.float64)[row])


def test_rollout_after_the_first_layer_multiplies_through():
    previous = np.eye(3)[[1, 0, 2]]  # R₁ swaps the first two tokens
    rollout = reading(RolloutStage(1, np.stack([PIECES, PIECES]), previous), groups=((0,), (1,), (2,)))
    # Â₂'s first row: (0.1 + 1, 0.2, 0.7) ÷ 2
    assert rollout.weight_arithmetic(0, 0, 0, ["a", "b", "c"], 0.1) == \
        "rollout: R₂[a, a] = Σₖ Â₂[a, k]·R₁[k, a] = 0.55×0 + 0.1×1 + 0.35×0 = 0.1"


def test_a_word_of_one_piece_after_hiding_is_written_out_by_the_hiding():
    hidden = HiddenStage((PIECES,), np.array([1, 2]), "[CLS]")
    words = WordsStage((PIECES[1:, 1:],), ((0,), (1,)))
    both = reading(hidden, words, groups=((1,), (2,)))
    text = both.weight_arithmetic(0, 0, 1, ["chase", "mice"], 0.4 / 0.7)
    assert text.startswith("hidden: 0.4 ÷ 0.7 = 0.571")
    assert "pieces merged" not in text  # the words changed nothing here


def test_the_titles_and_the_steps_say_what_is_shown():
    both = reading(RolloutStage(2, np.stack([PIECES] * 12), PIECES), WordsStage((PIECES,), ((0,), (1, 2))))
    both = replace(both, source=replace(both.source, layer=2))
    assert both.weights_title("layer 3, head 1 of 12") == \
        "attention rollout up to layer 3 (all heads), pieces merged into words"
    assert both.scores_note() == "each word's pieces averaged"
    assert both.steps_note(4).startswith("These steps are layer 3, head 5 as the model computes it, over its own "
                                         "3 tokens")
    assert both.shown_index(2) == 1 and both.shown_index(0) == 0


def test_small_weights_keep_three_significant_digits():
    assert [weight(x) for x in (0.0000052, 0.000476, 0.0123, 0.12349, 1.0)] == \
        ["0.0000052", "0.000476", "0.0123", "0.123", "1"]
