"""The review settings of an experiment: which judge's judgments are reviewed, the overlap, the calibration
thresholds, and the dialects routed to review because the primary judge is miscalibrated there."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dialectbias.config import Experiment
from dialectbias.dialects import language_of
from dialectbias.judges import Rubric
from dialectbias.review._calibration import Thresholds
from dialectbias.review._kinds import ReviewConfig
from dialectbias.review._routing import ROUTE_REVIEW, ROUTE_WARN, Route, miscalibrated_routes, verdicts
from dialectbias.store import Store, first_item_variants

__all__ = ["ROUTE_REVIEW", "ROUTE_WARN", "miscalibrated_now", "primary_routes", "review_config", "routed_to_review",
           "store_language", "thresholds_of"]


def thresholds_of(exp: Experiment) -> Thresholds:
    r = exp.review
    return Thresholds(min_ccc=r.min_ccc, min_cbs=r.min_cbs, min_kappa=r.min_kappa, min_pairs=r.calibration_min_pairs)


def miscalibrated_now(store: Store, exp: Experiment, judge: str | None = None) -> set[tuple[str, str]]:
    """(judge, dialect) pairs whose latest calibration snapshot misses the experiment's thresholds as they are
    now (the snapshot keeps the measures; `all` is never routed). `judge`: that judge only, else every judge
    of the experiment."""
    t = thresholds_of(exp)
    return {(j, d) for j in ([judge] if judge else [j.id for j in exp.judges])
            for d, v in verdicts(store, j, t).items() if v.below}


def primary_routes(store: Store, exp: Experiment) -> dict[str, Route]:
    """dialect -> where the primary judge's scores go in each dialect it is miscalibrated in, by the latest
    calibration snapshot and the experiment's current thresholds (see `_routing`)."""
    primary = exp.primary_judge
    return miscalibrated_routes(store, primary.id if primary else None, exp.review.on_miscalibrated,
                                thresholds_of(exp))


def routed_to_review(store: Store, exp: Experiment) -> set[tuple[str, str]]:
    """(primary judge, dialect) pairs whose every judgment goes to the review queue: `on_miscalibrated:
    review`, or a fallback judge that is not calibrated in that dialect itself (`_routing`)."""
    primary = exp.primary_judge
    if primary is None:
        return set()
    return {(primary.id, d) for d, r in primary_routes(store, exp).items() if r.judge is None}


def store_language(store: Store, extra: Mapping[str, list[str]] | None = None) -> str:
    """The language of the experiment's items: that of their first registered dialect (default Bengali)."""
    for variants in first_item_variants(store):
        for name in variants:
            lang = language_of(name, dict(extra or {}))
            if lang:
                return lang
    return "bn"


def review_config(exp: Experiment, rubrics: Mapping[str, Rubric], store: Store, judge_id: str | None = None, *,
                  translations: Callable[[Store], Iterable[Any]] | None = None, judged: Sequence[str] = (),
                  judgment_panels: Callable[[Store, Any], list[Any]] | None = None) -> ReviewConfig:
    """The queue kinds' view of an experiment: the judgments of `judge_id` (default: the primary judge) are
    reviewed; with `review.on_miscalibrated: review`, every judgment of that judge in a dialect its latest
    calibration snapshot found below a threshold goes to review too, and so do the primary judge's with
    `on_miscalibrated: <judge id>` where that judge is not calibrated itself (`_routing`). `translations`: the
    task's own post-processed translations (see `_kind_translations`). `judged`: what else than `models:` the
    judges judged (e.g. a task's systems), `judgment_panels` how to show it (see `ReviewConfig`)."""
    judge = judge_id or (exp.primary_judge.id if exp.primary_judge else None)
    routed: set[tuple[str, str]] = set()
    if judge and exp.primary_judge is not None and judge == exp.primary_judge.id:
        routed = routed_to_review(store, exp)
    elif judge and exp.review.on_miscalibrated == ROUTE_REVIEW:
        routed = miscalibrated_now(store, exp, judge)
    return ReviewConfig(judge_ids=[judge] if judge else [], model_ids=[*(m.id for m in exp.models), *judged],
                        rubrics=dict(rubrics), overlap=exp.review.overlap, routed=routed, dialects=dict(exp.dialects),
                        language=store_language(store, exp.dialects), translations=translations,
                        judgment_panels=judgment_panels)
