"""Analysis of qa_bias judgments: judge agreement (paper Table 5), breakdowns, gap CIs, paired tests.

Pure pandas/numpy functions over the frames `_report` loads from the store (SPEC §4 P3; Bengali
dialect-bias paper §3.4, §4.2–4.3). Everything is vectorised so that a study of the paper's size
(19 models × 3,600 dialect pairs × 3 judges) is analysed in seconds:

- the bootstrap (`metrics.cluster_bootstrap_cis`, one function for Table 4's gaps and every breakdown)
  draws one item-resample count matrix W (resamples × items) per block and gets the resampled mean of
  every cell at once as (W @ sums) / (W @ counts);
- paired t and Wilcoxon tests run on all pairs of a family at once (`metrics.paired_tests`, pairwise
  deletion of missing rows), Holm-adjusted (`metrics.holm_adjust`).

Frame conventions: `judgments` has one row per (judge, model, item, variant) — the latest judgment —
with columns judge_id, model_id, item_id, variant, judge_score, final_score (human override where one exists)
and the Likert fields; unscored judgments have NaN scores.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dialectbias.metrics import (
    MIN_PAIRS,
    cluster_bootstrap_cis,
    cohen_kappa,
    critical_bias_sensitivity,
    holm_adjust,
    krippendorff_interval_alpha,
    lin_ccc,
    mean_abs_difference,
    paired_tests,
    pearson,
    spearman,
)

KEYS = ["model_id", "item_id", "variant"]
AGREEMENT_COLUMNS = ["primary", "secondary", "scope", "group", "n", "ccc", "cbs", "pearson", "spearman",
                     "mean_abs_diff", "pass", "note", "dropped_unscored"]
KAPPA_COLUMNS = ["primary", "secondary", "field", "n", "kappa_quadratic", "note"]
FIELD_AGREEMENT_COLUMNS = ["primary", "secondary", "field", "n", "ccc", "alpha_interval", "note"]
GAP_COLUMNS = ["model", "dialect", "n", "mean_score", "gap", "ci_low", "ci_high"]
PAIRED_STAT_COLUMNS = ["n", "mean_a", "mean_b", "mean_diff", "t_statistic", "t_pvalue", "t_pvalue_holm",
                       "wilcoxon_statistic", "wilcoxon_pvalue", "wilcoxon_pvalue_holm"]
ALL = "all"
NONE_LABEL = "(none)"


# -- judge agreement (paper Table 5) ---------------------------------------------------------------


def pair_judges(judgments: pd.DataFrame, primary: str, secondary: str,
                value: str = "judge_score") -> tuple[pd.DataFrame, int]:
    """Judgments of two judges on the same (model, item, variant), as columns `p` and `s`.

    Returns (pairs with both scores, number of pairs dropped because either score is missing).
    Agreement uses judge scores, not human overrides: it validates the judges themselves.
    """
    a = judgments.loc[judgments.judge_id == primary, [*KEYS, value]].rename(columns={value: "p"})
    b = judgments.loc[judgments.judge_id == secondary, [*KEYS, value]].rename(columns={value: "s"})
    both = a.merge(b, on=KEYS, how="inner")
    ok = both.p.notna() & both.s.notna()
    return both.loc[ok].reset_index(drop=True), int((~ok).sum())


def agreement_row(p: np.ndarray, s: np.ndarray, *, ccc_min: float, cbs_min: float,
                  threshold: float, scale: float = 10.0, min_pairs: int = MIN_PAIRS) -> dict[str, Any]:
    """C, CBS, Pearson, Spearman, mean |Δ|, n and PASS/FAIL (C ≥ ccc_min and CBS ≥ cbs_min).

    Fewer than `min_pairs` pairs: agreement is undefined, so C, CBS and the correlations are empty,
    `pass` is empty (never PASS) and the note says "n < min_pairs" ("no pairs" when n = 0). CBS is None
    (undefined, reported empty) when no primary score is below `threshold`; the row then fails with the
    note "CBS undefined".
    """
    n = int(p.size)
    if n < min_pairs:
        return {"n": n, "ccc": math.nan, "cbs": None, "pearson": math.nan, "spearman": math.nan,
                "mean_abs_diff": mean_abs_difference(p, s), "pass": "",
                "note": "no pairs" if n == 0 else f"n < {min_pairs}: agreement undefined"}
    ccc = lin_ccc(p, s, min_pairs=min_pairs)
    cbs = critical_bias_sensitivity(p, s, threshold=threshold, scale=scale, min_pairs=min_pairs)
    notes = []
    if cbs is None:
        notes.append("CBS undefined (no primary score below the threshold)")
    if math.isnan(ccc):
        notes.append("C undefined")
    passed = cbs is not None and not math.isnan(ccc) and ccc >= ccc_min and cbs >= cbs_min
    return {"n": n, "ccc": ccc, "cbs": cbs, "pearson": pearson(p, s), "spearman": spearman(p, s),
            "mean_abs_diff": mean_abs_difference(p, s), "pass": "PASS" if passed else "FAIL",
            "note": "; ".join(notes)}


def agreement_table(judgments: pd.DataFrame, primary: str, secondaries: Sequence[str], *,
                    ccc_min: float = 0.80, cbs_min: float = 0.75, threshold: float = 4.0,
                    models: Sequence[str] | None = None, dialects: Sequence[str] | None = None,
                    min_pairs: int = MIN_PAIRS, scale: float = 10.0) -> pd.DataFrame:
    """Table 5 for every secondary judge vs the primary: overall, per dialect and per model. `scale`: the
    width of the score range (CBS normalises the mean absolute difference by it; RLAIF 10)."""

    def row(p: np.ndarray, s: np.ndarray) -> dict[str, Any]:
        return agreement_row(p, s, ccc_min=ccc_min, cbs_min=cbs_min, threshold=threshold, min_pairs=min_pairs,
                             scale=scale)

    rows = []
    for sec in secondaries:
        pairs, dropped = pair_judges(judgments, primary, sec)
        p_all, s_all = pairs.p.to_numpy(float), pairs.s.to_numpy(float)
        rows.append({"primary": primary, "secondary": sec, "scope": "overall", "group": ALL,
                     **row(p_all, s_all), "dropped_unscored": dropped})
        for scope, col, order in (("dialect", "variant", dialects), ("model", "model_id", models)):
            groups = _positions(pairs[col])
            dropped_by = _dropped_by(judgments, primary, sec, col)
            for g in (order if order is not None else sorted(groups)):
                idx = groups.get(g, np.empty(0, dtype=np.intp))
                rows.append({"primary": primary, "secondary": sec, "scope": scope, "group": g,
                             **row(p_all[idx], s_all[idx]),
                             "dropped_unscored": int(dropped_by.get(g, 0))})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def _positions(labels: pd.Series) -> dict[Any, np.ndarray]:
    codes, uniques = pd.factorize(labels, sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    return {u: order[bounds[i]:bounds[i + 1]] for i, u in enumerate(uniques)}


def _dropped_by(judgments: pd.DataFrame, primary: str, secondary: str, col: str) -> pd.Series:
    a = judgments.loc[judgments.judge_id == primary, [*KEYS, "judge_score"]]
    b = judgments.loc[judgments.judge_id == secondary, [*KEYS, "judge_score"]]
    both = a.merge(b, on=KEYS, how="inner", suffixes=("_p", "_s"))
    bad = both.judge_score_p.isna() | both.judge_score_s.isna()
    return both.loc[bad, col].astype(object).value_counts()


def likert_kappa(judgments: pd.DataFrame, primary: str, secondaries: Sequence[str],
                 fields: Sequence[str], labels: Sequence[int] | Mapping[str, Sequence[int] | None] = range(6),
                 min_pairs: int = MIN_PAIRS) -> pd.DataFrame:
    """Quadratic-weighted Cohen's kappa per rubric field between the primary and each secondary,
    on the pairs where both judges gave that field (unparsed judgments have none); nan with fewer than
    `min_pairs` pairs. `labels`: the field's integer scale (one for all fields, or per field); a field
    whose labels are None is continuous (a `number` field): its kappa is empty, with a note."""
    rows = []
    for sec, f, p, s in _field_pairs(judgments, primary, secondaries, fields):
        scale = labels.get(f) if isinstance(labels, Mapping) else labels
        if scale is None:
            rows.append({"primary": primary, "secondary": sec, "field": f, "n": len(p), "kappa_quadratic": math.nan,
                         "note": "number field: kappa needs integer labels (see alpha and C on the score)"})
            continue
        x, y = p.astype(int).tolist(), s.astype(int).tolist()
        kappa = cohen_kappa(x, y, weights="quadratic", labels=list(scale), min_pairs=min_pairs)
        rows.append({"primary": primary, "secondary": sec, "field": f, "n": len(x), "kappa_quadratic": kappa,
                     "note": undefined_note(len(x), kappa, min_pairs)})
    return pd.DataFrame(rows, columns=KAPPA_COLUMNS)


def field_agreement(judgments: pd.DataFrame, primary: str, secondaries: Sequence[str], fields: Sequence[str],
                    min_pairs: int = MIN_PAIRS) -> pd.DataFrame:
    """Lin's C and Krippendorff's interval alpha per rubric field between the primary and each secondary,
    on the (model, item, variant) units where both judges gave that field (any numeric field, `number`
    fields included: kappa covers the integer ones); nan with fewer than `min_pairs` pairs."""
    rows = []
    for sec, f, p, s in _field_pairs(judgments, primary, secondaries, fields):
        x, y = p.to_numpy(float), s.to_numpy(float)
        ccc = lin_ccc(x, y, min_pairs=min_pairs)
        pairs = judgments.loc[judgments.judge_id.isin([primary, sec]), [*KEYS, "judge_id", f]]
        alpha, _ = interval_alpha(pairs, [primary, sec], value=f, min_pairs=min_pairs)
        rows.append({"primary": primary, "secondary": sec, "field": f, "n": len(x), "ccc": ccc,
                     "alpha_interval": alpha, "note": undefined_note(len(x), ccc, min_pairs)})
    return pd.DataFrame(rows, columns=FIELD_AGREEMENT_COLUMNS)


def _field_pairs(judgments: pd.DataFrame, primary: str, secondaries: Sequence[str], fields: Sequence[str],
                 ) -> Iterator[tuple[str, str, pd.Series, pd.Series]]:
    """(secondary, field, primary's values, secondary's values) for each secondary judge and field, on the
    (model, item, variant) units where both judges gave that field."""
    a = judgments.loc[judgments.judge_id == primary, [*KEYS, *fields]]
    for sec in secondaries:
        b = judgments.loc[judgments.judge_id == sec, [*KEYS, *fields]]
        both = a.merge(b, on=KEYS, how="inner", suffixes=("_p", "_s"))
        for f in fields:
            ok = both[f"{f}_p"].notna() & both[f"{f}_s"].notna()
            yield sec, f, both.loc[ok, f"{f}_p"], both.loc[ok, f"{f}_s"]


def rescale_scores(judgments: pd.DataFrame, bounds: Mapping[str, tuple[float, float] | None],
                   target: tuple[float, float] | None) -> pd.DataFrame:
    """Judge scores of judges whose rubric has another score range mapped linearly onto `target` (the
    primary's range), so judges on different rubrics are compared on one scale: s' = lo + (s − lo_j) ·
    (hi − lo) / (hi_j − lo_j). Judges already on `target` (and judges with no score) are left alone; the
    input frame is not modified."""
    out = judgments
    if target is None:
        return out
    for judge, b in bounds.items():
        if b is None or b == target or b[1] == b[0]:
            continue
        if out is judgments:
            out = judgments.copy()
        mask = (out.judge_id == judge).to_numpy()
        out.loc[mask, "judge_score"] = target[0] + (out.loc[mask, "judge_score"] - b[0]) * (
            (target[1] - target[0]) / (b[1] - b[0]))
    return out


def undefined_note(n: int, value: float, min_pairs: int) -> str:
    """Why an agreement statistic is empty: too few pairs, or no variation to compare against."""
    if n < min_pairs:
        return "no pairs" if n == 0 else f"n < {min_pairs}: undefined"
    return "undefined (no variation)" if math.isnan(value) else ""


def interval_alpha(judgments: pd.DataFrame, judges: Sequence[str], value: str = "judge_score",
                   min_pairs: int = MIN_PAIRS) -> tuple[float, int]:
    """Krippendorff's alpha (interval) of the judges' scores over units (model, item, variant)
    (`metrics.krippendorff_interval_alpha`). Returns (alpha, number of pairable units); nan when there is no
    variation or fewer than `min_pairs` pairable units."""
    df = judgments.loc[judgments.judge_id.isin(list(judges)) & judgments[value].notna(), [*KEYS, value]]
    if df.empty:
        return math.nan, 0
    unit = df.groupby(KEYS, observed=True, sort=False).ngroup().to_numpy()
    return krippendorff_interval_alpha(unit, df[value].to_numpy(float), min_pairs=min_pairs)


# -- breakdowns ------------------------------------------------------------------------------------


def breakdown(scores: pd.DataFrame, by: str, models: Sequence[str], *, n_resamples: int = 10_000,
              confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Mean final score per model × `by` (question_type, domain) with percentile-bootstrap CIs, long format:
    columns model, `by`, n, mean_score, ci_low, ci_high.

    Rows: every model × group (`(none)` = items without a value), each model's `all` row (its judgments of
    every group pooled), and `model_avg` rows (the mean of the models' means in that group, over the
    models scored in it; like Table 4's dialect average). All dialects of an item are pooled. The CIs come
    from `metrics.cluster_bootstrap_cis`, the function behind Table 4's gaps: items are resampled with all
    their judgments, one resample shared by every cell, so the `all` and `model_avg` rows are bootstrapped
    consistently. Seeded, reproducible; fewer than 2 scored judgments → no interval."""
    s = scores.dropna(subset=["final_score"])
    s = s[s.model_id.isin(list(models))]
    key = s[by].astype(object).where(s[by].notna(), NONE_LABEL)
    groups_of_by = sorted(pd.unique(key).tolist(), key=str)
    columns = [*groups_of_by, ALL]
    items = sorted(pd.unique(s.item_id.astype(object)).tolist(), key=str)
    n_c = len(columns)
    sums = np.zeros((len(items), len(models) * n_c))
    cnts = np.zeros_like(sums)
    ii = pd.Categorical(s.item_id.astype(object), categories=items).codes
    mi = pd.Categorical(s.model_id.astype(object), categories=list(models)).codes
    gi = pd.Categorical(key, categories=groups_of_by).codes
    values = s.final_score.to_numpy(float)
    for col in (mi * n_c + gi, mi * n_c + n_c - 1):  # the judgment's own group, and the model's `all`
        np.add.at(sums, (ii, col), values)
        np.add.at(cnts, (ii, col), 1.0)
    has = cnts.sum(axis=0).reshape(len(models), n_c) > 0
    labels = [(m, g) for m in models for g in columns]
    groups = [[k] for k in range(len(models) * n_c)]
    for gi_, g in enumerate(columns):
        labels.append(("model_avg", g))
        groups.append([m * n_c + gi_ for m in range(len(models)) if has[m, gi_]])
    cis = cluster_bootstrap_cis(sums, cnts, groups, n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = [{"model": m, by: g, "n": ci.n, "mean_score": ci.mean, "ci_low": ci.ci_low, "ci_high": ci.ci_high}
            for (m, g), ci in zip(labels, cis, strict=True)]
    return pd.DataFrame(rows, columns=["model", by, "n", "mean_score", "ci_low", "ci_high"])


def model_size_table(matrix: pd.DataFrame, configs: Sequence[Any], max_score: float = 10.0,
                     gaps: pd.DataFrame | None = None) -> pd.DataFrame:
    """model, family, params_b, avg score (Table 4 avg: macro over dialects), mean gap max_score − avg with
    its 95% bootstrap CI (`gaps`: `gap_table`'s rows, whose per-model `all` row is this gap; no CI without
    it) and the dialects the model is scored in. A model missing a dialect has no avg (Table 4 leaves it
    empty), so it has an empty avg score, gap and CI here and never enters `scale_spearman`."""
    rows_by_model = matrix.set_index("model")
    avg = rows_by_model["avg"]
    covered = rows_by_model.get("dialects_scored")
    ci: dict[Any, tuple[float, float]] = {}
    if gaps is not None:
        per_model = gaps[(gaps.dialect == ALL) & (gaps.model != ALL)]
        ci = {m: (lo, hi) for m, lo, hi in zip(per_model.model, per_model.ci_low, per_model.ci_high, strict=True)}
    rows = []
    for m in configs:
        score = float(avg.get(m.id, math.nan))
        lo, hi = ci.get(m.id, (math.nan, math.nan)) if not math.isnan(score) else (math.nan, math.nan)
        rows.append({"model": m.id, "family": m.family, "params_b": _whole(m.params_b), "avg_score": score,
                     "mean_gap": max_score - score, "gap_ci_low": float(lo), "gap_ci_high": float(hi),
                     "dialects_scored": None if covered is None or m.id not in covered.index else int(covered[m.id])})
    columns = ["model", "family", "params_b", "avg_score", "mean_gap", "gap_ci_low", "gap_ci_high", "dialects_scored"]
    return pd.DataFrame(rows, columns=columns, dtype=object).astype(
        {"avg_score": float, "mean_gap": float, "gap_ci_low": float, "gap_ci_high": float})


def _whole(value: float | None) -> float | int | None:
    """70.0 → 70 (a size given as a whole number stays one in the CSV and the report)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def scale_spearman(sizes: pd.DataFrame) -> pd.DataFrame:
    """Does scale reduce the gap? Spearman ρ of params_b vs avg score within each family (and over
    all models with a size); ρ > 0 means larger models score higher (smaller gap). nan with < 2 sized
    models or no variation."""
    known = sizes.dropna(subset=["params_b", "avg_score"])
    rows = []
    for fam, g in known.dropna(subset=["family"]).groupby("family", sort=True):
        rows.append({"family": fam, "n_models": len(g),
                     "spearman_params_vs_score": spearman(g.params_b, g.avg_score)})
    rows.append({"family": ALL, "n_models": len(known),
                 "spearman_params_vs_score": spearman(known.params_b, known.avg_score)})
    return pd.DataFrame(rows, columns=["family", "n_models", "spearman_params_vs_score"])


# -- gap with bootstrap CIs ------------------------------------------------------------------------


def score_cube(scores: pd.DataFrame, models: Sequence[str], dialects: Sequence[str],
               ) -> tuple[np.ndarray, list[Any]]:
    """Final scores as an array [model, item, dialect] (NaN where unscored or missing) and the items."""
    s = scores.dropna(subset=["final_score"])
    s = s[s.model_id.isin(list(models)) & s.variant.isin(list(dialects))]
    items = sorted(pd.unique(s.item_id.astype(object)).tolist(), key=str)
    cube = np.full((len(models), len(items), len(dialects)), np.nan)
    mi = pd.Categorical(s.model_id.astype(object), categories=list(models)).codes
    ii = pd.Categorical(s.item_id.astype(object), categories=items).codes
    di = pd.Categorical(s.variant.astype(object), categories=list(dialects)).codes
    cube[mi, ii, di] = s.final_score.to_numpy(float)
    return cube, items


def gap_table(scores: pd.DataFrame, models: Sequence[str], dialects: Sequence[str], *,
              n_resamples: int = 10_000, confidence: float = 0.95, seed: int = 0,
              max_score: float = 10.0) -> pd.DataFrame:
    """The gap `max_score − mean score` per model × dialect with percentile-bootstrap CIs of the cell
    mean, resampling items; plus per-model rows (dialect `all`: macro over the model's dialects, as
    Table 4's avg: empty for a model missing a dialect), per-dialect rows (model `all`: macro over the
    complete models, those scored in every dialect, as Table 4's dialect-average row) and the grand row
    (over the complete models). One item resample is shared by all cells in each replicate, so the
    aggregate rows are bootstrapped consistently (a cluster bootstrap over items). Seeded, reproducible."""
    cube, _ = score_cube(scores, models, dialects)
    n_m, n_i, n_d = cube.shape
    present = ~np.isnan(cube)
    vals = np.where(present, cube, 0.0).transpose(1, 0, 2).reshape(n_i, n_m * n_d)
    cnts = present.astype(float).transpose(1, 0, 2).reshape(n_i, n_m * n_d)
    labels: list[tuple[str, str]] = []
    groups: list[np.ndarray] = []
    cell = np.arange(n_m * n_d).reshape(n_m, n_d)
    for mi, m in enumerate(models):
        for di, d in enumerate(dialects):
            labels.append((m, d))
            groups.append(cell[mi, di:di + 1])
    complete = (cnts.sum(axis=0).reshape(n_m, n_d) > 0).all(axis=1)  # models scored in every dialect
    for mi, m in enumerate(models):
        labels.append((m, ALL))
        groups.append(cell[mi, :])
    for di, d in enumerate(dialects):
        labels.append((ALL, d))
        groups.append(cell[complete, di])
    labels.append((ALL, ALL))
    groups.append(cell[complete].ravel())
    cis = cluster_bootstrap_cis(vals, cnts, groups, n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = [{"model": m, "dialect": d, "n": ci.n, "mean_score": ci.mean, "gap": max_score - ci.mean,
             "ci_low": max_score - ci.ci_high, "ci_high": max_score - ci.ci_low}
            for (m, d), ci in zip(labels, cis, strict=True)]
    return pd.DataFrame(rows, columns=GAP_COLUMNS)


# -- paired tests ----------------------------------------------------------------------------------


def paired_dialects(cube: np.ndarray, models: Sequence[str], dialects: Sequence[str]) -> pd.DataFrame:
    """For each model, every pair of dialects on the same items: paired t and Wilcoxon (Holm-adjusted
    within the model's pairs). mean_diff = mean(dialect_a − dialect_b)."""
    pairs = list(itertools.combinations(range(len(dialects)), 2))
    frames = []
    if not pairs:
        return pd.DataFrame(columns=["model", "dialect_a", "dialect_b", *PAIRED_STAT_COLUMNS])
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    for mi, m in enumerate(models):
        frames.append(_paired_frame(cube[mi], ia, ib, {"model": m, "dialect_a": [dialects[i] for i in ia],
                                                       "dialect_b": [dialects[i] for i in ib]}))
    return pd.concat(frames, ignore_index=True)


def paired_models(cube: np.ndarray, models: Sequence[str]) -> pd.DataFrame:
    """Every pair of models on the same (item, dialect): paired t and Wilcoxon (Holm-adjusted over all
    model pairs). mean_diff = mean(model_a − model_b)."""
    pairs = list(itertools.combinations(range(len(models)), 2))
    if not pairs:
        return pd.DataFrame(columns=["model_a", "model_b", *PAIRED_STAT_COLUMNS])
    flat = cube.reshape(cube.shape[0], -1).T  # (item × dialect) × models
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    return _paired_frame(flat, ia, ib, {"model_a": [models[i] for i in ia], "model_b": [models[i] for i in ib]})


#: the paired tests take this many values (rows × pairs) at a time: every pair is tested on its own, so the
#: blocks change nothing but the memory, which stays ~100 MB whatever the study's size (issue 23 item 3)
_PAIRED_BLOCK_ELEMENTS = 1_000_000


def _paired_frame(values: np.ndarray, ia: np.ndarray, ib: np.ndarray, labels: dict[str, Any]) -> pd.DataFrame:
    """The tests of column ia[k] against column ib[k] of `values` (rows × columns) for every k, Holm-adjusted."""
    step = max(1, _PAIRED_BLOCK_ELEMENTS // max(1, values.shape[0]))
    stats: dict[str, list[np.ndarray]] = {}
    for start in range(0, len(ia), step):
        x, y = values[:, ia[start:start + step]], values[:, ib[start:start + step]]
        tests = paired_tests(x, y)
        both = ~(np.isnan(x) | np.isnan(y))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_a = np.where(both, x, 0).sum(axis=0) / both.sum(axis=0)
            mean_b = np.where(both, y, 0).sum(axis=0) / both.sum(axis=0)
        for name, column in {**vars(tests), "mean_a": mean_a, "mean_b": mean_b}.items():
            stats.setdefault(name, []).append(column)
    out = pd.DataFrame(labels)
    for name, parts in stats.items():
        out[name] = np.concatenate(parts)
    out["t_pvalue_holm"] = holm_adjust(out.t_pvalue.to_numpy())
    out["wilcoxon_pvalue_holm"] = holm_adjust(out.wilcoxon_pvalue.to_numpy())
    return out[[*labels, *PAIRED_STAT_COLUMNS]]
