"""The census runner: means over the texts that inform each measure, each head's best example,
cancelling, skipped texts, and whole censuses of toy and tiny real models."""

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine.census import (
    CensusSettings,
    CensusText,
    TextSource,
    builtin_battery,
    census_csv,
    census_json,
    keys_of,
    run_census,
    subject_for,
)
from attention_explorer.engine.census.induction import repeated_span
from attention_explorer.engine.census.subjects import TextRun
from attention_explorer.engine.errors import OptionsError, SentenceError
from attention_explorer.engine.pretrained import Cancelled


def previous_head(n: int) -> np.ndarray:
    weights = np.zeros((n, n))
    weights[0, 0] = 1
    weights[np.arange(1, n), np.arange(n - 1)] = 1
    return weights


class FixedSubject:
    """One layer of two heads whose weights are given per text: head 1 a perfect previous-token head
    on "prev" texts and uniform otherwise, head 2 always on the first token."""

    name, n_layers, n_heads, causal, has_loss = "fixed", 1, 2, False, False
    not_applicable = {"cross_own": "cross-attention only", "cross_next": "cross-attention only"}

    def run(self, text, ablate=frozenset(), progress=None):
        if text == "nothing":
            raise SentenceError("no token")
        ids = np.array([int(t) for t in text.split()])
        n = len(ids)
        first = np.zeros((n, n))
        first[:, 0] = 1
        head_1 = previous_head(n) if ids[0] == 0 else np.full((n, n), 1 / n)
        weights = np.stack([head_1, first])
        return TextRun(ids, [str(i) for i in ids], np.zeros(n, dtype=bool), False, lambda _layer: weights)


def source_of(*texts: str) -> TextSource:
    items = [CensusText(t) for t in texts]
    return TextSource("given", len(items), "digest", lambda: iter(items))


def test_means_are_over_the_texts_and_the_best_example_is_kept():
    # text 1: a previous-token head (3 of its 4 rows on the token before: 3/4); text 2 uniform over 4
    # tokens (the 3 pairs get 1/4 each of 4 rows: 3/16). Head 2 puts every row on the first token.
    result = run_census(FixedSubject(), source_of("0 1 2 3", "5 6 7 8"), CensusSettings(keys_of(["previous", "sink"])))
    assert result.grid("previous")[0].tolist() == pytest.approx([(3 / 4 + 3 / 16) / 2, 1 / 4])
    # α₁: the first column's mean, 2/4 then 1/4 for head 1, always 1 for head 2
    assert result.grid("sink")[0].tolist() == pytest.approx([(1 / 2 + 1 / 4) / 2, 1.0])
    assert result.grid("sink_rate")[0].tolist() == [0.5, 1.0]  # 1/4 is under ε = 0.3
    assert result.best_example("previous", 0, 0) == ("0 1 2 3", pytest.approx(3 / 4))
    assert result.texts == 2 and result.tokens == 8
    assert result.ranked("previous")[0][:2] == (0, 0)


def test_a_text_without_repeats_does_not_count_for_duplicate_heads():
    result = run_census(FixedSubject(), source_of("0 1 2 3", "5 6 5"), CensusSettings(("duplicate",)))
    counts = result.counts["duplicate"]
    assert counts.tolist() == [[1, 1]]  # only the text that repeats token 5


def test_texts_with_nothing_to_read_are_skipped_and_said():
    result = run_census(FixedSubject(), source_of("nothing", "7", "0 1"), CensusSettings(("previous",)))
    assert (result.texts, result.skipped) == (1, 2)


def test_only_texts_some_head_points_at_are_kept():
    texts = [f"0 {' '.join(str(i) for i in range(1, k))}" for k in range(2, 30)]
    result = run_census(FixedSubject(), source_of(*texts), CensusSettings(("previous",)))
    assert len(result.examples) <= result.n_layers * result.n_heads


def test_a_progress_answering_false_cancels():
    calls = []

    def progress(fraction, text):
        calls.append(fraction)
        return len(calls) < 3

    with pytest.raises(Cancelled):
        run_census(FixedSubject(), source_of("0 1", "0 1 2", "0 1 2 3"), progress=progress)


def test_settings_are_checked():
    with pytest.raises(OptionsError, match="ε"):
        CensusSettings(sink_epsilon=1.0)
    with pytest.raises(OptionsError, match="seed"):
        CensusSettings(seed=-1)
    with pytest.raises(OptionsError, match="no measure called"):
        keys_of(["inductoin"])
    assert keys_of(["all"]) == CensusSettings().measures


def test_a_toy_model_census_runs_on_its_own_words():
    model = engine.load_builtin("cat-sat-on-mat")
    subject = subject_for(model)
    source = builtin_battery(subject, seed=3)
    result = run_census(subject, source)
    assert result.grid("induction").shape == (1, 2)
    assert result.texts + result.skipped == source.count
    first_repeat = next(iter(source.texts()))
    assert first_repeat.kind == "repeat"
    assert repeated_span(subject.run(first_repeat.text).ids, first_repeat.period) == 0
    assert np.isfinite(result.grid("induction_stripe")).all()


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-gpt2", "tiny-llama.gguf"])
def test_tiny_real_models_census_every_measure(tiny, name):
    model = tiny(name)
    subject = subject_for(model)
    source = builtin_battery(subject, seed=0)
    result = run_census(subject, source)
    for measure in result.measures:
        grid = result.grid(measure)
        assert grid.shape == (model.n_layers, model.n_heads)
        assert np.isfinite(grid).all(), measure
    # the battery's repeats read back as two copies of the same tokens, so every text has its stripe
    assert int(result.counts["induction_stripe"].min()) == 20
    assert result.counts["entropy"].min() == result.texts
    layer, head = result.ranked("induction_stripe")[0][:2]
    text, score = result.best_example("induction_stripe", layer, head)
    assert text in [t.text for t in source.texts()]
    assert score >= result.grid("induction_stripe")[layer, head]


def test_the_battery_is_the_same_for_the_same_seed(tiny):
    subject = subject_for(tiny("tiny-gpt2"))
    first, again, other = (builtin_battery(subject, seed) for seed in (1, 1, 2))
    assert [t.text for t in first.texts()] == [t.text for t in again.texts()]
    assert first.digest == again.digest != other.digest


def test_the_table_and_the_json_hold_every_head(tiny):
    model = tiny("tiny-bert")
    result = run_census(subject_for(model), builtin_battery(subject_for(model)), CensusSettings(("previous",)))
    rows = census_csv(result).splitlines()
    assert rows[0] == "layer,head,previous"
    assert len(rows) == 1 + model.n_layers * model.n_heads
    layer, head, value = rows[1].split(",")
    assert (layer, head) == ("1", "1") and float(value) == pytest.approx(result.grid("previous")[0, 0])
    import json

    data = json.loads(census_json(result))
    assert data["ranked"]["previous"][0]["layer"] == result.ranked("previous")[0].layer + 1
