"""The head census of an encoder–decoder (the tiny BART checkpoint), one part at a time, on two texts:
every score compared with what is worked out here, with plain loops, from the engine's own run of each
text as source and target (`model.run(text, text)`), and the measures that do not apply to a part said,
not scored."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attention_explorer.engine.census import (  # noqa: E402
    CensusSettings,
    CensusText,
    TextSource,
    census_csv,
    census_json,
    run_census,
    subject_for,
    summary_lines,
)
from attention_explorer.engine.errors import OptionsError  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder  # noqa: E402
from attention_explorer.engine.pretrained.encoder_decoder_view import EncoderDecoderPart  # noqa: E402

BART = Path(__file__).parents[1] / "pretrained" / "data" / "tiny-bart"
TEXTS = ("The cat sat on the mat, and the cat slept.", "Alice gave Bob a book, and Bob gave Alice a pen.")
SMOOTHING = 1e-4


@pytest.fixture(scope="module")
def model():
    return open_encoder_decoder(BART)


def census(model, part: str, measures: tuple[str, ...] | None = None):
    source = TextSource("two texts", len(TEXTS), "two", lambda: iter(CensusText(t) for t in TEXTS))
    settings = CensusSettings() if measures is None else CensusSettings(measures)
    return run_census(subject_for(EncoderDecoderPart(model, part)), source, settings)


def share_on(weights: np.ndarray, pairs) -> float:
    """Σ of the weights on `pairs` over Σ of all the weights (TransformerLens's "mul" score)."""
    return sum(float(weights[i, j]) for i, j in pairs) / float(weights.sum(dtype=np.float64))


def row_entropy(weights: np.ndarray, causal: bool) -> float:
    rows = []
    for i, row in enumerate(weights.astype(np.float64)):
        visible = i + 1 if causal else len(row)
        smoothed = (1 - SMOOTHING) * row[:visible] + SMOOTHING / visible
        rows.append(-sum(p * np.log(p) for p in smoothed))
    return float(np.mean(rows))


def test_cross_attention_s_alignment_sinks_specials_and_entropy_are_the_runs_own(model):
    result = census(model, "cross")
    assert result.model_name == "tiny-bart (cross-attention)" and (result.n_layers, result.n_heads) == (2, 8)
    expected = {key: np.zeros((2, 8)) for key in ("cross_own", "cross_next", "sink", "clark_sep", "clark_punct",
                                                   "entropy")}
    for text in TEXTS:
        run = model.run(text, text)
        source, target = run.source, run.target
        ordinary = [j for j in range(len(source.ids)) if not source.special[j]]
        # the row of target token i − 1 holds it and writes source token i next (the same text, shifted)
        own = [(i, j) for i in range(len(target.ids)) for j in ordinary
               if not target.special[i] and target.ids[i] == source.ids[j]]
        written = [(i, j) for i in range(len(target.ids)) for j in ordinary
                   if not source.special[i] and source.ids[i] == source.ids[j]]
        later_specials = [j for j in range(1, len(source.ids)) if source.special[j]]
        punctuation = [j for j, label in enumerate(source.labels) if label in (".", ",")]
        assert own and written and later_specials and punctuation
        for layer in range(2):
            for head in range(8):
                weights = run.cross_attention[layer, head]
                per_row = weights.shape[0] * len(TEXTS)  # a mean over the rows, then over the texts
                expected["cross_own"][layer, head] += share_on(weights, own) / len(TEXTS)
                expected["cross_next"][layer, head] += share_on(weights, written) / len(TEXTS)
                expected["sink"][layer, head] += weights[:, 0].sum(dtype=np.float64) / per_row
                expected["clark_sep"][layer, head] += weights[:, later_specials].sum(dtype=np.float64) / per_row
                expected["clark_punct"][layer, head] += weights[:, punctuation].sum(dtype=np.float64) / per_row
                expected["entropy"][layer, head] += row_entropy(weights, causal=False) / len(TEXTS)
    for key, grid in expected.items():
        np.testing.assert_allclose(result.grid(key), grid, atol=2e-6, err_msg=key)
    assert np.all(result.counts["cross_next"] == 2)


def test_what_does_not_apply_to_cross_attention_is_said_not_scored(model):
    result = census(model, "cross")
    within = {"induction", "induction_stripe", "previous", "duplicate", "clark_self", "clark_next", "clark_prev"}
    assert set(result.not_applicable) == within
    assert all("within one text only" in why for why in result.not_applicable.values())
    assert within.isdisjoint(result.measures) and np.isnan(result.grid("previous")).all()
    assert result.ranked("previous") == []
    assert "previous token: does not apply (within one text only" in "\n".join(summary_lines(result))
    assert "previous" not in census_csv(result).splitlines()[0].split(",")
    assert '"not_applicable"' in census_json(result)
    with pytest.raises(OptionsError, match="none of the measures asked for applies"):
        census(model, "cross", ("previous", "duplicate"))


@pytest.mark.parametrize("part", ["encoder", "decoder"])
def test_each_stack_s_self_attention_is_measured_as_a_one_text_model_s(model, part):
    result = census(model, part)
    causal = part == "decoder"
    assert set(result.not_applicable) == {"cross_own", "cross_next"}
    assert "cross-attention only" in result.not_applicable["cross_own"]
    previous, entropy, first = (np.zeros((2, result.n_heads)) for _ in range(3))
    for text in TEXTS:
        run = model.run(text, text)
        attention = run.decoder_attention if causal else run.encoder_attention
        for layer in range(2):
            for head in range(result.n_heads):
                weights = attention[layer, head]
                n = weights.shape[0]
                previous[layer, head] += share_on(weights, [(i, i - 1) for i in range(1, n)]) / len(TEXTS)
                entropy[layer, head] += row_entropy(weights, causal) / len(TEXTS)
                first[layer, head] += weights[:, 0].sum(dtype=np.float64) / n / len(TEXTS)
    np.testing.assert_allclose(result.grid("previous"), previous, atol=2e-6)
    np.testing.assert_allclose(result.grid("entropy"), entropy, atol=2e-6)
    np.testing.assert_allclose(result.grid("clark_first"), first, atol=2e-6)
    if causal:
        assert np.all(result.grid("clark_next") == 0)  # a decoder never reads ahead


def test_each_part_is_kept_apart_in_the_cache(model):
    fingerprints = {subject_for(EncoderDecoderPart(model, part)).fingerprint() for part in ("encoder", "decoder",
                                                                                             "cross")}
    assert len(fingerprints) == 3
