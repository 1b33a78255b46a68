"""A census as a table (CSV: one row per head, one column per measure), as JSON (everything,
with the best examples and any ablation), and as a few lines for people."""

from __future__ import annotations

import csv
import io
import json

from .measures import BY_KEY
from .result import CensusResult


def census_csv(result: CensusResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["layer", "head", *result.measures])
    for layer in range(result.n_layers):
        for head in range(result.n_heads):
            writer.writerow([layer + 1, head + 1, *(_number(result.scores[m][layer, head]) for m in result.measures)])
    return buffer.getvalue()


def census_json(result: CensusResult, ablation: dict | None = None, top: int = 10) -> str:
    """The result as JSON, with each measure's top heads ranked (1-based, as on screen) and, when
    given, the effect of switching heads off (AblationEffect.to_dict())."""
    data = result.to_dict()
    data["ranked"] = {m: [{"layer": s.layer + 1, "head": s.head + 1, "score": s.score}
                          for s in result.ranked(m, top)] for m in result.measures}
    data["sink_rate"] = result.sink_rate()
    if ablation is not None:
        data["ablation"] = ablation
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def summary_lines(result: CensusResult, top: int = 3) -> list[str]:
    """'induction: L5 H1 0.62, L4 H7 0.55, …' for each measure, why each measure asked for that does
    not apply to these heads does not, then the texts and the time."""
    lines = [f"{BY_KEY[m].title}: " + _leaders(result, m, top) for m in result.measures]
    lines += [f"{BY_KEY[m].title}: does not apply ({why})" for m, why in result.not_applicable.items()]
    lines.append(f"{result.texts} texts, {result.tokens:,} tokens, {result.seconds:.1f} s ({result.source})")
    return lines


def _leaders(result: CensusResult, measure: str, top: int) -> str:
    ranked = result.ranked(measure)
    if not ranked:
        return "no text informed it"
    if all(s.score == 0 for s in ranked):
        return "0 for every head"
    return ", ".join(s.label() for s in ranked[:top])


def _number(value: float) -> str:
    return "" if value != value else repr(float(value))  # NaN (no text informed the head): an empty cell
