"""The tables of a translation_quality experiment (Bengali dialect-bias paper §4.1): Table 2 (per system ×
dialect: N and every metric and judge, with bootstrap CIs), Table 3 (each metric against the human 0–10
scores: Pearson r, Spearman ρ and Lin's CCC, overall and per dialect, with a trust mark), the per-row scores
and the dialect-ID verdicts.

Table 3 normalises every metric to [0, 1] first (paper §3.1.3 "All automated metrics were normalized to [0,1]";
SPEC §4 P2): BLEU and chrF /100, WER inverted (1 − min(WER, 100)/100, so higher is better for every metric),
BERTScore F1, COMET and cosine clipped to [0, 1], judges and humans /10. Pearson and Spearman do not change under
this; Lin's CCC does, which is why it is the paper's headline agreement figure.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dialectbias.metrics import TextNormalization, bootstrap_ci, bootstrap_corpus_score, lin_ccc, pearson, spearman
from dialectbias.review import latest_annotations
from dialectbias.store import Store, human_overrides, iter_judgments
from dialectbias.tasks.translation_quality._data import TQRow
from dialectbias.tasks.translation_quality._scores import Pair, scored_pairs

ALL = "all"
HUMAN_KIND = "translation_score"
CORPUS_METRICS = ("bleu", "chrf", "wer")
#: dialect-ID verdicts in table order
VERDICTS = ("ok", "other_dialect", "standard", "uncertain", "not_covered")


def target_id(row_key: str, system: str) -> str:
    """The review target of one system's translation of one row (translation_score annotations point at it)."""
    return f"tq:{row_key}:{system}"


def normalized(metric: str, value: float | None, *, invert_wer: bool = True) -> float | None:
    """A metric's value on [0, 1], higher = better (see the module docstring); `invert_wer` False: WER/100 as
    it is, lower = better (the paper's Table 3 sign, `options.wer_in_table3: error_rate`)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if metric in ("bleu", "chrf"):
        return min(max(value / 100.0, 0.0), 1.0)
    if metric == "wer":
        rate = min(max(value, 0.0), 100.0) / 100.0
        return 1.0 - rate if invert_wer else rate
    if metric in ("bertscore", "comet", "embedding"):
        return min(max(value, 0.0), 1.0)
    return min(max(value / 10.0, 0.0), 1.0)  # judges and humans, 0–10


@dataclass
class Judged:
    """One judgment: `score` after human review (a reviewer's override replaces the judge's, as in every
    table), `own` the judge's own score (what Table 3 validates)."""

    score: float | None
    clipped: bool
    status: str
    own: float | None = None
    reviewed: bool = False


@dataclass
class TQData:
    """Everything the tables are made of."""

    rows: list[TQRow]
    systems: list[str]
    metrics: list[str]
    local: dict[str, dict[Pair, float]]
    judges: dict[str, dict[Pair, Judged]] = field(default_factory=dict)
    human: dict[Pair, tuple[float, int]] = field(default_factory=dict)
    dialect_id: dict[Pair, dict[str, Any]] = field(default_factory=dict)
    human_score: str = "mean"  # review.human_score: how several annotators' scores of one target combine

    def columns(self) -> list[str]:
        """Every metric column: local metrics, then one per judge (`judge_<id>`)."""
        return [m for m in self.metrics if m != "judge"] + [f"judge_{j}" for j in self.judges]

    def item_value(self, column: str, pair: Pair, *, own: bool = False) -> float | None:
        """The row's value of a metric column; a judge's after human review, or its `own` score."""
        if column.startswith("judge_"):
            j = self.judges[column.removeprefix("judge_")].get(pair)
            return None if j is None else (j.own if own else j.score)
        value = self.local.get(column, {}).get(pair)
        return None if value is None or math.isnan(value) else value


def read_judges(store: Store, judge_ids: Sequence[str], systems: Sequence[str],
                human: str = "mean") -> dict[str, dict[Pair, Judged]]:
    """judge -> (row key, system) -> its judgment, a reviewer's score (`human`: review.human_score) replacing
    the judge's."""
    out: dict[str, dict[Pair, Judged]] = {}
    overrides = human_overrides(store, human)
    for judge in judge_ids:
        out[judge] = {}
        for j in iter_judgments(store, judge, list(systems)):
            score = overrides.get(j.request_id)
            out[judge][(j.item_id, j.model_id)] = Judged(j.score if score is None else score, bool(j.clipped),
                                                         j.parse_status, own=j.score, reviewed=score is not None)
    return out


def read_human(store: Store, rows: Sequence[TQRow], systems: Sequence[str],
               human: str = "mean") -> dict[Pair, tuple[float, int]]:
    """(row key, system) -> (human score 0–10, number of annotators): by `human` (review.human_score), the
    mean over annotators of each one's latest score, or the latest score stored whoever gave it."""
    wanted = {target_id(r.key, s): (r.key, s) for r in rows for s in systems}
    scores: dict[Pair, list[tuple[float, float]]] = defaultdict(list)
    for (target, _annotator), (value, _comment, at) in latest_annotations(store, HUMAN_KIND).items():
        pair = wanted.get(target)
        if pair is not None and isinstance(value.get("score"), int | float):
            scores[pair].append((at, float(value["score"])))
    if human == "latest":
        return {pair: (max(v)[1], len(v)) for pair, v in scores.items()}
    return {pair: (float(np.mean([x for _, x in v])), len(v)) for pair, v in scores.items()}


# -- Table 2 ----------------------------------------------------------------------------------------------------
def table2(data: TQData, norm: TextNormalization, *, failed_as_empty: bool, n_resamples: int, confidence: float,
           seed: int) -> list[dict[str, Any]]:
    """One row per system × dialect (and `all`): n, missing translations, corpus BLEU/chrF/WER and the mean of
    every other metric and judge, each with a percentile-bootstrap CI (none with `n_resamples` 0)."""
    out = []
    dialects = sorted({r.dialect for r in data.rows})
    for system in data.systems:
        for dialect in [*dialects, ALL]:
            rows = [r for r in data.rows if dialect in (ALL, r.dialect)]
            pairs = scored_pairs(rows, [system], failed_as_empty)
            rec: dict[str, Any] = {"system": system, "dialect": dialect, "n": len(pairs),
                                   "failed": sum(system in r.failed for r in rows),
                                   "missing": sum(system not in r.systems and system not in r.failed for r in rows)}
            for column in data.columns():
                if column in CORPUS_METRICS:
                    cs = bootstrap_corpus_score(column, [norm.apply(h) for _, _, h in pairs],  # type: ignore[arg-type]
                                                [norm.apply(r.reference) for r, _, _ in pairs],
                                                n_resamples=n_resamples, confidence=confidence, seed=seed)
                    value, lo, hi, n = cs.score, cs.ci_low, cs.ci_high, cs.n
                else:
                    values = [v for r, s, _ in pairs if (v := data.item_value(column, (r.key, s))) is not None]
                    n = len(values)
                    value = float(np.mean(values)) if values else math.nan
                    lo, hi = bootstrap_ci(values, n_resamples=n_resamples, confidence=confidence, seed=seed) \
                        if n >= 2 and n_resamples > 0 else (math.nan, math.nan)
                rec[column] = value
                rec[f"{column}_ci_low"], rec[f"{column}_ci_high"] = lo, hi
                if column.startswith("judge_"):
                    rec[f"{column}_n"] = n
                    judged = data.judges[column.removeprefix("judge_")]
                    rec[f"{column}_clipped"] = sum(1 for r, s, _ in pairs
                                                   if (j := judged.get((r.key, s))) is not None and j.clipped)
            out.append(rec)
    return out


# -- Table 3 ----------------------------------------------------------------------------------------------------
def table3(data: TQData, *, min_ccc: float, min_pairs: int, invert_wer: bool = True) -> list[dict[str, Any]]:
    """Each metric and judge against the normalised human scores, overall and per dialect: n, Pearson r,
    Spearman ρ, Lin's CCC, the mean normalised metric and human score, and `trusted` (CCC ≥ min_ccc; blank
    with fewer than `min_pairs` scored rows). `invert_wer` False: WER as an error rate (the paper's sign)."""
    if not data.human:
        return []
    dialect_of = {r.key: r.dialect for r in data.rows}
    dialects = sorted({dialect_of[k] for k, _ in data.human})
    out = []
    for column in data.columns():
        metric = "judge" if column.startswith("judge_") else column
        for dialect in [ALL, *dialects]:
            xs, ys = [], []
            for pair, (human, _n) in data.human.items():
                if dialect not in (ALL, dialect_of[pair[0]]):
                    continue
                value = normalized(metric, data.item_value(column, pair, own=True), invert_wer=invert_wer)
                if value is not None:
                    xs.append(value)
                    ys.append(human / 10.0)
            n = len(xs)
            enough = n >= min_pairs
            ccc = lin_ccc(xs, ys, min_pairs=min_pairs) if enough else math.nan
            rec = {"metric": column, "dialect": dialect, "n": n,
                   "pearson": pearson(xs, ys) if enough else math.nan,
                   "spearman": spearman(xs, ys) if enough else math.nan, "ccc": ccc,
                   "metric_mean": float(np.mean(xs)) if xs else math.nan,
                   "human_mean": float(np.mean(ys)) if ys else math.nan,
                   "trusted": "" if not enough or math.isnan(ccc) else ccc >= min_ccc,
                   "note": "" if enough else f"fewer than {min_pairs} human-scored rows"}
            out.append(rec)
    return out


# -- per-row scores and dialect ID ------------------------------------------------------------------------------
def item_rows(data: TQData) -> list[dict[str, Any]]:
    """One record per row × system: the texts, every metric, the judges, the dialect-ID verdict, the human
    score (the `export` table)."""
    out = []
    for r in data.rows:
        for system in data.systems:
            pair = (r.key, system)
            rec: dict[str, Any] = {"row": r.key, "id": r.id, "dialect": r.dialect, "system": system,
                                   "status": "ok" if system in r.systems else ("failed" if system in r.failed
                                                                               else "missing"),
                                   "source": r.source, "reference": r.reference,
                                   "translation": r.systems.get(system, ""), "reason": r.failed.get(system, ""),
                                   "where": r.where, "target_id": target_id(r.key, system)}
            for column in data.columns():
                rec[column] = data.item_value(column, pair)
                if column.startswith("judge_"):
                    j = data.judges[column.removeprefix("judge_")].get(pair)
                    rec[f"{column}_own"] = None if j is None else j.own
                    rec[f"{column}_clipped"] = None if j is None else j.clipped
                    rec[f"{column}_reviewed"] = None if j is None else j.reviewed
            check = data.dialect_id.get(pair)
            rec["dialect_id"] = None if check is None else check["verdict"]
            rec["dialect_id_predicted"] = None if check is None else check["predicted"]
            human = data.human.get(pair)
            rec["human"], rec["human_annotators"] = (human if human else (None, 0))
            out.append(rec)
    return out


def dialect_id_table(data: TQData) -> list[dict[str, Any]]:
    """Per system (and the human references) × dialect: how the translations read to the dialect classifier."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    dialect_of = {r.key: r.dialect for r in data.rows}
    for (key, system), check in data.dialect_id.items():
        for dialect in (dialect_of[key], ALL):
            counts[(system, dialect)][check["verdict"]] += 1
    out = []
    for (system, dialect), c in sorted(counts.items(), key=lambda kv: (kv[0][0] != "reference", kv[0])):
        n = sum(c.values())
        covered = n - c["not_covered"]
        rec: dict[str, Any] = {"system": system, "dialect": dialect, "n": n}
        rec.update({v: c[v] for v in VERDICTS})
        rec["share_ok"] = c["ok"] / covered if covered else math.nan
        out.append(rec)
    return out
