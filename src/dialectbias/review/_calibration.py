"""Agreement between annotators and calibration of every judge against the human scores, per dialect
(SPEC §6; beyond the papers: the Bengali paper's Table 5 statistics, §3.4, applied judge-vs-human).

- Annotators: for each queue and each rated value, quadratic-weighted Cohen's kappa for every pair of
  annotators (unweighted for nominal values) and Krippendorff's alpha over all of them (interval, ordinal or
  nominal by the value), overall and per dialect. Each annotator's latest annotation of a target counts.
- Judges: the human score of a (model, item, variant) comes from the `judgment_override`s of any judgment of
  it on the same rubric (the CSV import's and the app's alike): by `review.human_score`, the mean over
  annotators of each one's latest (default), or the latest stored whoever gave it; each
  judge's own score is compared with it per dialect: Lin's CCC, CBS with the human as the reference (critical
  = human score below 40% of the rubric's range: 4.0 on RLAIF's 0–10), and quadratic-weighted kappa of the
  rubric's Likert fields (the mean over fields; human means rounded). A judge is *miscalibrated* for a
  dialect when one of them falls below the experiment's thresholds (`review.min_ccc`, `min_cbs`,
  `min_kappa`) over at least `review.calibration_min_pairs` judgments. Snapshots are stored over time.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any, Literal

from dialectbias.judges import Rubric
from dialectbias.review._kinds import ReviewConfig, queue_kinds
from dialectbias.review._rubrics import rubric_named
from dialectbias.store import (
    HUMAN_SCORE_MODES,
    SnapshotRow,
    Store,
    annotated_judgment_variants,
    assigned_dialects,
    iter_judgments,
    judgment_overrides,
    latest_annotations,
    save_snapshot_rows,
    snapshot_rows,
)

ALL = "all"
#: CBS's critical set: human scores below this share of the rubric's range (RLAIF: 4.0 of 10, SPEC §4 P3)
CRITICAL_SHARE = 0.4


@dataclass(frozen=True)
class Thresholds:
    min_ccc: float = 0.8
    min_cbs: float = 0.75
    min_kappa: float = 0.6
    min_pairs: int = 5


# -- annotators ------------------------------------------------------------------------------------------


def _dialects_of_targets(store: Store) -> dict[str, str]:
    return annotated_judgment_variants(store) | assigned_dialects(store)


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 4)


def annotator_agreement(store: Store, config: ReviewConfig, *, min_pairs: int | None = None) -> list[dict[str, Any]]:
    """Rows (queue, value, dialect, pair, n, kappa, alpha, note): a row per pair of annotators with their kappa,
    and a row `pair = all` with Krippendorff's alpha over every annotator, per dialect and overall (`min_pairs`:
    default `metrics.MIN_PAIRS`)."""
    from dialectbias.metrics import MIN_PAIRS  # numpy and the metrics load when agreement is computed

    min_pairs = MIN_PAIRS if min_pairs is None else min_pairs
    dialect_of = _dialects_of_targets(store)
    rows: list[dict[str, Any]] = []
    for kind in queue_kinds().values():
        latest = latest_annotations(store, kind.annotation_kind)
        by_rating: dict[Any, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
        for (target, annotator), (value, _, _) in latest.items():
            try:
                ratings = kind.ratings(config, value)
            except (KeyError, TypeError, ValueError):
                continue
            for rating, v in ratings.items():
                if v is not None:
                    by_rating[rating][target][annotator] = v
        for rating in sorted(by_rating, key=lambda r: (r.name == "score", r.name)):
            units = by_rating[rating]
            scopes: dict[str, dict[str, dict[str, Any]]] = {}
            for target, values in units.items():
                scopes.setdefault(dialect_of.get(target, "?"), {})[target] = values
            scopes = {d: scopes[d] for d in sorted(scopes)} | {ALL: units}
            for scope, scoped in scopes.items():
                rows += _agreement_rows(kind.name, rating, scope, scoped, min_pairs)
    return rows


def _agreement_rows(queue: str, rating: Any, scope: str, units: Mapping[str, Mapping[str, Any]],
                    min_pairs: int) -> list[dict[str, Any]]:
    from dialectbias.metrics import cohen_kappa, krippendorff_alpha

    people = sorted({a for values in units.values() for a in values})
    if len(people) < 2:
        return []
    out = []
    weights: Literal["quadratic"] | None = None if rating.level == "nominal" else "quadratic"
    for a, b in combinations(people, 2):
        pairs = [(v[a], v[b]) for v in units.values() if a in v and b in v]
        if not pairs:
            continue
        kappa, note = math.nan, ""
        if rating.labels or rating.level == "nominal":
            x, y = zip(*pairs, strict=True)
            labels = list(rating.labels) or None
            kappa = cohen_kappa(list(x), list(y), weights, labels, min_pairs=min_pairs)
        else:
            note = "continuous value: alpha only"
        if len(pairs) < min_pairs:
            note = f"fewer than {min_pairs} items in common"
        out.append({"queue": queue, "value": rating.name, "dialect": scope, "pair": f"{a} ~ {b}", "n": len(pairs),
                    "kappa": _num(kappa), "alpha": None, "note": note})
    matrix = [[units[t].get(p) for t in sorted(units)] for p in people]
    shared = sum(1 for t in units if len(units[t]) >= 2)
    alpha = krippendorff_alpha(matrix, rating.level, min_pairs=min_pairs)
    out.append({"queue": queue, "value": rating.name, "dialect": scope, "pair": ALL, "n": shared, "kappa": None,
                "alpha": _num(alpha), "note": "" if shared >= min_pairs else f"fewer than {min_pairs} items with two "
                                                                               "or more annotators"})
    return out


# -- judges against humans -------------------------------------------------------------------------------


@dataclass
class CalibrationRow:
    judge: str
    rubric: str
    dialect: str
    n: int
    ccc: float | None
    cbs: float | None
    kappa: float | None
    below: list[str] = field(default_factory=list)
    note: str = ""
    multi: int = 0  # of the n, judgments whose human score comes from two or more annotators

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"below": ", ".join(self.below)}


def human_scores(store: Store, mode: str = "mean") -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """(rubric, model, item, variant) -> {"score", "fields": {field: value}, "annotators": n}: the human score
    of an answer on a rubric from the overrides of any judgment of it, as `review.human_score` (`mode`) says:
    `mean` = the mean over annotators of each one's latest override, `latest` = the latest override stored,
    whoever gave it. `annotators` counts the annotators with a score either way."""
    import numpy as np

    if mode not in HUMAN_SCORE_MODES:
        raise ValueError(f"human score {mode!r}: one of {', '.join(HUMAN_SCORE_MODES)}")
    per_key: dict[tuple[str, str, str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    last: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for o in judgment_overrides(store):
        value = json.loads(o.value_json)
        if not isinstance(value, dict) or value.get("score") is None:
            continue
        key = (o.rubric, o.model_id, o.item_id, o.variant)
        per_key[key].pop(o.annotator, None)  # re-inserted: the dict keeps annotators in order of their latest
        per_key[key][o.annotator] = value
        last[key] = value
    out: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for key, by_annotator in per_key.items():
        values = list(by_annotator.values()) if mode == "mean" else [last[key]]
        fields: dict[str, list[float]] = defaultdict(list)
        for v in values:
            for name, x in (v.get("fields") or {}).items():
                if isinstance(x, int | float) and not isinstance(x, bool):
                    fields[name].append(float(x))
        out[key] = {"score": float(np.mean([v["score"] for v in values])),
                    "fields": {k: float(np.mean(xs)) for k, xs in fields.items()}, "annotators": len(by_annotator)}
    return out


def judge_calibration(store: Store, judge_ids: Sequence[str], model_ids: Sequence[str],
                      rubrics: Mapping[str, Rubric], thresholds: Thresholds = Thresholds(), *,
                      human: str = "mean") -> list[CalibrationRow]:
    """Each judge's agreement with the human scores (`human`: mean or latest, see `human_scores`), per dialect
    and overall (see the module docstring)."""
    humans = human_scores(store, human)
    rows: list[CalibrationRow] = []
    if not humans:
        return rows
    for judge in judge_ids:
        pairs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
        rubric_name = ""
        for record in iter_judgments(store, judge, list(model_ids)):
            scores = humans.get((record.rubric, record.model_id, record.item_id, record.variant))
            if scores is None or record.score is None:
                continue
            rubric_name = record.rubric
            judged: dict[str, Any] = {"score": record.score, "fields": record.parsed or {}}
            pairs[record.variant].append((judged, scores))
            pairs[ALL].append((judged, scores))
        rubric = rubric_named({judge: rubrics[judge]} if judge in rubrics else rubrics, rubric_name)
        for dialect in sorted(pairs, key=lambda d: (d == ALL, d)):
            rows.append(_calibration_row(judge, rubric, rubric_name, dialect, pairs[dialect], thresholds))
    return rows


def _calibration_row(judge: str, rubric: Rubric | None, rubric_name: str, dialect: str,
                     pairs: list[tuple[dict[str, Any], dict[str, Any]]], t: Thresholds) -> CalibrationRow:
    import numpy as np

    from dialectbias.metrics import cohen_kappa, critical_bias_sensitivity, lin_ccc

    j = [p[0]["score"] for p in pairs]
    h = [p[1]["score"] for p in pairs]
    lo, hi = (rubric.score_bounds if rubric is not None and rubric.score_bounds else (0.0, 10.0))
    span = (hi - lo) or 1.0
    ccc = lin_ccc(h, j, min_pairs=t.min_pairs)
    cbs = critical_bias_sensitivity(h, j, threshold=lo + CRITICAL_SHARE * span, scale=span, min_pairs=t.min_pairs)
    kappas = []
    for f in rubric.numeric_fields if rubric is not None else ():
        if f.type != "integer" or f.minimum is None or f.maximum is None:
            continue
        labels = list(range(int(f.minimum), int(f.maximum) + 1))
        xs = [(p[0]["fields"].get(f.name), p[1]["fields"].get(f.name)) for p in pairs]
        xs = [(int(a), round(b)) for a, b in xs if isinstance(a, int | float) and isinstance(b, int | float)]
        if xs:
            a, b = zip(*xs, strict=True)
            k = cohen_kappa(list(a), list(b), "quadratic", labels, min_pairs=t.min_pairs)
            if not math.isnan(k):
                kappas.append(k)
    kappa = float(np.mean(kappas)) if kappas else None
    row = CalibrationRow(judge, rubric_name, dialect, len(pairs), _num(ccc), _num(cbs), _num(kappa),
                         multi=sum(p[1]["annotators"] >= 2 for p in pairs))
    if len(pairs) < t.min_pairs:
        row.note = f"fewer than {t.min_pairs} human-scored judgments: not checked"
        return row
    row.below = below_thresholds(row.ccc, row.cbs, row.kappa, t)
    return row


def below_thresholds(ccc: float | None, cbs: float | None, kappa: float | None, t: Thresholds) -> list[str]:
    """The thresholds a calibration misses, as `name value < bar` (an undefined value is not checked)."""
    checks = (("ccc", ccc, t.min_ccc), ("cbs", cbs, t.min_cbs), ("kappa", kappa, t.min_kappa))
    return [f"{name} {value:.3f} < {bar:g}" for name, value, bar in checks if value is not None and value < bar]


# -- snapshots -------------------------------------------------------------------------------------------


def save_snapshot(store: Store, rows: Iterable[CalibrationRow], thresholds: Thresholds, *,
                  now: float | None = None) -> int:
    """Store one calibration snapshot (all rows share its time); returns the number of rows."""
    taken = time.time() if now is None else now
    return save_snapshot_rows(store, [SnapshotRow(taken, r.judge, r.rubric, r.dialect, r.n, r.ccc, r.cbs, r.kappa,
                                                  r.below) for r in rows], asdict(thresholds))


def snapshot_history(store: Store, judge: str | None = None) -> list[dict[str, Any]]:
    """Every stored snapshot row, oldest first."""
    return [{"taken_at": r.taken_at, "judge": r.judge_id, "rubric": r.rubric, "dialect": r.dialect, "n": r.n,
             "ccc": r.ccc, "cbs": r.cbs, "kappa": r.kappa, "below": r.below} for r in snapshot_rows(store, judge)]
