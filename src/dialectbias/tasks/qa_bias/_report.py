"""Tables and HTML sections of the qa_bias report (SPEC §4 P3 Reports; paper Tables 4 and 5).

The store is read once: `load_judgments` streams the latest judgment per (judge, model, item,
variant) of every judge in small columns (never the raw outputs), with the human override and the
rubric fields extracted by SQLite; the analysis itself is in `_analysis` (pure functions). Judges
may use different rubrics: scores are compared on the primary's score range, fields by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dialectbias.judges import Rubric
from dialectbias.report import ReportContent, Section, agreement_scatter, gap_ci_plot, heatmap
from dialectbias.review import ANNOTATOR_AGREEMENT_LEGEND, JUDGE_CALIBRATION_LEGEND, primary_routes
from dialectbias.store import (
    Store,
    human_score_label,
    item_facets,
    iter_judgments,
    judgment_columns,
    latest_overrides,
)
from dialectbias.tasks.qa_bias import _analysis as qa
from dialectbias.tasks.qa_bias._instructions_report import instruction_section

if TYPE_CHECKING:
    from dialectbias.tasks.qa_bias._task import QABiasTask

_KEYS = ["judge_id", "model_id", "item_id", "variant"]
BASE_COLUMNS = [*_KEYS, "judge_score", "human_score", "final_score", "confidence", "parse_status",
                "needs_review", "flagged", "zeroed", "out_of_range"]
_CHUNK_ROWS = 20_000


def load_judgments(store: Store, judge_ids: Sequence[str], model_ids: Sequence[str],
                   fields: Sequence[str] = (), *, human: str = "mean") -> pd.DataFrame:
    """The latest judgment per (judge, model, item, variant) of the given judges and models, one row each.

    Columns: judge_id, model_id, item_id, variant (categorical), judge_score, human_score (`human`, as
    `review.human_score`: the mean of each annotator's latest override, or the latest override; else NaN),
    final_score (human score where present, else the judge's), confidence, parse_status ('parsed',
    'failed': did not parse, or 'invalid': parsed but its values failed validation; both unscored),
    needs_review, flagged, zeroed (script/refusal rule on a parsed judgment), out_of_range (a value outside its
    range clipped, `out_of_range: clip`), then one float column per
    name in `fields`: that rubric field's value (NaN when the judge's
    rubric has no such field or the answer did not parse).

    Read through `dialectbias.store.judgment_columns` (one sequential scan, SQLite extracts the fields, no
    stored text reaches Python), in chunks copied into compact numpy columns (`_Buffers`; item ids and variants
    as codes). Rows are returned sorted by key, so every mean is the same whatever order the judgments were
    stored in. Memory: ~60 bytes per judgment, the columns held about twice at the peak.
    """
    judge_ids, model_ids = list(dict.fromkeys(judge_ids)), list(dict.fromkeys(model_ids))
    fields = list(dict.fromkeys(fields))
    columns = [*BASE_COLUMNS, *fields]
    dtypes = {"judge": np.int16, "model": np.int16, "item_id": np.int32, "variant": np.int32, "score": float,
              "human_score": float, "confidence": float, "needs_review": np.int8, "flagged": np.int8,
              "zeroed": np.int8, "unscored": np.int8, "out_of_range": np.int8, **dict.fromkeys(fields, np.float32)}
    buffers = _Buffers(dtypes)
    codes: dict[str, dict[str, int]] = {"item_id": {}, "variant": {}}  # each id's code, in order of appearance
    for chunk in judgment_columns(store, judge_ids, model_ids, fields, chunk_rows=_CHUNK_ROWS, human=human):
        buffers.append({name: ([codes[name].setdefault(v, len(codes[name])) for v in values]
                               if name in codes else values) for name, values in chunk.items()})
    if not buffers.n:
        return _empty_frame(columns)
    data = buffers.columns()
    cats = {name: sorted(found) for name, found in codes.items()}
    for name, found in codes.items():  # codes in sorted order of the ids, as a sorted categorical has them
        rank = np.empty(len(found), dtype=np.int32)
        rank[[found[v] for v in cats[name]]] = np.arange(len(found), dtype=np.int32)
        data[name] = rank[data[name]]
    # sorted by key, storage order within a key (a stable sort): a key's last row is its latest judgment. Done on
    # the code arrays and applied one column at a time; the columns were filled into arrays grown geometrically,
    # never held as chunks: the peak holds the columns about twice (issue 23: the report's memory)
    keys = (data["judge"], data["model"], data["variant"], data["item_id"])
    order = np.lexsort(keys[::-1])
    differs = np.zeros(order.size - 1, dtype=bool)
    for k in keys:
        ordered = k[order]
        differs |= ordered[1:] != ordered[:-1]
    keep = order[np.append(differs, True)]
    del order, differs, keys
    out: dict[str, Any] = {
        "judge_id": pd.Categorical.from_codes(data.pop("judge")[keep], categories=judge_ids),
        "model_id": pd.Categorical.from_codes(data.pop("model")[keep], categories=model_ids),
        **{name: pd.Categorical.from_codes(data.pop(name)[keep], categories=cats[name])
           for name in ("item_id", "variant")}}
    for name, column in (("score", "judge_score"), ("human_score", "human_score"), ("confidence", "confidence"),
                         ("unscored", "parse_status"), ("needs_review", "needs_review"), ("flagged", "flagged"),
                         ("zeroed", "zeroed"), ("out_of_range", "out_of_range"), *((f, f) for f in fields)):
        values = data.pop(name)[keep]
        out[column] = (pd.Categorical.from_codes(values, categories=["parsed", "failed", "invalid"])
                       if column == "parse_status" else values)
    out["final_score"] = np.where(np.isnan(out["human_score"]), out["judge_score"], out["human_score"])
    return pd.DataFrame({c: out.pop(c) for c in columns}, copy=False)  # no block copy of every column


class _Buffers:
    """Columns filled chunk by chunk into numpy arrays grown by half when full: large arrays, so a grown-out one
    goes back to the system (a list of small chunk arrays stays in the allocator's heap, and the report's peak
    memory grew with it)."""

    def __init__(self, dtypes: dict[str, Any], capacity: int = 1 << 16) -> None:
        self.n = 0
        self._arrays = {name: np.empty(capacity, dtype=dtype) for name, dtype in dtypes.items()}

    def append(self, chunk: dict[str, Sequence[Any]]) -> None:
        m = len(next(iter(chunk.values())))
        capacity = len(next(iter(self._arrays.values())))
        if self.n + m > capacity:
            capacity = max(self.n + m, capacity * 3 // 2)
            for name, old in self._arrays.items():
                grown = np.empty(capacity, dtype=old.dtype)
                grown[:self.n] = old[:self.n]
                self._arrays[name] = grown
        for name, array in self._arrays.items():
            array[self.n:self.n + m] = np.asarray(chunk[name], dtype=float if array.dtype.kind == "f" else None)
        self.n += m

    def columns(self) -> dict[str, np.ndarray]:
        """The filled part of each column (views); the buffers are handed over."""
        arrays, self._arrays = self._arrays, {}
        return {name: array[:self.n] for name, array in arrays.items()}


def _empty_frame(columns: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    for c in [*_KEYS, "parse_status"]:
        df[c] = pd.Series(dtype=object).astype("category")
    return df


def load_item_facets(store: Store) -> pd.DataFrame:
    """item_id, question_type, domain of the stored items."""
    rows = [(f.item_id, f.question_type, f.domain) for f in item_facets(store)]
    return pd.DataFrame(rows, columns=["item_id", "question_type", "domain"])


def final_scores(store: Store, judge_id: str, model_ids: list[str]) -> pd.DataFrame:
    """The judge's latest current judgments with their request ids, human override and annotator (one row
    each; for inspection and tests — the report reads `load_judgments`)."""
    overrides = latest_overrides(store)
    rows = []
    for j in iter_judgments(store, judge_id, model_ids):
        human, annotator = overrides.get(j.request_id, (None, None))
        rows.append((j.request_id, j.judge_id, j.model_id, j.item_id, j.variant, j.score, human,
                     j.score if human is None else human, j.confidence, j.parse_status, int(j.needs_review),
                     int(j.flagged), j.reason, annotator))
    cols = ["request_id", "judge_id", "model_id", "item_id", "variant", "judge_score", "human_score",
            "final_score", "confidence", "parse_status", "needs_review", "flagged", "reason", "annotator"]
    return pd.DataFrame(rows, columns=cols)


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
    """Per model: judgments, scored, unscored (parse failed; invalid values), zeroed, clipped out of range, needs
    review, pending,
    reviewed, changed by review."""
    rows = []
    for m in models:
        s = scores[scores.model_id == m]
        reviewed = s.human_score.notna()
        rows.append({"model": m, "judgments": len(s), "scored": int(s.final_score.notna().sum()),
                     "unscored (parse failed)": int((s.parse_status == "failed").sum()),
                     "unscored (invalid values)": int((s.parse_status == "invalid").sum()),
                     "zeroed (script/refusal)": int(s.zeroed.sum()),
                     "clipped (out of range)": int(s.out_of_range.sum()),
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


def write_qa_report(task: QABiasTask, store: Store, out_dir: Path) -> ReportContent:
    judge = task.exp.primary_judge
    models = [m.id for m in task.generation_models()]
    instructions, instructions_line = instruction_section(task, store, out_dir)
    if judge is None:
        return ReportContent(title=f"{task.exp.name}: qa_bias", sections=[Section(
            heading="No judge", text="The experiment has no judge, so there are no scores to report. "
                                     "Add a judge with role: primary and run again."), instructions],
            metadata={"answer instructions": instructions_line})
    opts = task.options
    secondaries = [j.id for j in task.exp.judges if j.id != judge.id]
    rubrics = task.rubrics
    fields = [f.name for jid in (judge.id, *secondaries) for f in rubrics[jid].numeric_fields]
    mode = task.exp.review.human_score
    frame = load_judgments(store, [judge.id, *secondaries], models, fields, human=mode)
    lo, hi = rubrics[judge.id].score_bounds or (0.0, 10.0)
    top = f"{_num(hi)}"
    scores = frame[frame.judge_id == judge.id]
    routing = primary_routes(store, task.exp)
    routes = {d: r.judge for d, r in routing.items() if r.judge is not None}
    if routes:
        scores = route_dialects(frame, scores, routes)
    dialects = dialect_order(task, scores)
    sections: list[Section] = []
    metadata: dict[str, Any] = {"primary judge": judge.id, "human score": human_score_label(mode),
                                "answer instructions": instructions_line}
    if routes:
        metadata["scored by another judge (miscalibrated primary)"] = ", ".join(
            f"{d}: {j}" for d, j in sorted(routes.items()))
    fallback_refused = {d: r.why for d, r in routing.items() if r.why}
    if fallback_refused:
        metadata["sent to review, not to the fallback judge (review.on_miscalibrated)"] = "; ".join(
            f"{d}: {why}" for d, why in sorted(fallback_refused.items()))

    # Table 4 and heatmap
    table = model_by_dialect(scores, models, dialects)
    _csv(table, out_dir / "qa_bias_model_by_dialect.csv")
    body = table[table.model != "dialect_avg"].set_index("model")[dialects]
    what = _score_name(rubrics[judge.id], lo, hi)
    png = heatmap(body, f"{what}, judge {judge.id}", out_dir / "qa_bias_heatmap",
                  vmin=lo, vmax=hi) if len(body) and len(dialects) else None
    dialect_cols = ", ".join(dialects)
    n_complete = int(table.loc[table.model != "dialect_avg", "avg"].notna().sum())
    sections += [
        Section(heading=f"Model × dialect ({what})", table=table,
                text=f"Mean final score of the primary judge ({judge.id}) per model and dialect (the paper's "
                     f"Table 4); human review overrides replace judge scores ({human_score_label(mode)}); "
                     "unscored judgments are excluded "
                     "and counted below. Rows are sorted by avg; a model without a scored judgment in some "
                     "dialect has no avg (a mean over fewer dialects is not comparable) and comes last.",
                legend={"model": "the model's id; dialect_avg = mean of each column over the models scored in "
                                 f"every dialect ({n_complete} here)",
                        **({dialect_cols: f"mean final score ({_num(lo)}–{top}) in that dialect; — = no scored "
                                          "judgment"}
                           if dialects else {}),
                        "avg": "mean of the model's dialect columns; — when a dialect is missing",
                        "dialects_scored": f"dialects with a scored judgment, of {len(dialects)}"}),
        Section(heading="Heatmap", image_png=png, image_alt="model by dialect heatmap"),
    ]

    # the gap with bootstrap CIs
    cube, _ = qa.score_cube(scores, models, dialects)
    gaps = qa.gap_table(scores, models, dialects, n_resamples=opts.n_resamples, seed=task.exp.seed, max_score=hi)
    _csv(gaps, out_dir / "qa_bias_gap.csv")
    cells = gaps[(gaps.model != qa.ALL) & (gaps.dialect != qa.ALL)]
    gap_png = gap_ci_plot(cells, f"Gap per model and dialect, judge {judge.id}", out_dir / "qa_bias_gap",
                          xlabel=f"gap ({top} − score), 95% CI") if len(cells) else None
    sections += [
        Section(heading=f"Gap ({top} − score) with 95% bootstrap CIs",
                table=gaps[(gaps.model == qa.ALL) | (gaps.dialect == qa.ALL)].reset_index(drop=True),
                text=f"The {rubrics[judge.id].name} score already compares each dialect answer with the standard "
                     f"answer, so the gap is {top} − score. Percentile bootstrap over items "
                     f"({opts.n_resamples:,} resamples, seed {task.exp.seed}); one item resample is shared by all "
                     "cells, so the 'all' rows are bootstrapped consistently. Shown: per model and per dialect; "
                     "every model × dialect cell is in qa_bias_gap.csv and the plot.",
                legend=_gap_legend(lo, hi)),
        Section(heading="Gap per model × dialect", image_png=gap_png, image_alt="gap with confidence intervals"),
    ]

    # multi-judge validation (Table 5)
    if secondaries:
        sections += _agreement_sections(frame, judge.id, secondaries, models, dialects, opts, out_dir,
                                        metadata, rubrics)
    else:
        sections.append(Section(heading="Multi-judge validation", text="No secondary judge (role: secondary) "
                                "in the experiment, so there is no agreement table."))

    # breakdowns
    facets = load_item_facets(store)
    with_facets = scores[["model_id", "item_id", "final_score"]].merge(
        facets, on="item_id", how="left") if len(scores) else scores.assign(question_type=None, domain=None)
    for by, name, heading in (("question_type", "qa_bias_by_question_type.csv", "By question type"),
                              ("domain", "qa_bias_by_domain.csv", "By domain")):
        tab = qa.breakdown(with_facets, by, models, n_resamples=opts.n_resamples, seed=task.exp.seed)
        _csv(tab, out_dir / name)
        what = by.replace("_", " ")
        view = breakdown_view(tab, by)
        groups = [str(c) for c in view.columns if c not in ("model", qa.ALL)]
        sections.append(Section(
            heading=heading, table=view,
            text=f"Mean final score per model and {what}, all dialects pooled, with its 95% percentile-bootstrap "
                 f"interval in brackets: items resampled with all their judgments ({opts.n_resamples:,} "
                 f"resamples, seed {task.exp.seed}), as the gaps above. n, the mean and the interval bounds are "
                 f"columns of {name}.",
            legend={"model": "the model's id; model_avg = mean of each column over the models scored there",
                    **({", ".join(groups): f"mean final score ({_num(lo)}–{top}) [95% CI] on items of that "
                                           f"{what}, (n scored judgments); (none) = items without a {what}; "
                                           "no interval with fewer than 2"} if groups else {}),
                    qa.ALL: f"the model's judgments of every {what} pooled"}))
    sizes = qa.model_size_table(table, task.generation_models(), max_score=hi, gaps=gaps)
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
                        "mean_gap": f"{top} − avg score",
                        "gap_ci_low, gap_ci_high": "95% percentile-bootstrap interval of mean_gap (the gap "
                                                   "table's row for the model: items resampled)",
                        "dialects_scored": f"dialects scored, of {len(dialects)}"}),
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
                        "mean_diff": f"mean(model_a − model_b) over those pairs (score {_num(lo)}–{top})",
                        "t": "paired t statistic", "p_t_holm": "its Holm-adjusted two-sided p",
                        "p_wilcoxon_holm": "Holm-adjusted two-sided p of the Wilcoxon signed-rank test"}),
    ]

    counts = _counts(scores, models)
    _csv(counts, out_dir / "qa_bias_counts.csv")
    sections.append(Section(
        heading="Judgment counts", table=counts,
        text="Judgments of the primary judge per model.",
        legend=COUNTS_LEGEND))
    sections += _review_sections(task, store, out_dir)
    sections.append(instructions)

    n_scored = int(scores.final_score.notna().sum())
    mean = float(np.nanmean(scores.final_score)) if n_scored else None
    metadata.update({"judgments": len(scores), "scored": n_scored,
                     "mean score": "— (nothing scored)" if mean is None else f"{mean:.3f}"})
    return ReportContent(title=f"{task.exp.name}: QA dialect bias", sections=sections, metadata=metadata)


def breakdown_view(tab: pd.DataFrame, by: str) -> pd.DataFrame:
    """The long breakdown (`qa.breakdown`) as a model × group table of "mean [ci_low, ci_high] (n)" cells."""
    def cell(r: Any) -> str:
        if r.n == 0 or np.isnan(r.mean_score):
            return "—"
        ci = "" if np.isnan(r.ci_low) else f" [{r.ci_low:.2f}, {r.ci_high:.2f}]"
        return f"{r.mean_score:.2f}{ci} ({r.n})"

    if tab.empty:
        return pd.DataFrame(columns=["model", qa.ALL])
    shown = tab.assign(_cell=[cell(r) for r in tab.itertuples()])
    order = list(dict.fromkeys(shown.model))
    columns = list(dict.fromkeys(shown[by]))
    view = shown.pivot(index="model", columns=by, values="_cell").reindex(index=order, columns=columns)
    view = view.reset_index()
    view.columns.name = None
    return view


def _gap_legend(lo: float, hi: float) -> dict[str, str]:
    return {
        "model": "the model; all = mean over the models scored in every dialect",
        "dialect": "the dialect; all = mean over the model's dialects (— when one is missing)",
        "n": "scored judgments in the cell(s)", "mean_score": f"mean final score ({_num(lo)}–{_num(hi)})",
        "gap": f"{_num(hi)} − mean_score",
        "ci_low, ci_high": "95% percentile-bootstrap interval of the gap (— with fewer than 2 scored judgments)",
    }

COUNTS_LEGEND = {
    "model": "the model's id", "judgments": "latest judgment per (item, dialect)",
    "scored": "judgments with a score (judge's or human's)",
    "unscored (parse failed)": "the judge's answer was not JSON of the rubric's shape (keys missing or unknown) "
                               "after repair and one re-ask; never scored 0",
    "unscored (invalid values)": "the judge's answer parsed but its values failed validation (out of range, wrong "
                                 "type) after one re-ask; never scored 0",
    "clipped (out of range)": "scored with a value outside its field's range clipped to it (rubric `out_of_range: "
                              "clip`): flagged and sent to review; 0 under the default `reask`",
    "zeroed (script/refusal)": "scored 0: judge and code agree the answer is not in the script or a refusal, "
                               "or the code finds it clearly not in the script",
    "needs review": "low confidence or a judge/code disagreement: sent to human review",
    "pending review": "needs review, no human score yet",
    "overridden": "a human score replaces the judge's", "changed by review": "the human score differs",
}

def _agreement_legend(lo: float, hi: float) -> dict[str, str]:
    return {**AGREEMENT_LEGEND, "mean_abs_diff": f"mean |primary − secondary| ({_num(lo)}–{_num(hi)})"}


AGREEMENT_LEGEND = {
    "primary, secondary": "the two judges compared (judge scores, not human overrides)",
    "scope, group": "overall, per dialect or per model, and which one",
    "n": "pairs where both judges scored", "ccc": "Lin's concordance correlation C (population moments)",
    "cbs": "critical bias sensitivity: recall on primary < threshold × (1 − normalised MAE)",
    "pearson": "Pearson r", "spearman": "Spearman ρ", "mean_abs_diff": "mean |primary − secondary| (0–10)",
    "pass": "PASS when C and CBS reach the thresholds, else FAIL; empty when undefined",
    "note": "why a value is empty", "dropped_unscored": "pairs dropped because either judgment is unscored",
}


def _shared_fields(primary: Rubric, secondary: Rubric) -> dict[str, range | None]:
    """The numeric fields both rubrics have (by name), in the primary's order, with their integer labels
    (None: a `number` field on either side, compared by no kappa)."""
    out: dict[str, range | None] = {}
    other = {f.name: f for f in secondary.numeric_fields}
    for f in primary.numeric_fields:
        g = other.get(f.name)
        if g is None:
            continue
        lows, highs = (f.minimum, g.minimum), (f.maximum, g.maximum)
        if f.type == g.type == "integer" and lows[0] is not None and lows[1] is not None \
                and highs[0] is not None and highs[1] is not None:
            out[f.name] = range(int(min(lows[0], lows[1])), int(max(highs[0], highs[1])) + 1)
        else:
            out[f.name] = None
    return out


def _score_name(rubric: Rubric, lo: float, hi: float) -> str:
    return f"{'RLAIF' if rubric.name == 'rlaif' else rubric.name} score, {_num(lo)}–{_num(hi)}"


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def _agreement_sections(frame: pd.DataFrame, primary: str, secondaries: list[str], models: list[str],
                        dialects: list[str], opts: Any, out_dir: Path, metadata: dict[str, Any],
                        rubrics: dict[str, Rubric]) -> list[Section]:
    k = opts.agreement_min_pairs
    target = rubrics[primary].score_bounds
    lo, hi = target or (0.0, 10.0)
    frame = qa.rescale_scores(frame, {j: rubrics[j].score_bounds for j in secondaries}, target)
    agree = qa.agreement_table(frame, primary, secondaries, ccc_min=opts.agreement_ccc_min,
                               cbs_min=opts.agreement_cbs_min, threshold=opts.cbs_threshold, models=models,
                               dialects=dialects, min_pairs=k, scale=hi - lo)
    _csv(agree, out_dir / "qa_bias_judge_agreement.csv")
    shared = {sec: _shared_fields(rubrics[primary], rubrics[sec]) for sec in secondaries}
    kappa = pd.concat([qa.likert_kappa(frame, primary, [sec], list(shared[sec]), labels=shared[sec], min_pairs=k)
                       for sec in secondaries], ignore_index=True)
    _csv(kappa, out_dir / "qa_bias_judge_kappa.csv")
    fields = pd.concat([qa.field_agreement(frame, primary, [sec], list(shared[sec]), min_pairs=k)
                        for sec in secondaries], ignore_index=True)
    _csv(fields, out_dir / "qa_bias_judge_fields.csv")
    rescaled = [s for s in secondaries if rubrics[s].score_bounds not in (None, target)]
    alpha, units = qa.interval_alpha(frame, [primary, *secondaries], min_pairs=k)
    alpha_df = pd.DataFrame([{"judges": ", ".join([primary, *secondaries]), "units": units,
                              "alpha_interval": alpha, "note": qa.undefined_note(units, alpha, k)}])
    _csv(alpha_df, out_dir / "qa_bias_judge_alpha.csv")
    panels = []
    for sec in secondaries:
        pairs, _ = qa.pair_judges(frame, primary, sec)
        panels.append((sec, pairs.p.to_numpy(float), pairs.s.to_numpy(float)))
    scatter = agreement_scatter(panels, f"{primary} (primary) score", out_dir / "qa_bias_agreement_scatter",
                                lim=(lo, hi))
    overall = agree[agree.scope == "overall"]
    for _, r in overall.iterrows():
        c = "undefined" if pd.isna(r.ccc) else f"{r.ccc:.3f}"
        cbs = "undefined" if pd.isna(r.cbs) else f"{r.cbs:.3f}"
        metadata[f"agreement {r.secondary}"] = f"C {c}, CBS {cbs}, {r['pass'] or 'no verdict'} (n = {r.n})"
    return [
        Section(heading="Multi-judge validation (Table 5)", table=agree,
                text=f"Each secondary judge vs the primary ({primary}) on the same (model, item, dialect). "
                     + (f"Judges on another rubric ({', '.join(f'{s}: {rubrics[s].name}' for s in rescaled)}) are "
                        f"compared on scores rescaled to the primary's range {_num(lo)}–{_num(hi)}. "
                        if rescaled else "")
                     + f"PASS: C ≥ {opts.agreement_ccc_min} and CBS ≥ {opts.agreement_cbs_min}; CBS uses the "
                     f"critical set primary < {opts.cbs_threshold} and is undefined (empty, FAIL) when that set "
                     f"is empty. Over fewer than {k} pairs (options.agreement_min_pairs) agreement is undefined: "
                     "C, CBS and the correlations are empty and there is no PASS/FAIL.",
                legend=_agreement_legend(lo, hi)),
        Section(heading="Agreement scatter", image_png=scatter,
                image_alt="primary vs secondary judge scores"),
        Section(heading="Field agreement (weighted Cohen's kappa)", table=kappa,
                text="Quadratic-weighted Cohen's kappa per rubric field (labels: the field's integer scale) "
                     "between the primary and each secondary, over pairs where both judges returned the field; "
                     "only fields both rubrics have (same name) are compared.",
                legend={"primary, secondary": "the two judges", "field": "the rubric field (e.g. a Likert statement)",
                        "n": "pairs with the field from both judges",
                        "kappa_quadratic": f"quadratic-weighted kappa; — over fewer than {k} pairs or without "
                                           "variation", "note": "why kappa is empty"}),
        Section(heading="Field agreement (Lin's C, alpha)", table=fields,
                text="Lin's concordance correlation C and Krippendorff's interval alpha per rubric field between "
                     "the primary and each secondary, over the units where both judges returned the field; only "
                     "fields both rubrics have (same name) are compared.",
                legend={"primary, secondary": "the two judges", "field": "the rubric field",
                        "n": "pairs with the field from both judges",
                        "ccc": f"Lin's C of the field values; — over fewer than {k} pairs or without variation",
                        "alpha_interval": "Krippendorff's alpha (interval) of the two judges' field values",
                        "note": "why C is empty"}),
        Section(heading="Krippendorff's alpha", table=alpha_df,
                text=f"Interval alpha of the judge scores ({_num(lo)}–{_num(hi)}) of all judges over (model, item, "
                     "dialect) units rated by at least two judges.",
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


def route_dialects(frame: pd.DataFrame, scores: pd.DataFrame, routes: dict[str, str]) -> pd.DataFrame:
    """The primary judge's rows with, in each routed dialect, the judge score of the judge it is routed to
    (`review.on_miscalibrated: <judge id>`): a human score still wins; no judgment of that judge = unscored."""
    out = scores.copy()
    keys = ["model_id", "item_id", "variant"]
    for dialect, other in routes.items():
        alt = frame.loc[(frame.judge_id == other) & (frame.variant == dialect), [*keys, "judge_score"]]
        mask = (out.variant == dialect).to_numpy()
        if not mask.any():
            continue
        merged = out.loc[mask, keys].astype(str).merge(alt.astype({k: str for k in keys}), on=keys, how="left")
        out.loc[mask, "judge_score"] = merged["judge_score"].to_numpy(dtype=float)
        human = out.loc[mask, "human_score"]
        out.loc[mask, "final_score"] = human.where(human.notna(), out.loc[mask, "judge_score"])
    return out


def _review_sections(task: QABiasTask, store: Store, out_dir: Path) -> list[Section]:
    """Human review: agreement between annotators and each judge's calibration per dialect (SPEC §6)."""
    from dialectbias.review import review_summary

    summary = review_summary(store, task.exp, task.rubrics)
    if summary.calibration.empty and summary.agreement.empty:
        return [Section(heading="Human review: judges and annotators", text="No human scores yet: review in "
                        "the app (`dialectbias review serve`) or import a filled CSV (`dialectbias review import`).")]
    _csv(summary.calibration, out_dir / "qa_bias_judge_calibration.csv")
    _csv(summary.agreement, out_dir / "qa_bias_annotator_agreement.csv")
    warnings = "".join(f" WARNING: {w}." for w in summary.warnings)
    r = task.exp.review
    return [
        Section(heading="Judges against human scores, per dialect", table=summary.calibration,
                text=f"Each judge's own score against the human scores of the same answers ({summary.human}), "
                     f"per dialect. Thresholds: CCC ≥ {r.min_ccc:g}, CBS ≥ {r.min_cbs:g}, kappa ≥ {r.min_kappa:g} "
                     f"over ≥ {r.calibration_min_pairs} judgments; {summary.snapshots} snapshot(s) stored "
                     f"(`dialectbias review calibration` adds one).{warnings}",
                legend=JUDGE_CALIBRATION_LEGEND, empty="none: no judgment has a human score yet"),
        Section(heading="Agreement between annotators", table=summary.agreement,
                text="Items scored by two or more annotators (review.overlap), per queue and rated value.",
                legend=ANNOTATOR_AGREEMENT_LEGEND, empty="none: no item has two annotators yet"),
    ]

