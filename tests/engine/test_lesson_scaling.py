"""Why √d_k: random queries and keys scored raw, ÷√d_k and ÷d_k, checked against the arithmetic."""

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_explorer import engine
from attention_explorer.engine import OptionsError, scaling_experiment


@pytest.fixture(scope="module")
def dk64():
    return scaling_experiment(64, keys=10, trials=400, seed=0)


def test_spread_is_root_dk_raw_one_scaled_and_one_over_root_dk_divided(dk64):
    # Var(q·k) = Σ Var(q_i k_i) = d_k for unit-variance entries: spread √64 = 8.
    assert dk64.stats["raw"].spread == pytest.approx(8.0, rel=0.05)
    assert dk64.stats["scaled"].spread == pytest.approx(1.0, rel=0.05)
    assert dk64.stats["divided_by_dk"].spread == pytest.approx(1 / 8, rel=0.05)
    # dividing the same samples divides their spread exactly
    assert dk64.stats["scaled"].spread == pytest.approx(dk64.stats["raw"].spread / 8, rel=1e-12)
    assert dk64.stats["divided_by_dk"].spread == pytest.approx(dk64.stats["raw"].spread / 64, rel=1e-12)


def test_raw_scores_make_softmax_peaked_and_dividing_by_dk_makes_it_flat(dk64):
    top = {mode: dk64.stats[mode].top_weight for mode in engine.SCALING_MODES}
    assert top["raw"] > top["scaled"] > top["divided_by_dk"]
    assert top["raw"] > 0.8                                  # nearly one-hot
    assert top["divided_by_dk"] == pytest.approx(1 / 10, abs=0.03)  # nearly flat: every weight ≈ 1/keys


def test_scaling_lets_more_gradient_through(dk64):
    assert dk64.stats["raw"].slope < dk64.stats["scaled"].slope
    assert dk64.gradient_ratio == pytest.approx(dk64.stats["scaled"].slope / dk64.stats["raw"].slope, rel=1e-15)
    assert dk64.gradient_ratio > 1.5


def test_samples_and_first_query_bars(dk64):
    assert dk64.raw_scores.shape == (400, 10) and dk64.raw_scores.dtype == np.float64
    np.testing.assert_allclose(dk64.scores("scaled"), dk64.raw_scores / 8, rtol=1e-15)
    for mode in engine.SCALING_MODES:
        bars = dk64.first_weights[mode]
        assert bars.shape == (10,)
        assert bars.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(bars, engine.softmax(dk64.scores(mode)[0]), rtol=0, atol=1e-15)


def test_one_trial_two_keys_by_hand():
    """One query, two keys: the top weight is the logistic of the score gap; its slope is a(1 − a)."""
    result = scaling_experiment(4, keys=2, trials=1, seed=7)
    rng = np.random.default_rng(7)  # the documented draw order: queries first, then one number per key
    q = rng.standard_normal((1, 4))
    z = rng.standard_normal((1, 2))
    s = math.sqrt(float(q[0] @ q[0])) * z[0]
    np.testing.assert_allclose(result.raw_scores[0], s, rtol=1e-15)
    for mode, divisor in (("raw", 1.0), ("scaled", 2.0), ("divided_by_dk", 4.0)):
        gap = abs(s[0] - s[1]) / divisor
        a = 1 / (1 + math.exp(-gap))
        assert result.stats[mode].top_weight == pytest.approx(a, rel=1e-12)
        assert result.stats[mode].slope == pytest.approx(a * (1 - a), rel=1e-12)
        # two numbers ±gap/2 around their mean: standard deviation gap/2
        assert result.stats[mode].spread == pytest.approx(gap / 2, rel=1e-12)


def test_the_shortcut_matches_full_random_keys():
    """Drawing one number along q per key gives the statistics of full d_k-dimensional keys."""
    rng = np.random.default_rng(123)
    dk, keys, trials = 64, 10, 4000
    q = rng.standard_normal((trials, dk))
    k = rng.standard_normal((trials, keys, dk))
    full = np.einsum("td,tkd->tk", q, k)
    top_full = engine.softmax(full / 8).max(axis=1).mean()
    ours = scaling_experiment(dk, keys, trials, seed=5)
    assert ours.stats["raw"].spread == pytest.approx(full.std(), rel=0.03)
    assert ours.stats["scaled"].top_weight == pytest.approx(top_full, rel=0.03)


def test_same_seed_same_numbers_other_seed_other_numbers():
    a, b, c = (scaling_experiment(16, 5, 50, seed) for seed in (3, 3, 4))
    np.testing.assert_array_equal(a.raw_scores, b.raw_scores)
    assert a.to_dict() == b.to_dict()
    assert not np.array_equal(a.raw_scores, c.raw_scores)


def test_to_dict_has_the_documented_shape(dk64):
    data = dk64.to_dict()
    assert list(data) == ["dk", "keys", "trials", "seed", "raw", "scaled", "divided_by_dk", "gradient_ratio"]
    assert (data["dk"], data["keys"], data["trials"], data["seed"]) == (64, 10, 400, 0)
    for mode in engine.SCALING_MODES:
        assert set(data[mode]) == {"spread", "top_weight", "slope"}
        assert all(type(x) is float for x in data[mode].values())


def test_one_key_has_no_gradient_and_no_ratio():
    result = scaling_experiment(8, keys=1, trials=3)
    assert all(result.stats[m].top_weight == 1.0 and result.stats[m].slope == 0.0 for m in engine.SCALING_MODES)
    assert math.isnan(result.gradient_ratio) and result.to_dict()["gradient_ratio"] is None


@pytest.mark.parametrize("kwargs, message", [
    ({"dk": 0}, "d_k must be between 1 and 1024, got 0"),
    ({"dk": 1025}, "d_k must be between 1 and 1024"),
    ({"dk": 2.5}, "d_k must be a whole number"),
    ({"dk": 8, "keys": 0}, "keys must be between 1"),
    ({"dk": 8, "trials": 0}, "trials must be between 1"),
    ({"dk": 8, "seed": -1}, "seed must be a whole number ≥ 0"),
])
def test_settings_out_of_range_are_refused(kwargs, message):
    with pytest.raises(OptionsError, match=message):
        scaling_experiment(**kwargs)


def test_fast_enough_to_recompute_while_a_slider_moves():
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        scaling_experiment(1024, keys=10, trials=400, seed=1)
        timings.append(time.perf_counter() - start)
    assert sorted(timings)[2] < 0.1  # median; measured about 12 ms


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 1024), st.integers(1, 30), st.integers(1, 50), st.integers(0, 2**32))
def test_statistics_stay_in_their_ranges(dk, keys, trials, seed):
    result = scaling_experiment(dk, keys, trials, seed)
    for mode in engine.SCALING_MODES:
        stats = result.stats[mode]
        assert 1 / keys - 1e-12 <= stats.top_weight <= 1.0
        assert 0.0 <= stats.slope <= 0.25
        assert stats.spread >= 0
        assert result.first_weights[mode].sum() == pytest.approx(1.0, abs=1e-12)


def test_expected_spread_and_slope_ratio_per_mode(dk64):
    assert [dk64.expected_spread(m) for m in engine.SCALING_MODES] == [8.0, 1.0, 0.125]
    assert dk64.slope_ratio("raw") == 1.0
    assert dk64.slope_ratio("scaled") == dk64.gradient_ratio
    assert dk64.slope_ratio("divided_by_dk") == pytest.approx(
        dk64.stats["divided_by_dk"].slope / dk64.stats["raw"].slope, rel=1e-15)
    one_key = scaling_experiment(8, keys=1, trials=3)
    assert math.isnan(one_key.slope_ratio("divided_by_dk"))
