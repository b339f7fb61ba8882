"""Reports of the BanglaVerse tasks: CSV tables and the HTML sections (BanglaVerse Tables 3–4, App. F–G, RQ4).

VQA: `vqa_accuracy.csv` (contract: model, variant, strategy, domain, n, accuracy — percent, unrounded, with
a domain `all` row), Wald CIs, Table 3 deltas, the paired t-test, domain difficulty, strategies, parse
rules, language violations, flagged items, every answer. Captions: `caption_scores.csv` (the same keys,
each judge's mean score, BERTScore F1, violations, then BLEU and character-level ROUGE-L), the same
analyses on the primary judge's score, the judges' Pearson/Spearman per variant, and the judges' Human
Consistency Score from the `judge_consistency` review queue.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dialectbias.errors import ConfigError
from dialectbias.metrics import bertscore_baseline, bertscore_f1, rescale_with_baseline
from dialectbias.report import ReportContent, Section, heatmap
from dialectbias.store import Store, human_score_label
from dialectbias.tasks.vlm._lexical import LEXICAL_LEGEND, add_rouge_l, lexical_table
from dialectbias.tasks.vlm._lexical import describe as describe_lexical
from dialectbias.tasks.vlm._stats import (
    ALL,
    KEYS,
    accuracy_table,
    deltas,
    domain_difficulty,
    domain_means,
    judge_correlations,
    mean_table,
    paired_standard_vs_dialects,
    strategy_comparison,
    violation_table,
    with_wald,
)

if TYPE_CHECKING:
    from dialectbias.tasks.vlm._caption import CaptionTask
    from dialectbias.tasks.vlm._vqa import VQATask

KEY_LEGEND = {"model": "the model's id", "variant": "standard (Bengali), a Bengali dialect, or a language",
              "strategy": "prompting strategy: zero_shot, few_shot, cot",
              "domain": "the item's domain; all = every domain"}
PAIRED_LEGEND = {
    "strategy": "prompting strategy",
    "conditions": "(model × domain) conditions with a standard value and at least one dialect value",
    "standard_mean, dialect_mean": "mean over the conditions of standard's value and of the dialects' mean",
    "mean_diff": "standard − dialect mean (positive = the dialects do worse)",
    "t, p": "paired t-test over the conditions, two-sided (BanglaVerse App. G.1); — below paired_min_conditions",
}
VIOLATION_LEGEND = {
    "model": "the model's id", "variant": "the variant asked for",
    "answers": "answers received", "checked": "answers with letters to check (VQA: with an answer text)",
    "violations": "answers not written in the variant's script (Bengali, Devanagari, Arabic or Latin)",
    "rate": "violations / checked",
}


def _save(df: pd.DataFrame, out_dir: Path, name: str) -> pd.DataFrame:
    df.to_csv(out_dir / name, index=False)
    return df


def _flat(df: pd.DataFrame, index: str) -> pd.DataFrame:
    out = df.reset_index()
    out.columns = [index, *[str(c) for c in out.columns[1:]]]
    return out


def _plot(matrix: pd.DataFrame, title: str, out_dir: Path, stem: str, **kw: Any) -> bytes | None:
    if matrix is None or matrix.empty:
        return None
    return heatmap(matrix.astype(float), title, out_dir / stem, **kw)


def _caption_terms(path: Path | None) -> pd.Series | None:
    """domain → mean caption score (0–1) of the first judge column of a caption report's caption_scores.csv."""
    if path is None:
        return None
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"options.caption_scores: cannot read {path} ({exc})") from None
    judge = next((c for c in df.columns if c.startswith("judge_") and not c.endswith("_n")), None)
    if judge is None or "domain" not in df:
        raise ConfigError(f"options.caption_scores: {path} has no judge_<id> column (a caption_scores.csv)")
    return df[df["domain"] != ALL].groupby("domain")[judge].mean()


def _vqa_terms(path: Path | None) -> pd.DataFrame | None:
    if path is None:
        return None
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"options.vqa_accuracy: cannot read {path} ({exc})") from None
    missing = {"domain", "strategy", "accuracy"} - set(df.columns)
    if missing:
        raise ConfigError(f"options.vqa_accuracy: {path} lacks column(s) {', '.join(sorted(missing))}")
    return domain_means(df, "accuracy")


def _difficulty_section(table: pd.DataFrame, out_dir: Path, name: str) -> Section:
    _save(table, out_dir, name)
    legend = {"rank": "1 = easiest (lowest f(d))", "domain": "the domain",
              "best_vqa": "the best strategy's accuracy (%)", "caption": "mean caption judge score (0–1)",
              "f_d": "f(d) = (100 − best VQA %) + (100 − 100 × caption score): higher = harder (BanglaVerse Table 4)",
              "partial": "yes: only one of the two terms is known (give the other report's CSV under options)"}
    legend.update({c: f"VQA accuracy (%) with {c[4:]}, mean over models and variants"
                   for c in table.columns if c.startswith("vqa_")})
    return Section(heading="Domain difficulty f(d) (Table 4)", table=table, legend=legend,
                   text="Each domain's means over all models and variants, ranked from easiest to hardest.")


def write_vqa_report(task: VQATask, store: Store, out_dir: Path) -> ReportContent:
    title = f"{task.exp.name}: visual question answering"
    rows = task.answers(store)
    if not rows:
        return ReportContent(title=title, sections=[Section(
            heading="No answers yet",
            text="No generation has completed: run `dialectbias run` or `dialectbias import-generations`.")])
    extra = task.exp.dialects
    answers = pd.DataFrame(rows).drop(columns=["request_id"])
    for column in ("gold", "pred", "raw_index"):  # integers with gaps, never 1.0
        answers[column] = answers[column].astype("Int64")
    _save(answers, out_dir, "vqa_answers.csv")
    acc = _save(accuracy_table(rows), out_dir, "vqa_accuracy.csv")
    ci = _save(with_wald(acc), out_dir, "vqa_accuracy_ci.csv")
    table3 = _save(deltas(acc[acc["domain"] == ALL], "accuracy", extra), out_dir, "vqa_table3.csv")
    paired = _save(paired_standard_vs_dialects(acc, "accuracy", extra, task.options.paired_min_conditions),
                   out_dir, "vqa_paired_test.csv")
    by_domain = domain_means(acc, "accuracy")
    caption_path = task.exp.resolve(task.options.caption_scores) if task.options.caption_scores else None
    difficulty = domain_difficulty(by_domain, _caption_terms(caption_path))
    by_model = _save(_flat(strategy_comparison(acc, "accuracy", "model"), "model"), out_dir,
                     "vqa_strategies_by_model.csv")
    by_variant = _save(_flat(strategy_comparison(acc, "accuracy", "variant"), "variant"), out_dir,
                       "vqa_strategies_by_variant.csv")
    violations = _save(violation_table(rows), out_dir, "vqa_language_violations.csv")
    ok = answers[answers["status"] == "ok"]
    rules = ok.groupby(["model", "strategy", "rule"]).size().unstack(fill_value=0).reset_index() if len(ok) else ok
    conflicts = ok.groupby(["model", "strategy"])["conflict"].sum().rename("conflicts").reset_index() if len(ok) else ok
    rules = _save(rules.merge(conflicts, on=["model", "strategy"]) if len(ok) else pd.DataFrame(), out_dir,
                  "vqa_parse_rules.csv")
    flagged = answers.loc[~answers["answerable"], ["item_id", "variant", "domain"]].drop_duplicates()
    flagged = _save(flagged.sort_values(["item_id", "variant"], ignore_index=True), out_dir,
                    "vqa_unanswerable_items.csv")
    machine = answers.loc[~answers["human_validated"], "variant"].unique().tolist()
    failed = int((answers["status"] != "ok").sum())

    overall = acc[acc["domain"] == ALL]
    heat = overall.assign(row=overall["model"] + " · " + overall["strategy"]).pivot_table(
        index="row", columns="variant", values="accuracy")
    sections = [
        Section(heading="Accuracy per model × variant × strategy × domain", table=ci, legend={
            **KEY_LEGEND, "n": "answers (unparseable ones and items whose answer is not among the options "
                                "included: they are wrong; failed requests excluded)",
            "accuracy": "percent correct", "ci_low, ci_high": "Wald 95% CI, p ± 1.96·sqrt(p(1−p)/n), in percent"},
            text=f"{failed} failed requests are outside n. "
                 + (f"Machine (not human-validated) variants: {', '.join(machine)}." if machine else ""),
            image_png=_plot(heat, "VQA accuracy (%), all domains", out_dir, "vqa_accuracy_heatmap", vmin=0, vmax=100,
                            fmt="{:.1f}"), image_alt="heatmap of accuracy per model and strategy by variant"),
        Section(heading="Deltas vs standard Bengali (Table 3)", table=table3, legend={
            "model": "the model's id", "strategy": "prompting strategy",
            "variant": "variant; dialect_mean = the mean over the Bengali dialects",
            "accuracy": "accuracy (%) over all domains", "delta": "accuracy − standard's accuracy (points)"}),
        Section(heading="Standard vs dialects: paired t-test", table=paired, legend=PAIRED_LEGEND,
                empty="no (model × domain) condition has both standard and dialect answers"),
        _difficulty_section(difficulty, out_dir, "vqa_domain_difficulty.csv"),
        Section(heading="Prompting strategies per model (RQ4)", table=by_model,
                legend={"model": "the model's id", **{c: f"accuracy (%) with {c}, mean over variants"
                                                      for c in by_model.columns[1:]}},
                image_png=_plot(by_domain, "VQA accuracy (%) per domain and strategy", out_dir,
                                "vqa_domain_strategy_heatmap", vmin=0, vmax=100, fmt="{:.1f}"),
                image_alt="heatmap of accuracy per domain and strategy"),
        Section(heading="Prompting strategies per variant (RQ4)", table=by_variant,
                legend={"variant": "the variant", **{c: f"accuracy (%) with {c}, mean over models"
                                                     for c in by_variant.columns[1:]}}),
        Section(heading="How answers were read", table=rules, legend={
            "model": "the model's id", "strategy": "prompting strategy",
            **{c: _RULES.get(c, c) for c in rules.columns if c not in ("model", "strategy", "conflicts")},
            "conflicts": f"answers whose index and quoted text named different options ({task.options.vqa_parse} "
                         "decided)"}),
        Section(heading="Language-constraint violations", table=violations, legend=VIOLATION_LEGEND),
        Section(heading="Items whose answer is not among the options", table=flagged,
                legend={"item_id": "the item", "variant": "the variant", "domain": "its domain"},
                text="They stay in n and can never be correct, as in the released BanglaVerse scorer; "
                     "options.exclude_unanswerable leaves them out.", empty="none"),
    ]
    return ReportContent(title=title, sections=sections, metadata={
        "strategies": ", ".join(task.options.strategies), "vqa_parse": task.options.vqa_parse,
        "temperature": task.options.temperature,
        "models (imported only)": ", ".join(m.id for m in task.imported_models()) or "none",
        "reviewed judge scores": human_score_label(task.exp.review.human_score)})


_RULES = {"index+text": "answers whose index and quoted text agreed", "index": "decided by the index alone "
          "(or by the index over the text with index_first)", "text_exact": "decided by the text, exact match",
          "text_normalized": "decided by the text after normalisation", "text_fuzzy": "decided by a fuzzy text match",
          "none": "unparseable: scored wrong"}


def bertscore_rescaling(task: CaptionTask) -> float | None:
    """The baseline F1 the caption BERTScores are rescaled with, None for raw scores (`bertscore_rescale`)."""
    o = task.options
    if o.bertscore_rescale == "never" or not o.bertscore_baseline or not o.bertscore_model:
        return None
    return bertscore_baseline(task.exp.resolve(o.bertscore_baseline), model_path=task.exp.resolve(o.bertscore_model),
                              num_layers=o.bertscore_layers, key="options.bertscore_model")


def _bertscores(task: CaptionTask, rows: list[dict[str, Any]]) -> bool:
    """Add `bertscore_f1` to the answered rows when `options.bertscore_model` is set; True when it did."""
    if not task.options.bertscore_model:
        return False
    scored = [r for r in rows if r["status"] == "ok" and r["reference"].strip()]
    f1 = bertscore_f1([r["caption"] for r in scored], [r["reference"] for r in scored],
                      model_path=task.exp.resolve(task.options.bertscore_model),
                      num_layers=task.options.bertscore_layers, key="options.bertscore_model")
    baseline = bertscore_rescaling(task)
    if baseline is not None:  # options.bertscore_rescale (docs/departures.md)
        f1 = rescale_with_baseline(f1, baseline)
    for r, value in zip(scored, f1, strict=True):
        r["bertscore_f1"] = value
    return True


def _hcs_section(task: CaptionTask, store: Store, judges: list[str], out_dir: Path) -> Section:
    """The judges' Human Consistency Score from the `judge_consistency` review queue (BanglaVerse §4.3);
    `caption_hcs.csv` has its header and no row while nobody has rated."""
    from dialectbias.review import HCS_COLUMNS, HCS_LEGEND, hcs_table

    hcs = hcs_table(store, judges, [m.id for m in task.generation_models()])
    table = _save(pd.DataFrame(hcs.rows, columns=list(HCS_COLUMNS)), out_dir, "caption_hcs.csv")
    notes = [f"{hcs.ratings} rating(s) in the judge_consistency queue."]
    if hcs.stale:
        notes.append(f"{hcs.stale} rating(s) of judgments that are no longer current (a setting changed) are "
                     "left out.")
    if hcs.unreadable:
        notes.append(f"{len(hcs.unreadable)} unreadable rating(s) left out: " + "; ".join(hcs.unreadable[:3]) + ".")
    return Section(
        heading="Human Consistency Score of the judges (§4.3)", table=table, legend=HCS_LEGEND,
        text="People rate judgments on the 0–100 rubric BanglaVerse adopts from E Sobhani et al. (2026): decision "
             "accuracy 0–50, reasoning alignment 0–40, explanation clarity 0–10. " + " ".join(notes),
        empty="no human ratings yet: rate judgments in the review app's judge_consistency queue (`dialectbias "
              "review add-annotator … --queues judge_consistency`, then `dialectbias review serve`; `dialectbias "
              "review sample --queue judge_consistency` picks 100 per variant first)")


def write_caption_report(task: CaptionTask, store: Store, out_dir: Path) -> ReportContent:
    title = f"{task.exp.name}: image captioning"
    rows = task.captions(store)
    if not rows:
        return ReportContent(title=title, sections=[Section(
            heading="No captions yet",
            text="No generation has completed: run `dialectbias run` or `dialectbias import-generations`.")])
    extra = task.exp.dialects
    judges = [j.id for j in sorted(task.exp.judges, key=lambda j: j.role not in (None, "primary"))]
    has_bert = _bertscores(task, rows)
    columns = [f"judge:{j}" for j in judges] + (["bertscore_f1"] if has_bert else [])
    scores = mean_table(rows, columns)
    viol = pd.DataFrame([r for r in rows if r["status"] == "ok"], columns=["model", "variant", "strategy", "domain",
                                                                            "violation"])
    scores.columns = [c.replace("judge:", "judge_") for c in scores.columns]
    if len(viol):
        viol["violation"] = viol["violation"].fillna(False).astype(bool)
        v_dom = viol.groupby(["model", "variant", "strategy", "domain"])["violation"].sum()
        v_all = viol.groupby(["model", "variant", "strategy"])["violation"].sum()
        scores["violations"] = [int(v_all.get((m, v, s), 0) if d == ALL else v_dom.get((m, v, s, d), 0))
                                for m, v, s, d in zip(scores["model"], scores["variant"], scores["strategy"],
                                                      scores["domain"], strict=True)]
    else:
        scores["violations"] = 0
    add_rouge_l(rows, task.options)
    scores = scores.merge(lexical_table(rows, task.options), on=KEYS, how="left")
    _save(scores, out_dir, "caption_scores.csv")
    _save(pd.DataFrame(rows).drop(columns=["request_id"]), out_dir, "caption_answers.csv")
    sections: list[Section] = []
    legend = {**KEY_LEGEND, "n": "captions received (failed requests excluded)",
              "violations": "captions not written in the variant's script"}
    for j in judges:
        legend[f"judge_{j}"] = f"judge {j}'s mean score (its rubric's score; caption rubric: Overall, 0–1)"
        legend[f"judge_{j}_n"] = f"captions judge {j} scored"
    if has_bert:
        rescaled = bertscore_rescaling(task)
        legend.update({"bertscore_f1": "mean BERTScore F1 against the reference caption" + (
                           f", rescaled with the baseline F1 {rescaled:.4f}: (F − b) / (1 − b)" if rescaled is not None
                           else ", raw (not rescaled with a baseline)"),
                       "bertscore_f1_n": "captions with a reference"})
    legend.update(LEXICAL_LEGEND)
    primary = f"judge_{judges[0]}" if judges else None
    sections.append(Section(heading="Caption scores per model × variant × strategy × domain", table=scores,
                            legend=legend))
    if primary:
        value = scores.assign(score=scores[primary] * 100.0)
        table3 = _save(deltas(value[value["domain"] == ALL], "score", extra), out_dir, "caption_table3.csv")
        paired = _save(paired_standard_vs_dialects(value, "score", extra, task.options.paired_min_conditions),
                       out_dir, "caption_paired_test.csv")
        by_model = _flat(strategy_comparison(value, "score", "model"), "model")
        by_variant = _flat(strategy_comparison(value, "score", "variant"), "variant")
        _save(by_model, out_dir, "caption_strategies_by_model.csv")
        _save(by_variant, out_dir, "caption_strategies_by_variant.csv")
        cap_domain = value[value["domain"] != ALL].groupby("domain")[primary].mean()
        vqa_path = task.exp.resolve(task.options.vqa_accuracy) if task.options.vqa_accuracy else None
        overall = value[value["domain"] == ALL]
        heat = overall.assign(row=overall["model"] + " · " + overall["strategy"]).pivot_table(
            index="row", columns="variant", values="score")
        sections += [
            Section(heading="Deltas vs standard Bengali (Table 3)", table=table3, legend={
                "model": "the model's id", "strategy": "prompting strategy",
                "variant": "variant; dialect_mean = the mean over the Bengali dialects",
                "score": f"judge {judges[0]}'s mean score × 100 over all domains",
                "delta": "score − standard's score (points)"},
                image_png=_plot(heat, f"caption score × 100 ({judges[0]})", out_dir, "caption_heatmap", vmin=0,
                                vmax=100, fmt="{:.1f}"), image_alt="heatmap of caption scores"),
            Section(heading="Standard vs dialects: paired t-test", table=paired, legend=PAIRED_LEGEND,
                    empty="no (model × domain) condition has both standard and dialect captions"),
            _difficulty_section(domain_difficulty(_vqa_terms(vqa_path), cap_domain), out_dir,
                                "caption_domain_difficulty.csv"),
            Section(heading="Prompting strategies per model (RQ4)", table=by_model,
                    legend={"model": "the model's id", **{c: f"score × 100 with {c}, mean over variants"
                                                          for c in by_model.columns[1:]}}),
            Section(heading="Prompting strategies per variant (RQ4)", table=by_variant,
                    legend={"variant": "the variant", **{c: f"score × 100 with {c}, mean over models"
                                                         for c in by_variant.columns[1:]}}),
        ]
    if len(judges) >= 2:
        corr = _save(judge_correlations(rows, judges), out_dir, "caption_judge_correlation.csv")
        sections.append(Section(heading="Agreement between judges (App. F)", table=corr, legend={
            "variant": "the variant; all = every variant", "judge_a, judge_b": "the two judges",
            "n": "captions both scored", "pearson": "Pearson r of their scores (— when undefined)",
            "spearman": "Spearman ρ of their scores", "mean_a, mean_b": "each judge's mean score"}))
    if judges:
        sections.append(_hcs_section(task, store, judges, out_dir))
    violations = _save(violation_table(rows), out_dir, "caption_language_violations.csv")
    sections.append(Section(heading="Language-constraint violations", table=violations, legend=VIOLATION_LEGEND))
    machine = sorted({r["variant"] for r in rows if not r["human_validated"]})
    return ReportContent(title=title, sections=sections, metadata={
        "strategies": ", ".join(task.options.strategies), "temperature": task.options.temperature,
        "judge sees the image": task.options.judge_sees_image,
        "machine variants": ", ".join(machine) or "none",
        "BERTScore encoder": task.options.bertscore_model or "none",
        "BLEU and ROUGE-L": describe_lexical(task.options),
        "models (imported only)": ", ".join(m.id for m in task.imported_models()) or "none"})
