"""What a task's report shows of the human review: agreement between annotators, each judge's calibration
against the human scores per dialect (with the previous snapshot for the trend), warnings for judges below
the thresholds, and where the experiment routes a miscalibrated dialect (`review.on_miscalibrated`, see
`_routing`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dialectbias.config import Experiment
from dialectbias.judges import Rubric
from dialectbias.review._calibration import ALL, annotator_agreement, judge_calibration, snapshot_history
from dialectbias.review._routing import calibration_alert
from dialectbias.review._setup import primary_routes, review_config, thresholds_of
from dialectbias.store import Store, human_score_label

if TYPE_CHECKING:
    import pandas as pd

ANNOTATOR_AGREEMENT_LEGEND = {
    "queue": "the review queue", "value": "what was rated (a rubric field, the score, a label, an error category)",
    "dialect": "the items' dialect; all = every dialect", "pair": "two annotators (kappa), or all (alpha)",
    "n": "items both rated (pair) / items rated by two or more (all)",
    "kappa": "Cohen's kappa of the pair, quadratic-weighted for scores and labels, unweighted for categories",
    "alpha": "Krippendorff's alpha over every annotator (interval, ordinal or nominal by the value)",
    "note": "why a value is missing"}
JUDGE_CALIBRATION_LEGEND = {
    "judge": "the judge", "rubric": "its rubric", "dialect": "the dialect; all = every dialect",
    "n": "judgments with a human score", "multi": "of those, judgments two or more annotators scored (the human "
    "score is then their mean or the latest, review.human_score)", "human_score": "which human score is used "
    "(review.human_score: mean over annotators, or the latest stored)",
    "ccc": "Lin's CCC of the judge's score vs the human score",
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
    human: str = ""  # which human score the calibration uses (`human_score_label`)


def review_summary(store: Store, exp: Experiment, rubrics: Mapping[str, Rubric]) -> ReviewSummary:
    """Agreement and calibration as report tables (computed now; routing follows the latest snapshot)."""
    import pandas as pd

    thresholds = thresholds_of(exp)
    config = review_config(exp, rubrics, store)
    agreement = pd.DataFrame(annotator_agreement(store, config),
                             columns=["queue", "value", "dialect", "pair", "n", "kappa", "alpha", "note"])
    mode = exp.review.human_score
    rows = judge_calibration(store, [j.id for j in exp.judges], [m.id for m in exp.models], rubrics, thresholds,
                             human=mode)
    history = snapshot_history(store)
    previous = {(h["judge"], h["dialect"]): h["ccc"] for h in history}
    table = pd.DataFrame([{**r.as_dict(), "human_score": mode, "previous_ccc": previous.get((r.judge, r.dialect)),
                           "below": ", ".join(r.below) or r.note} for r in rows],
                         columns=["judge", "rubric", "dialect", "n", "multi", "human_score", "ccc", "cbs", "kappa",
                                  "previous_ccc", "below"])
    primary = exp.primary_judge.id if exp.primary_judge else None
    routes = primary_routes(store, exp)
    warnings = [calibration_alert(r, primary, exp.review.on_miscalibrated, routes) for r in rows
                if r.below and r.dialect != ALL]
    return ReviewSummary(agreement, table, warnings, len({h["taken_at"] for h in history}), human_score_label(mode))


def routed_to_judge(store: Store, exp: Experiment) -> dict[str, str]:
    """dialect -> the judge whose scores replace the primary judge's there (`review.on_miscalibrated: <judge
    id>`, in the dialects the primary judge is miscalibrated in and that judge is not)."""
    return {d: r.judge for d, r in primary_routes(store, exp).items() if r.judge is not None}
