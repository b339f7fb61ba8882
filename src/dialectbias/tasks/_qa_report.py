"""Tables and HTML sections of the qa_bias report (SPEC §4 P3 Reports; paper Tables 4 and 5).

The store is read once: `load_judgments` streams the latest judgment per (judge, model, item,
variant) of every judge in small columns (never the raw outputs), with the human override and the
five Likert values extracted by SQLite; the analysis itself is in `_qa_analysis` (pure functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from dialectbias.judges import RLAIF_CATEGORIES, ZEROED_PREFIX
from dialectbias.report import Section, heatmap
from dialectbias.report._plots import agreement_scatter, gap_ci_plot
from dialectbias.store import OVERRIDE_KIND, Store
from dialectbias.tasks import _qa_analysis as qa

if TYPE_CHECKING:
    from dialectbias.tasks.qa_bias import QABiasTask

# a judgment the script/refusal rule set to 0 (dialectbias.judges.script_refusal_verdict)
_ZEROED_SQL = f"substr(coalesce(j.reason, ''), 1, {len(ZEROED_PREFIX)}) = '{ZEROED_PREFIX}'"

# The latest human override per judgment (SQLite returns the bare columns of the MAX row).
_LATEST_OVERRIDE = (f"SELECT target_id, json_extract(value, '$.score') AS score, annotator, "
                    f"MAX(annotation_id) "
                    f"FROM annotations WHERE kind = '{OVERRIDE_KIND}' GROUP BY target_id")

# The latest judgment per (judge, model, item, variant), with a human override when one exists.
FINAL_SCORES_SQL = f"""
SELECT j.request_id, j.judge_id, j.model_id, j.item_id, j.variant, j.score AS judge_score,
       o.score AS human_score, CASE WHEN o.target_id IS NULL THEN j.score ELSE o.score END AS final_score,
       j.confidence, j.parse_status, j.needs_review, j.flagged, j.reason, o.annotator
FROM judgments j LEFT JOIN ({_LATEST_OVERRIDE}) o ON o.target_id = j.request_id
WHERE j.rowid IN (SELECT MAX(j2.rowid) FROM judgments j2 JOIN current_requests c ON c.request_id = j2.request_id
                  GROUP BY j2.judge_id, j2.model_id, j2.item_id, j2.variant)
"""


LIKERT_FIELDS = [name for name, _ in RLAIF_CATEGORIES]
_KEYS = ["judge_id", "model_id", "item_id", "variant"]
JUDGMENT_COLUMNS = [*_KEYS, "judge_score", "human_score", "final_score", "confidence", "parse_status",
                    "needs_review", "flagged", "zeroed", *LIKERT_FIELDS]
_CHUNK_ROWS = 20_000
_LIKERT_BASE = 6  # the five 0–5 Likert values travel as one base-6 integer


def load_judgments(store: Store, judge_ids: Sequence[str], model_ids: Sequence[str]) -> pd.DataFrame:
    """The latest judgment per (judge, model, item, variant) of the given judges and models, one row each.

    Columns: judge_id, model_id, item_id, variant (categorical), judge_score, human_score (latest
    `rlaif_override`, else NaN), final_score (human score where present, else the judge's), confidence,
    parse_status ('failed' or 'parsed'), needs_review, flagged, zeroed (script/refusal reason on a parsed
    judgment) and the five Likert fields of the judge's `parsed` JSON (NaN when unparsed).

    One sequential scan in rowid order (the latest judgment is the last one stored), streamed in chunks;
    SQLite extracts the Likert values and packs the small fields into integers, so neither the stored
    texts nor one Python object per field ever reach Python, and memory is bounded by the compact
    columns. Rows are returned sorted by key, so every mean is the same whatever order the judgments
    were stored in.
    """
    judge_ids, model_ids = list(dict.fromkeys(judge_ids)), list(dict.fromkeys(model_ids))
    if not judge_ids or not model_ids:
        return _empty_frame()
    likert = " + ".join(f"{_LIKERT_BASE ** (4 - i)} * json_extract(j.parsed, '$.{f}')"
                        for i, f in enumerate(LIKERT_FIELDS))
    judge_case = "CASE j.judge_id " + " ".join("WHEN ? THEN ?" for _ in judge_ids) + " END"
    model_case = "CASE j.model_id " + " ".join("WHEN ? THEN ?" for _ in model_ids) + " END"
    sql = (f"SELECT {judge_case}, {model_case}, j.item_id, j.variant, j.score, o.score, "
           f"j.needs_review | (j.flagged << 1) | ((j.parse_status != 'failed' AND {_ZEROED_SQL}) << 2) "
           "| ((j.parse_status = 'failed') << 3) | (coalesce(j.confidence, 0) << 4), "
           f"{likert} FROM judgments j NOT INDEXED LEFT JOIN ({_LATEST_OVERRIDE}) o "
           "ON o.target_id = j.request_id WHERE j.request_id IN (SELECT request_id FROM current_requests) "
           f"AND j.judge_id IN ({','.join('?' * len(judge_ids))}) "
           f"AND j.model_id IN ({','.join('?' * len(model_ids))}) ORDER BY j.rowid")
    params = [*(x for i, j in enumerate(judge_ids) for x in (j, i)),
              *(x for i, m in enumerate(model_ids) for x in (m, i)), *judge_ids, *model_ids]
    cur = store.conn.cursor()
    cur.row_factory = None
    cur.execute(sql, params)
    parts: dict[str, list[Any]] = {k: [] for k in ("judge", "model", "item", "variant", "score", "human",
                                                   "bits", "likert")}
    while rows := cur.fetchmany(_CHUNK_ROWS):
        cols = list(zip(*rows, strict=True))
        del rows
        parts["judge"].append(np.array(cols[0], dtype=np.int16))
        parts["model"].append(np.array(cols[1], dtype=np.int16))
        parts["item"].append(pd.Categorical(np.array(cols[2], dtype=object)))
        parts["variant"].append(pd.Categorical(np.array(cols[3], dtype=object)))
        parts["score"].append(np.array(cols[4], dtype=float))
        parts["human"].append(np.array(cols[5], dtype=float))
        parts["bits"].append(np.array(cols[6], dtype=np.int32))
        parts["likert"].append(np.array(cols[7], dtype=float))
    if not parts["judge"]:
        return _empty_frame()
    bits = np.concatenate(parts["bits"])
    packed = np.concatenate(parts["likert"])
    frame = pd.DataFrame({
        "judge_id": pd.Categorical.from_codes(np.concatenate(parts["judge"]), categories=judge_ids),
        "model_id": pd.Categorical.from_codes(np.concatenate(parts["model"]), categories=model_ids),
        "item_id": union_categoricals(parts["item"], sort_categories=True),
        "variant": union_categoricals(parts["variant"], sort_categories=True),
        "judge_score": np.concatenate(parts["score"]), "human_score": np.concatenate(parts["human"]),
    })
    del parts
    frame["confidence"] = np.where(bits >> 4 > 0, bits >> 4, np.nan)
    frame["parse_status"] = pd.Categorical.from_codes((bits >> 3) & 1, categories=["parsed", "failed"])
    frame["needs_review"] = (bits & 1).astype(np.int8)
    frame["flagged"] = ((bits >> 1) & 1).astype(np.int8)
    frame["zeroed"] = ((bits >> 2) & 1).astype(np.int8)
    valid = ~np.isnan(packed)
    rest = np.where(valid, packed, 0).astype(np.int64)
    for i, f in enumerate(LIKERT_FIELDS):
        digit = (rest // _LIKERT_BASE ** (4 - i)) % _LIKERT_BASE
        frame[f] = np.where(valid, digit, np.nan).astype(np.float32)
    frame = frame.drop_duplicates(subset=_KEYS, keep="last")
    frame["final_score"] = frame.human_score.where(frame.human_score.notna(), frame.judge_score)
    frame = frame.sort_values(["judge_id", "model_id", "variant", "item_id"], kind="stable")
    return frame[JUDGMENT_COLUMNS].reset_index(drop=True)


def _empty_frame() -> pd.DataFrame:
    df = pd.DataFrame({c: pd.Series(dtype=float) for c in JUDGMENT_COLUMNS})
    for c in [*_KEYS, "parse_status"]:
        df[c] = pd.Series(dtype=object).astype("category")
    return df


def load_item_facets(store: Store) -> pd.DataFrame:
    """item_id, question_type, domain of the stored items."""
    rows = store.query("SELECT item_id, question_type, domain FROM items")
    return pd.DataFrame([tuple(r) for r in rows], columns=["item_id", "question_type", "domain"])


def final_scores(store: Store, judge_id: str, model_ids: list[str]) -> pd.DataFrame:
    marks = ",".join("?" * len(model_ids))
    rows = store.query(f"SELECT * FROM ({FINAL_SCORES_SQL}) WHERE judge_id = ? AND model_id IN ({marks})",
                       (judge_id, *model_ids))
    cols = ["request_id", "judge_id", "model_id", "item_id", "variant", "judge_score", "human_score",
            "final_score", "confidence", "parse_status", "needs_review", "flagged", "reason", "annotator"]
    return pd.DataFrame([tuple(r) for r in rows], columns=cols)


def model_by_dialect(scores: pd.DataFrame, models: list[str], dialects: list[str]) -> pd.DataFrame:
    """Mean final score per model × dialect (the paper's Table 4) with `avg` and `dialects_scored`.

    `avg` = mean of the model's dialect columns (macro), defined only for a complete row (a scored
    judgment in every dialect): a mean over fewer dialects is not comparable, so an incomplete row
    has an empty `avg`, says how many dialects it covers in `dialects_scored`, and sorts after the
    complete rows (those by avg, descending). The last row, `dialect_avg`, is the mean of each
    column over the complete rows only, as the gap table's `all` rows, so both tables agree.
    """
    scored = scores.dropna(subset=["final_score"])
    matrix = scored.pivot_table(index="model_id", columns="variant", values="final_score", aggfunc="mean",
                                observed=True)
    matrix = matrix.reindex(index=models, columns=dialects)
    covered = matrix[dialects].notna().sum(axis=1).astype(int)
    complete = covered == len(dialects)
    matrix["avg"] = matrix[dialects].mean(axis=1).where(complete)
    matrix["dialects_scored"] = covered
    head = matrix[complete].sort_values("avg", ascending=False, kind="stable")
    tail = matrix[~complete].sort_values("dialects_scored", ascending=False, kind="stable")
    out = pd.concat([head, tail]).astype({"dialects_scored": object})
    out.loc["dialect_avg"] = [*head[[*dialects, "avg"]].mean(axis=0).tolist(), None]
    out = out.reset_index().rename(columns={"index": "model", "model_id": "model"})
    out.columns.name = None
    return out


def _counts(scores: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Per model: judgments, scored, unscored, zeroed, needs review, pending, reviewed, changed by review."""
    rows = []
    for m in models:
        s = scores[scores.model_id == m]
        reviewed = s.human_score.notna()
        rows.append({"model": m, "judgments": len(s), "scored": int(s.final_score.notna().sum()),
                     "unscored (parse failed)": int((s.parse_status == "failed").sum()),
                     "zeroed (script/refusal)": int(s.zeroed.sum()),
                     "needs review": int(s.needs_review.sum()),
                     "pending review": int(((s.needs_review == 1) & ~reviewed).sum()),
                     "overridden": int(reviewed.sum()),
                     "changed by review": int((reviewed & (s.human_score != s.judge_score)).sum())})
    return pd.DataFrame(rows)


def dialect_order(task: QABiasTask, scores: pd.DataFrame) -> list[str]:
    present = [v for v in scores.variant.unique().tolist() if v != "standard"]
    if task.exp.variants:
        return [v for v in task.exp.variants if v in present]
    return sorted(present)


def _csv(df: pd.DataFrame, path: Path) -> None:
    df.to_csv(path, index=False)


def write_qa_report(task: QABiasTask, store: Store, out_dir: Path) -> dict[str, Any]:
    judge = task.exp.primary_judge
    models = [m.id for m in task.exp.models]
    if judge is None:
        return {"title": f"{task.exp.name}: qa_bias", "sections": [Section(
            heading="No judge", text="The experiment has no judge, so there are no scores to report. "
                                     "Add a judge with role: primary and run again.")]}
    opts = task.options
    secondaries = [j.id for j in task.exp.judges if j.id != judge.id]
    frame = load_judgments(store, [judge.id, *secondaries], models)
    scores = frame[frame.judge_id == judge.id]
    dialects = dialect_order(task, scores)
    sections: list[Section] = []
    metadata: dict[str, Any] = {"primary judge": judge.id}

    # Table 4 and heatmap
    table = model_by_dialect(scores, models, dialects)
    _csv(table, out_dir / "qa_bias_model_by_dialect.csv")
    body = table[table.model != "dialect_avg"].set_index("model")[dialects]
    png = heatmap(body, f"RLAIF score (0–10), judge {judge.id}", out_dir / "qa_bias_heatmap",
                  vmin=0, vmax=10) if len(body) and len(dialects) else None
    dialect_cols = ", ".join(dialects)
    n_complete = int(table.loc[table.model != "dialect_avg", "avg"].notna().sum())
    sections += [
        Section(heading="Model × dialect (RLAIF score, 0–10)", table=table,
                text=f"Mean final score of the primary judge ({judge.id}) per model and dialect (the paper's "
                     "Table 4); human review overrides replace judge scores; unscored judgments are excluded "
                     "and counted below. Rows are sorted by avg; a model without a scored judgment in some "
                     "dialect has no avg (a mean over fewer dialects is not comparable) and comes last.",
                legend={"model": "the model's id; dialect_avg = mean of each column over the models scored in "
                                 f"every dialect ({n_complete} here)",
                        **({dialect_cols: "mean final score (0–10) in that dialect; — = no scored judgment"}
                           if dialects else {}),
                        "avg": "mean of the model's dialect columns; — when a dialect is missing",
                        "dialects_scored": f"dialects with a scored judgment, of {len(dialects)}"}),
        Section(heading="Heatmap", image_png=png, image_alt="model by dialect heatmap"),
    ]

    # the gap with bootstrap CIs
    cube, _ = qa.score_cube(scores, models, dialects)
    gaps = qa.gap_table(scores, models, dialects, n_resamples=opts.n_resamples, seed=task.exp.seed)
    _csv(gaps, out_dir / "qa_bias_gap.csv")
    cells = gaps[(gaps.model != qa.ALL) & (gaps.dialect != qa.ALL)]
    gap_png = gap_ci_plot(cells, f"Gap per model and dialect, judge {judge.id}",
                          out_dir / "qa_bias_gap") if len(cells) else None
    sections += [
        Section(heading="Gap (10 − score) with 95% bootstrap CIs",
                table=gaps[(gaps.model == qa.ALL) | (gaps.dialect == qa.ALL)].reset_index(drop=True),
                text=f"The RLAIF score already compares each dialect answer with the standard answer, so the "
                     f"gap is 10 − score. Percentile bootstrap over items ({opts.n_resamples:,} resamples, "
                     f"seed {task.exp.seed}); one item resample is shared by all cells, so the 'all' rows are "
                     "bootstrapped consistently. Shown: per model and per dialect; every model × dialect cell "
                     "is in qa_bias_gap.csv and the plot.",
                legend=GAP_LEGEND),
        Section(heading="Gap per model × dialect", image_png=gap_png, image_alt="gap with confidence intervals"),
    ]

    # multi-judge validation (Table 5)
    if secondaries:
        sections += _agreement_sections(frame, judge.id, secondaries, models, dialects, opts, out_dir,
                                        metadata)
    else:
        sections.append(Section(heading="Multi-judge validation", text="No secondary judge (role: secondary) "
                                "in the experiment, so there is no agreement table."))

    # breakdowns
    facets = load_item_facets(store)
    with_facets = scores[["model_id", "item_id", "final_score"]].merge(
        facets, on="item_id", how="left") if len(scores) else scores.assign(question_type=None, domain=None)
    for by, name, heading in (("question_type", "qa_bias_by_question_type.csv", "By question type"),
                              ("domain", "qa_bias_by_domain.csv", "By domain")):
        tab = qa.breakdown(with_facets, by, models)
        _csv(tab, out_dir / name)
        what = by.replace("_", " ")
        groups = [str(c) for c in tab.columns if c not in ("model", "all")]
        sections.append(Section(
            heading=heading, table=tab,
            text=f"Mean final score per model and {what}, all dialects pooled.",
            legend={"model": f"the model's id; model_avg = mean of each column over the models; n (scored) = "
                             f"scored judgments per {what}",
                    **({", ".join(groups): f"mean final score (0–10) on items of that {what}; (none) = items "
                                           f"without a {what}"} if groups else {}),
                    "all": f"the model's mean over every {what}"}))
    sizes = qa.model_size_table(table, task.exp.models)
    _csv(sizes, out_dir / "qa_bias_by_model_size.csv")
    scale = qa.scale_spearman(sizes)
    _csv(scale, out_dir / "qa_bias_scale_by_family.csv")
    sections += [
        Section(heading="Model family and size", table=sizes,
                text="family and params_b are optional model fields of the experiment file; — = not given. A "
                     "model missing a dialect has no avg score and is left out of the scale analysis below.",
                legend={"model": "the model's id", "family": "model family (experiment file); — = not given",
                        "params_b": "parameters in billions (experiment file); — = not given",
                        "avg_score": "the model × dialect table's avg (mean over dialects); — = a dialect "
                                     "is missing",
                        "mean_gap": "10 − avg score", "dialects_scored": f"dialects scored, of {len(dialects)}"}),
        Section(heading="Does scale reduce the gap?", table=scale,
                text="Spearman ρ of params_b vs avg score within each family and over all models with a size "
                     "and a complete row: ρ > 0 means larger models score higher, i.e. a smaller gap.",
                legend={"family": "model family; all = every model with a size",
                        "n_models": "models with params_b and an avg score",
                        "spearman_params_vs_score": "Spearman ρ; — with fewer than 2 such models or no "
                                                    "variation"}),
    ]

    # paired tests
    pd_dialects = qa.paired_dialects(cube, models, dialects)
    _csv(pd_dialects, out_dir / "qa_bias_paired_dialects.csv")
    pd_models = qa.paired_models(cube, models)
    _csv(pd_models, out_dir / "qa_bias_paired_models.csv")
    sections += [
        Section(heading="Paired tests: dialects within each model", table=_dialect_pair_summary(pd_dialects),
                text="For each model, every pair of dialects on the same items: paired t-test and Wilcoxon "
                     "signed-rank (zeros dropped), Holm-adjusted over the model's pairs. Summary per dialect "
                     "pair; every test is in qa_bias_paired_dialects.csv.",
                empty="none: fewer than two dialects",
                legend={"dialect_a, dialect_b": "the two dialects compared",
                        "models": "models with at least 2 items scored in both dialects (tested)",
                        "mean_diff": "mean over models of mean(score in dialect_a − score in dialect_b)",
                        "models_t_holm_p<0.05": "models whose Holm-adjusted paired t-test p < 0.05",
                        "models_wilcoxon_holm_p<0.05": "models whose Holm-adjusted Wilcoxon p < 0.05"}),
        Section(heading="Paired tests: models on the same items", table=_model_pair_view(pd_models),
                text="Every pair of models on the same (item, dialect): paired t-test and Wilcoxon signed-rank, "
                     "Holm-adjusted over all model pairs. Shown: the adjusted p-values; raw p-values, means and "
                     "statistics are in qa_bias_paired_models.csv.",
                empty="none: fewer than two models",
                legend={"model_a, model_b": "the two models compared",
                        "n": "(item, dialect) pairs scored for both",
                        "mean_diff": "mean(model_a − model_b) over those pairs (score 0–10)",
                        "t": "paired t statistic", "p_t_holm": "its Holm-adjusted two-sided p",
                        "p_wilcoxon_holm": "Holm-adjusted two-sided p of the Wilcoxon signed-rank test"}),
    ]

    counts = _counts(scores, models)
    _csv(counts, out_dir / "qa_bias_counts.csv")
    sections.append(Section(
        heading="Judgment counts", table=counts,
        text="Judgments of the primary judge per model.",
        legend=COUNTS_LEGEND))

    n_scored = int(scores.final_score.notna().sum())
    mean = float(np.nanmean(scores.final_score)) if n_scored else None
    metadata.update({"judgments": len(scores), "scored": n_scored,
                     "mean score": "— (nothing scored)" if mean is None else f"{mean:.3f}"})
    return {"title": f"{task.exp.name}: QA dialect bias", "sections": sections, "metadata": metadata}


GAP_LEGEND = {
    "model": "the model; all = mean over the models scored in every dialect",
    "dialect": "the dialect; all = mean over the model's dialects (— when one is missing)",
    "n": "scored judgments in the cell(s)", "mean_score": "mean final score (0–10)", "gap": "10 − mean_score",
    "ci_low, ci_high": "95% percentile-bootstrap interval of the gap (— with fewer than 2 scored judgments)",
}

COUNTS_LEGEND = {
    "model": "the model's id", "judgments": "latest judgment per (item, dialect)",
    "scored": "judgments with a score (judge's or human's)",
    "unscored (parse failed)": "the judge's answer did not parse after repair and one re-ask; never scored 0",
    "zeroed (script/refusal)": "scored 0: judge and code agree the answer is not in the script or a refusal, "
                               "or the code finds it clearly not in the script",
    "needs review": "low confidence or a judge/code disagreement: sent to human review",
    "pending review": "needs review, no human score yet",
    "overridden": "a human score replaces the judge's", "changed by review": "the human score differs",
}

AGREEMENT_LEGEND = {
    "primary, secondary": "the two judges compared (judge scores, not human overrides)",
    "scope, group": "overall, per dialect or per model, and which one",
    "n": "pairs where both judges scored", "ccc": "Lin's concordance correlation C (population moments)",
    "cbs": "critical bias sensitivity: recall on primary < threshold × (1 − normalised MAE)",
    "pearson": "Pearson r", "spearman": "Spearman ρ", "mean_abs_diff": "mean |primary − secondary| (0–10)",
    "pass": "PASS when C and CBS reach the thresholds, else FAIL; empty when undefined",
    "note": "why a value is empty", "dropped_unscored": "pairs dropped because either judgment is unscored",
}


def _agreement_sections(frame: pd.DataFrame, primary: str, secondaries: list[str], models: list[str],
                        dialects: list[str], opts: Any, out_dir: Path, metadata: dict[str, Any],
                        ) -> list[Section]:
    k = opts.agreement_min_pairs
    agree = qa.agreement_table(frame, primary, secondaries, ccc_min=opts.agreement_ccc_min,
                               cbs_min=opts.agreement_cbs_min, threshold=opts.cbs_threshold, models=models,
                               dialects=dialects, min_pairs=k)
    _csv(agree, out_dir / "qa_bias_judge_agreement.csv")
    kappa = qa.likert_kappa(frame, primary, secondaries, LIKERT_FIELDS, min_pairs=k)
    _csv(kappa, out_dir / "qa_bias_judge_kappa.csv")
    alpha, units = qa.interval_alpha(frame, [primary, *secondaries], min_pairs=k)
    alpha_df = pd.DataFrame([{"judges": ", ".join([primary, *secondaries]), "units": units,
                              "alpha_interval": alpha, "note": qa.undefined_note(units, alpha, k)}])
    _csv(alpha_df, out_dir / "qa_bias_judge_alpha.csv")
    panels = []
    for sec in secondaries:
        pairs, _ = qa.pair_judges(frame, primary, sec)
        panels.append((sec, pairs.p.to_numpy(float), pairs.s.to_numpy(float)))
    scatter = agreement_scatter(panels, f"{primary} (primary) score", out_dir / "qa_bias_agreement_scatter")
    overall = agree[agree.scope == "overall"]
    for _, r in overall.iterrows():
        c = "undefined" if pd.isna(r.ccc) else f"{r.ccc:.3f}"
        cbs = "undefined" if pd.isna(r.cbs) else f"{r.cbs:.3f}"
        metadata[f"agreement {r.secondary}"] = f"C {c}, CBS {cbs}, {r['pass'] or 'no verdict'} (n = {r.n})"
    return [
        Section(heading="Multi-judge validation (Table 5)", table=agree,
                text=f"Each secondary judge vs the primary ({primary}) on the same (model, item, dialect). "
                     f"PASS: C ≥ {opts.agreement_ccc_min} and CBS ≥ {opts.agreement_cbs_min}; CBS uses the "
                     f"critical set primary < {opts.cbs_threshold} and is undefined (empty, FAIL) when that set "
                     f"is empty. Over fewer than {k} pairs (options.agreement_min_pairs) agreement is undefined: "
                     "C, CBS and the correlations are empty and there is no PASS/FAIL.",
                legend=AGREEMENT_LEGEND),
        Section(heading="Agreement scatter", image_png=scatter,
                image_alt="primary vs secondary judge scores"),
        Section(heading="Likert agreement (weighted Cohen's kappa)", table=kappa,
                text="Quadratic-weighted Cohen's kappa per rubric field (labels 0–5) between the primary "
                     "and each secondary, over pairs where both judges returned the field.",
                legend={"primary, secondary": "the two judges", "field": "the rubric's Likert statement",
                        "n": "pairs with the field from both judges",
                        "kappa_quadratic": f"quadratic-weighted kappa; — over fewer than {k} pairs or without "
                                           "variation", "note": "why kappa is empty"}),
        Section(heading="Krippendorff's alpha", table=alpha_df,
                text="Interval alpha of the 0–10 judge scores of all judges over (model, item, dialect) "
                     "units rated by at least two judges.",
                legend={"judges": "the judges whose scores are compared",
                        "units": "(model, item, dialect) units scored by at least two judges",
                        "alpha_interval": f"Krippendorff's alpha (interval); — over fewer than {k} units or "
                                          "without variation", "note": "why alpha is empty"}),
    ]


def _dialect_pair_summary(tests: pd.DataFrame) -> pd.DataFrame:
    if tests.empty:
        return pd.DataFrame(columns=["dialect_a", "dialect_b", "models", "mean_diff", "models_t_holm_p<0.05",
                                     "models_wilcoxon_holm_p<0.05"])
    g = tests.groupby(["dialect_a", "dialect_b"], sort=False)
    return pd.DataFrame({
        "models": g.n.apply(lambda n: int((n >= 2).sum())), "mean_diff": g.mean_diff.mean(),
        "models_t_holm_p<0.05": g.t_pvalue_holm.apply(lambda p: int((p < 0.05).sum())),
        "models_wilcoxon_holm_p<0.05": g.wilcoxon_pvalue_holm.apply(lambda p: int((p < 0.05).sum())),
    }).reset_index()


def _model_pair_view(tests: pd.DataFrame) -> pd.DataFrame:
    """The model-pair tests folded to seven columns for the page (the CSV keeps all of them)."""
    return pd.DataFrame({"model_a": tests.model_a, "model_b": tests.model_b, "n": tests.n,
                         "mean_diff": tests.mean_diff, "t": tests.t_statistic, "p_t_holm": tests.t_pvalue_holm,
                         "p_wilcoxon_holm": tests.wilcoxon_pvalue_holm})
