"""Report of the `csu` task: `csu_scores.csv` (contract: model, variant, strategy, domain, n, exact_match —
percent, unrounded — bertscore_f1, abstained, abstained_share, answers; a domain `all` row), Table 3 style
deltas of exact match vs standard Bengali, the paired t-test (App. G.1), strategies (RQ4), language-constraint
violations and every answer (`csu_answers.csv`)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dialectbias.metrics import bertscore_f1, comet_scores
from dialectbias.report import ReportContent, Section
from dialectbias.store import Store
from dialectbias.tasks.vlm._csu_score import FAILED_PLACEHOLDER, add_metric, score_table
from dialectbias.tasks.vlm._report import KEY_LEGEND, PAIRED_LEGEND, VIOLATION_LEGEND, _flat, _plot, _save
from dialectbias.tasks.vlm._stats import ALL, deltas, paired_standard_vs_dialects, strategy_comparison, violation_table

if TYPE_CHECKING:
    from dialectbias.tasks.vlm._csu import CSUTask

#: the metric columns of csu_scores.csv, in order (a metric not computed is an empty column)
METRICS = ("bertscore_f1",)


def scored_answers(task: CSUTask, store: Store) -> tuple[list[dict[str, Any]], list[str]]:
    """Every answer row with its metric columns (BERTScore F1 when `options.bertscore_model` is set, else
    None; COMET when `options.comet_checkpoint` is set, src = mt's reference as the released code), and the
    metric columns. Computed when the report is built, so they follow the settings as they are now."""
    rows = task.answers(store)
    o = task.options
    if o.bertscore_model:
        add_metric(rows, "bertscore_f1", partial(bertscore_f1, model_path=task.exp.resolve(o.bertscore_model),
                                                 num_layers=o.bertscore_layers, key="options.bertscore_model"))
    else:
        for r in rows:
            r["bertscore_f1"] = None
    if not o.comet_checkpoint:
        return rows, list(METRICS)
    checkpoint = task.comet_checkpoint()
    add_metric(rows, "comet", lambda preds, refs: comet_scores(refs, preds, refs, checkpoint,
                                                               batch_size=o.comet_batch_size))
    return rows, [*METRICS, "comet"]


def _denominator(task: CSUTask) -> str:
    o = task.options
    parts = ["answers received"]
    parts.append("abstentions included (wrong)" if o.abstentions == "wrong" else "abstentions excluded")
    parts.append(f"failed requests as wrong ({FAILED_PLACEHOLDER!r})" if o.failed_requests == "wrong"
                 else "failed requests excluded")
    return "; ".join(parts)


def write_csu_report(task: CSUTask, store: Store, out_dir: Path) -> ReportContent:
    title = f"{task.exp.name}: commonsense short answers"
    rows, metrics = scored_answers(task, store)
    if not rows:
        return ReportContent(title=title, sections=[Section(
            heading="No answers yet",
            text="No generation has completed: run `dialectbias run` or `dialectbias import-generations`.")])
    o = task.options
    extra = task.exp.dialects
    scores = _save(score_table(rows, metrics), out_dir, "csu_scores.csv")
    _save(pd.DataFrame(rows).drop(columns=["request_id"]), out_dir, "csu_answers.csv")
    overall = scores[scores["domain"] == ALL]
    table3 = _save(deltas(overall, "exact_match", extra), out_dir, "csu_table3.csv")
    paired = _save(paired_standard_vs_dialects(scores, "exact_match", extra, o.paired_min_conditions), out_dir,
                   "csu_paired_test.csv")
    by_model = _save(_flat(strategy_comparison(scores, "exact_match", "model"), "model"), out_dir,
                     "csu_strategies_by_model.csv")
    violations = _save(violation_table(rows), out_dir, "csu_language_violations.csv")
    failed = sum(r["status"] != "ok" for r in rows)
    machine = sorted({r["variant"] for r in rows if not r["human_validated"]})
    heat = overall.assign(row=overall["model"] + " · " + overall["strategy"]).pivot_table(
        index="row", columns="variant", values="exact_match")
    has_bert = bool(o.bertscore_model)
    legend = {
        **KEY_LEGEND, "n": f"answers in the exact-match denominator ({_denominator(task)})",
        "exact_match": "percent of n equal to the reference after NFKC and whitespace collapsing",
        "bertscore_f1": "mean BERTScore F1 over n against the reference" + (
            "" if has_bert else " (empty: no options.bertscore_model)"),
        "comet": "mean COMET over n (src = ref = the reference, mt = the answer: the released code's convention; "
                 "options.comet_checkpoint)",
        "abstained": f"answers that abstained ({' / '.join(o.abstention_phrases)})",
        "abstained_share": "abstained / answers",
        "answers": "answers received" + (" and failed requests" if o.failed_requests == "wrong" else "")}
    if "comet" not in metrics:
        del legend["comet"]
    sections = [
        Section(heading="Exact match and BERTScore per model × variant × strategy × domain", table=scores,
                legend=legend,
                text=f"{failed} failed requests ({'in n as wrong' if o.failed_requests == 'wrong' else 'outside n'}). "
                     f"Answers read: {o.answer_extraction}. "
                     + (f"Machine (not human-validated) variants: {', '.join(machine)}." if machine else ""),
                image_png=_plot(heat, "CSU exact match (%), all domains", out_dir, "csu_exact_match_heatmap",
                                vmin=0, vmax=100, fmt="{:.1f}"),
                image_alt="heatmap of exact match per model and strategy by variant"),
        Section(heading="Exact-match deltas vs standard Bengali (Table 3 style)", table=table3, legend={
            "model": "the model's id", "strategy": "prompting strategy",
            "variant": "variant; dialect_mean = the mean over the Bengali dialects",
            "exact_match": "exact match (%) over all domains", "delta": "exact match − standard's (points)"}),
        Section(heading="Standard vs dialects: paired t-test (exact match)", table=paired, legend=PAIRED_LEGEND,
                empty="no (model × domain) condition has both standard and dialect answers"),
        Section(heading="Prompting strategies per model (RQ4)", table=by_model,
                legend={"model": "the model's id", **{c: f"exact match (%) with {c}, mean over variants"
                                                      for c in by_model.columns[1:]}}),
        Section(heading="Language-constraint violations", table=violations,
                legend={**VIOLATION_LEGEND, "checked": "answers with letters to check (abstentions not checked)"}),
    ]
    return ReportContent(title=title, sections=sections, metadata={
        "strategies": ", ".join(o.strategies), "temperature": o.temperature,
        "answer extraction": o.answer_extraction, "abstentions": o.abstentions,
        "failed requests": o.failed_requests, "BERTScore encoder": o.bertscore_model or "none",
        "COMET checkpoint": o.comet_checkpoint or "none",
        "machine variants": ", ".join(machine) or "none",
        "models (imported only)": ", ".join(m.id for m in task.imported_models()) or "none"})
