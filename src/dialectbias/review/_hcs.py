"""The Human Consistency Score (HCS) of judges (BanglaVerse §4.3, the 0–100 rubric of E Sobhani et al.
(2026)), from the `judge_consistency` queue's ratings.

One rating of a judgment is the sum of its three components: decision accuracy (0–50) + reasoning alignment
(0–40) + explanation clarity (0–10). A judgment rated by several people scores the mean of their ratings
(each person's latest), so a judgment counts once however many rated it; a judge's HCS over a set of
judgments is the mean of their scores, and each component's mean is reported alongside (they add up to the
HCS). Per judge × model, and per judge over all models (`model = all`). Only current judgments of the
experiment's judges on its models count; ratings of judgments that are no longer current (a setting
changed) and unreadable ratings are counted apart, never mixed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dialectbias.review._kind_consistency import HCS_COMPONENTS, HCS_KIND, parse_component
from dialectbias.store import Store, iter_judgments, latest_annotations

ALL_MODELS = "all"
HCS_COLUMNS = ("judge", "model", "n", "ratings", "annotators", *(name for name, _, _ in HCS_COMPONENTS), "hcs")
HCS_LEGEND = {
    "judge": "the judge", "model": "the model whose captions it judged; all = every model",
    "n": "judgments rated by at least one person (each counts once)",
    "ratings": "ratings of them (each person's latest)", "annotators": "people who rated them",
    "decision_accuracy": "mean points for a correct quality judgment (0–50)",
    "reasoning_alignment": "mean points for analysis consistent with the decision (0–40)",
    "explanation_clarity": "mean points for a clear, well-justified explanation (0–10)",
    "hcs": "Human Consistency Score (0–100): the mean over judgments of the mean over their raters of the "
           "three components' sum (BanglaVerse §4.3)",
}


def judgment_score(ratings: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """One judgment's component means and HCS over its (readable) ratings; ValueError on a bad rating."""
    if not ratings:
        raise ValueError("a judgment without ratings has no score")
    out: dict[str, float] = {}
    for name, top, _ in HCS_COMPONENTS:
        out[name] = sum(parse_component(r.get(name), top) for r in ratings) / len(ratings)
    out["hcs"] = sum(out[name] for name, _, _ in HCS_COMPONENTS)
    return out


def mean_scores(scores: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of judgment scores, component by component and of the HCS."""
    keys = [*(name for name, _, _ in HCS_COMPONENTS), "hcs"]
    return {k: sum(s[k] for s in scores) / len(scores) for k in keys}


@dataclass
class HCSTable:
    """The HCS rows (`HCS_COLUMNS`) and what was left out: ratings of judgments that are not current
    judgments of these judges and models (`stale`), and ratings missing a component (`unreadable`)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    ratings: int = 0
    stale: int = 0
    unreadable: list[str] = field(default_factory=list)


def hcs_table(store: Store, judge_ids: Sequence[str], model_ids: Sequence[str]) -> HCSTable:
    """Per judge × model and per judge (`model = all`): the HCS of the rated judgments (see the module)."""
    by_target: dict[str, dict[str, Mapping[str, Any]]] = {}
    table = HCSTable()
    for (target, annotator), latest in latest_annotations(store, HCS_KIND).items():
        table.ratings += 1
        try:
            judgment_score([latest.value])
        except ValueError as exc:
            table.unreadable.append(f"{target} by {annotator}: {exc}")
            continue
        by_target.setdefault(target, {})[annotator] = latest.value
    used: set[str] = set()
    for judge in judge_ids:
        per_model: dict[str, list[tuple[dict[str, float], dict[str, Mapping[str, Any]]]]] = {}
        for record in iter_judgments(store, judge, model_ids):
            rated = by_target.get(record.request_id)
            if rated:
                used.add(record.request_id)
                per_model.setdefault(record.model_id, []).append((judgment_score(list(rated.values())), rated))
        everything = [x for model in sorted(per_model) for x in per_model[model]]
        for model, scored in [*sorted(per_model.items()), *([(ALL_MODELS, everything)] if everything else [])]:
            people = {a for _, rated in scored for a in rated}
            table.rows.append({"judge": judge, "model": model, "n": len(scored),
                               "ratings": sum(len(rated) for _, rated in scored), "annotators": len(people),
                               **mean_scores([s for s, _ in scored])})
    table.stale = sum(len(v) for k, v in by_target.items() if k not in used)
    return table
