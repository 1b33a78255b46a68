"""One layer's measures computed together (sums shared between them) agree with each measure's own
function, on random attention and tokens, with and without TransformerLens's exclusions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer.engine.census import MEASURE_KEYS, CensusSettings
from attention_explorer.engine.census.clark import clark_averages
from attention_explorer.engine.census.duplicate_token import duplicate_token_scores
from attention_explorer.engine.census.entropy import attention_entropy
from attention_explorer.engine.census.induction import induction_scores, induction_stripe_scores
from attention_explorer.engine.census.measures import GROUPS, TextFacts, keys_of, layer_scores
from attention_explorer.engine.census.previous_token import previous_token_scores
from attention_explorer.engine.census.sink import sinks, token_importance


@st.composite
def layers(draw):
    n, heads = draw(st.integers(4, 10)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    causal = draw(st.booleans())
    weights = rng.random((heads, n, n)).astype(np.float32) + 0.01
    if causal:
        weights = np.tril(weights)
    weights /= weights.sum(axis=-1, keepdims=True)
    ids = rng.integers(0, 3, size=n)
    return weights, ids, causal


@settings(max_examples=60, deadline=None)
@given(layers(), st.booleans(), st.booleans())
def test_the_layer_together_equals_each_measure_alone(layer, exclude_first, exclude_diagonal):
    weights, ids, causal = layer
    n = len(ids)
    labels = ["[CLS]", *(["."] * (n - 2)), "[SEP]"]
    special = np.array([True, *([False] * (n - 2)), True])
    facts = TextFacts.of(ids, labels, special, causal, period=1, repeat_start=0)
    chosen = CensusSettings(exclude_first=exclude_first, exclude_diagonal=exclude_diagonal, sink_epsilon=0.2)
    got = layer_scores(weights, facts, chosen)
    options = {"exclude_first": exclude_first, "exclude_diagonal": exclude_diagonal}
    expected = {"previous": previous_token_scores(weights, **options),
                "duplicate": duplicate_token_scores(weights, ids, **options),
                "induction": induction_scores(weights, ids, **options),
                "induction_stripe": induction_stripe_scores(weights, 0, 1),
                "sink": token_importance(weights, 0),
                "sink_rate": sinks(token_importance(weights, 0), 0.2).astype(float),
                "entropy": attention_entropy(weights, causal),
                **{f"clark_{k}": v for k, v in clark_averages(weights, labels, special).items()}}
    for key, value in expected.items():
        if key in got:
            np.testing.assert_allclose(got[key], value, atol=1e-5, err_msg=key)
        else:  # left out only where the text says nothing: no repeated token, or every weight excluded
            no_pattern = key in ("duplicate", "induction") and key not in facts.patterns
            assert no_pattern or not np.isfinite(value).all(), key


def test_every_measure_has_a_group_the_command_line_names():
    assert set(keys_of(GROUPS)) == set(MEASURE_KEYS)
    assert keys_of(["clark"]) == tuple(k for k in MEASURE_KEYS if k.startswith("clark_"))


@pytest.mark.parametrize("bad", [(), ("nothing",)])
def test_settings_need_known_measures(bad):
    from attention_explorer.engine.errors import OptionsError

    with pytest.raises(OptionsError):
        CensusSettings(measures=bad)
