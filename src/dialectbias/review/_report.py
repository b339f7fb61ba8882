"""What a task's report shows of the human review: agreement between annotators, each judge's calibration
against the human scores per dialect (with the previous snapshot for the trend), warnings for judges below
the thresholds, and where the experiment routes a miscalibrated dialect (`review.on_miscalibrated`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from dialectbias.config import Experiment
from dialectbias.judges import Rubric
from dialectbias.review._calibration import ALL, annotator_agreement, judge_calibration, snapshot_history
from dialectbias.review._setup import ROUTE_REVIEW, ROUTE_WARN, miscalibrated_now, review_config, thresholds_of
from dialectbias.store import Store

ANNOTATOR_AGREEMENT_LEGEND = {
    "queue": "the review queue", "value": "what was rated (a rubric field, the score, a label, an error category)",
    "dialect": "the items' dialect; all = every dialect", "pair": "two annotators (kappa), or all (alpha)",
    "n": "items both rated (pair) / items rated by two or more (all)",
    "kappa": "Cohen's kappa of the pair, quadratic-weighted for scores and labels, unweighted for categories",
    "alpha": "Krippendorff's alpha over every annotator (interval, ordinal or nominal by the value)",
    "note": "why a value is missing"}
JUDGE_CALIBRATION_LEGEND = {
    "judge": "the judge", "rubric": "its rubric", "dialect": "the dialect; all = every dialect",
    "n": "judgments with a human score", "ccc": "Lin's CCC of the judge's score vs the human score",
    "cbs": "Critical Bias Sensitivity with the human as the reference (critical: human score below 40% of the range)",
    "kappa": "quadratic-weighted Cohen's kappa of the rubric's Likert fields (mean over fields)",
    "previous_ccc": "the CCC of the latest stored snapshot (`dialectbias review calibration`); — = none",
    "below": "thresholds the judge misses for this dialect, or why it was not checked"}


@dataclass
class ReviewSummary:
    agreement: pd.DataFrame
    calibration: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    snapshots: int = 0


def review_summary(store: Store, exp: Experiment, rubrics: Mapping[str, Rubric]) -> ReviewSummary:
    """Agreement and calibration as report tables (computed now; routing follows the latest snapshot)."""
    thresholds = thresholds_of(exp)
    config = review_config(exp, rubrics, store)
    agreement = pd.DataFrame(annotator_agreement(store, config),
                             columns=["queue", "value", "dialect", "pair", "n", "kappa", "alpha", "note"])
    rows = judge_calibration(store, [j.id for j in exp.judges], [m.id for m in exp.models], rubrics, thresholds)
    history = snapshot_history(store)
    previous = {(h["judge"], h["dialect"]): h["ccc"] for h in history}
    table = pd.DataFrame([{**r.as_dict(), "previous_ccc": previous.get((r.judge, r.dialect)),
                           "below": ", ".join(r.below) or r.note} for r in rows],
                         columns=["judge", "rubric", "dialect", "n", "ccc", "cbs", "kappa", "previous_ccc", "below"])
    warnings = []
    route = exp.review.on_miscalibrated
    for r in rows:
        if r.below and r.dialect != ALL:
            then = {ROUTE_WARN: "", ROUTE_REVIEW: " (review.on_miscalibrated: review)"}.get(
                route, f" (review.on_miscalibrated: judge {route}'s scores are used for it)")
            warnings.append(f"judge {r.judge} falls below the thresholds for {r.dialect}: {', '.join(r.below)} "
                            f"over {r.n} human-scored judgments{then}")
    return ReviewSummary(agreement, table, warnings, len({h["taken_at"] for h in history}))


def routed_to_judge(store: Store, exp: Experiment) -> dict[str, str]:
    """dialect -> the judge whose scores replace the primary judge's there (`review.on_miscalibrated: <judge
    id>`, for the dialects the latest calibration snapshot found the primary judge below a threshold)."""
    primary = exp.primary_judge
    route = exp.review.on_miscalibrated
    if primary is None or route in (ROUTE_WARN, ROUTE_REVIEW) or route == primary.id:
        return {}
    return {dialect: route for judge, dialect in miscalibrated_now(store, exp, primary.id) if judge == primary.id}
