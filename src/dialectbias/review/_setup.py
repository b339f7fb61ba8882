"""The review settings of an experiment: which judge's judgments are reviewed, the overlap, the calibration
thresholds, and the dialects routed to review because the primary judge is miscalibrated there."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dialectbias.config import Experiment
from dialectbias.dialects import language_of
from dialectbias.judges import Rubric
from dialectbias.review._calibration import ALL, Thresholds, snapshot_history
from dialectbias.review._kinds import ReviewConfig
from dialectbias.store import Store

ROUTE_WARN, ROUTE_REVIEW = "warn", "review"


def thresholds_of(exp: Experiment) -> Thresholds:
    r = exp.review
    return Thresholds(min_ccc=r.min_ccc, min_cbs=r.min_cbs, min_kappa=r.min_kappa, min_pairs=r.calibration_min_pairs)


def miscalibrated_now(store: Store, exp: Experiment, judge: str | None = None) -> set[tuple[str, str]]:
    """(judge, dialect) pairs whose latest calibration snapshot misses the experiment's thresholds as they are
    *now* (`review.min_ccc`, `min_cbs`, `min_kappa`, `calibration_min_pairs`): the snapshot keeps the measures,
    the thresholds come from the experiment file, so editing them re-routes without a new snapshot. `all`
    (every dialect) is never routed."""
    t = thresholds_of(exp)
    rows = snapshot_history(store, judge)
    latest = {r["judge"]: r["taken_at"] for r in rows}  # oldest first: the last time seen is the latest
    out: set[tuple[str, str]] = set()
    for r in rows:
        if r["taken_at"] != latest[r["judge"]] or r["dialect"] == ALL or r["n"] < t.min_pairs:
            continue
        measures = ((r["ccc"], t.min_ccc), (r["cbs"], t.min_cbs), (r["kappa"], t.min_kappa))
        if any(value is not None and value < bar for value, bar in measures):
            out.add((r["judge"], r["dialect"]))
    return out


def routed_to_review(store: Store, exp: Experiment) -> set[tuple[str, str]]:
    """With `review.on_miscalibrated: review`: the (primary judge, dialect) pairs whose every judgment goes to
    the review queue (`miscalibrated_now`); otherwise none."""
    judge = exp.primary_judge.id if exp.primary_judge else None
    if judge is None or exp.review.on_miscalibrated != ROUTE_REVIEW:
        return set()
    return miscalibrated_now(store, exp, judge)


def store_language(store: Store, extra: Mapping[str, list[str]] | None = None) -> str:
    """The language of the experiment's items: that of their first registered dialect (default Bengali)."""
    for (variants,) in store.query("SELECT variants FROM items LIMIT 50"):
        for name in json.loads(variants):
            lang = language_of(name, dict(extra or {}))
            if lang:
                return lang
    return "bn"


def review_config(exp: Experiment, rubrics: Mapping[str, Rubric], store: Store, judge_id: str | None = None, *,
                  translations: Callable[[Store], Iterable[Any]] | None = None, judged: Sequence[str] = (),
                  judgment_panels: Callable[[Store, Any], list[Any]] | None = None) -> ReviewConfig:
    """The queue kinds' view of an experiment: the judgments of `judge_id` (default: the primary judge) are
    reviewed; with `review.on_miscalibrated: review`, every judgment of that judge in a dialect its latest
    calibration snapshot found below a threshold goes to review too. `translations`: the task's own
    post-processed translations (see `_kind_translations`), else the raw `translate` stage results. `judged`:
    what else than `models:` the judges judged (translation_quality's systems), `judgment_panels` how to show
    it (see `ReviewConfig`)."""
    judge = judge_id or (exp.primary_judge.id if exp.primary_judge else None)
    routed: set[tuple[str, str]] = set()
    if judge and exp.review.on_miscalibrated == ROUTE_REVIEW:
        routed = miscalibrated_now(store, exp, judge)
    return ReviewConfig(judge_ids=[judge] if judge else [], model_ids=[*(m.id for m in exp.models), *judged],
                        rubrics=dict(rubrics), overlap=exp.review.overlap, routed=routed, dialects=dict(exp.dialects),
                        language=store_language(store, exp.dialects), translations=translations,
                        judgment_panels=judgment_panels)
