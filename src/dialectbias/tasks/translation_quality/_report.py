"""Report of a translation_quality experiment: Table 2 and Table 3 of the Bengali dialect-bias paper (§4.1) as
CSV and HTML, the dialect-ID verdicts, the per-row scores, and the run summary's lines."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dialectbias.report import ReportContent, Section
from dialectbias.store import human_score_label
from dialectbias.tasks.translation_quality._tables import (
    ALL,
    VERDICTS,
    TQData,
    dialect_id_table,
    item_rows,
    table2,
    table3,
)

if TYPE_CHECKING:
    from dialectbias.tasks.translation_quality._task import TranslationQualityTask

METRIC_TEXT = {
    "bleu": "corpus BLEU (sacrebleu defaults), 0–100",
    "chrf": "corpus chrF (sacrebleu defaults: chrF2), 0–100",
    "wer": "corpus WER (jiwer) ×100, lower is better",
    "bertscore": "mean BERTScore F1 (the local encoder in options.bertscore_model)",
    "comet": "mean COMET score (options.comet_checkpoint; src = standard source, mt = translation, ref = "
             "human reference)",
    "embedding": "mean cosine of translation and reference embeddings",
}
TABLE2_LEGEND = {
    "system": "the translation system (a data column or a translate experiment)",
    "dialect": "the target dialect (all: every row)",
    "n": "translations scored",
    "failed": "translations that failed post-processing (left out unless options.failed_as_empty)",
    "missing": "rows without a translation by this system",
}
TABLE3_LEGEND = {
    "metric": "the automatic metric or judge (its own scores, before review), normalised to [0, 1] (BLEU, chrF "
              "/100; WER inverted, or as it is with options.wer_in_table3: error_rate; judges /10)",
    "dialect": "the rows compared (all: every human-scored row)",
    "n": "rows with both a human score and this metric",
    "pearson": "Pearson r with the human score /10",
    "spearman": "Spearman ρ with the human score /10",
    "ccc": "Lin's concordance correlation coefficient with the human score /10",
    "metric_mean": "the metric's mean on these rows, normalised",
    "human_mean": "the human scores' mean /10",
    "trusted": "CCC at least options.min_ccc (blank: too few rows)",
    "note": "why a row has no correlation",
}
DIALECT_ID_LEGEND = {
    "system": "the system (reference: the human references themselves, the classifier's baseline)",
    "dialect": "the target dialect (all: every row)",
    "n": "texts checked",
    "ok": "read as the target dialect",
    "other_dialect": "read as another dialect (probability ≥ options.dialect_id_min_probability)",
    "standard": "read as standard language",
    "uncertain": "another label, below the probability",
    "not_covered": "the classifier knows no such dialect",
    "share_ok": "ok / (n − not_covered)",
}


def _fmt(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def _digits(column: str) -> int:
    return 1 if column in ("bleu", "chrf", "wer") else (2 if column.startswith("judge_") else 3)


def _shown_table2(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    shown = []
    for r in rows:
        rec = {k: r[k] for k in ("system", "dialect", "n", "failed", "missing")}
        for c in columns:
            d = _digits(c)
            ci = (f" [{_fmt(r[f'{c}_ci_low'], d)}, {_fmt(r[f'{c}_ci_high'], d)}]"
                  if not math.isnan(r[f"{c}_ci_low"]) else "")
            rec[c] = _fmt(r[c], d) + ci
        shown.append(rec)
    return pd.DataFrame(shown)


def _legend2(data: TQData, confidence: float) -> dict[str, str]:
    legend = dict(TABLE2_LEGEND)
    for c in data.columns():
        text = METRIC_TEXT.get(c) or (f"mean fidelity score of judge {c.removeprefix('judge_')}, 0–10 (a "
                                      "reviewer's score replaces the judge's)")
        legend[c] = f"{text}; [{confidence:.0%} bootstrap CI]"
    return legend


def write_report(task: TranslationQualityTask, data: TQData, out_dir: Path) -> ReportContent:
    o = task.options
    title = f"{task.exp.name}: translation quality of {', '.join(data.systems)}"
    if not data.rows:
        return ReportContent(title=title, sections=[Section(
            heading="No rows yet", text="Nothing is stored yet: run `dialectbias run` first.")])
    t2 = table2(data, o.normalization, failed_as_empty=o.failed_as_empty, n_resamples=o.bootstrap_resamples,
                confidence=o.confidence, seed=task.exp.seed)
    pd.DataFrame(t2).to_csv(out_dir / "translation_quality_by_dialect.csv", index=False)
    pd.DataFrame(item_rows(data)).to_csv(out_dir / "translation_quality_items.csv", index=False)
    sections = [Section(
        heading="Translation quality per system and dialect (Table 2)", table=_shown_table2(t2, data.columns()),
        legend=_legend2(data, o.confidence),
        text=f"Every metric compares a system's translation with the human reference on text normalised as: "
             f"{o.normalization.describe()}. BLEU, chrF and WER are corpus scores (their CIs resample sentences); "
             "the others are means over the translations. translation_quality_by_dialect.csv has every value "
             "and CI bound; translation_quality_items.csv (and `dialectbias export`) the per-row scores."
             + (f" A reviewer's score replaces a judge's ({human_score_label(data.human_score)})." if data.judges
                else ""))]
    t3 = table3(data, min_ccc=o.min_ccc, min_pairs=o.min_pairs, invert_wer=o.wer_in_table3 == "inverted")
    if t3:
        frame = pd.DataFrame(t3)
        frame.to_csv(out_dir / "translation_quality_validation.csv", index=False)
        untrusted = [f"{r['metric']} ({r['dialect']})" for r in t3 if r["trusted"] is False]
        n_rows = len(data.human)
        annotators = max((n for _, n in data.human.values()), default=0)
        sections.append(Section(
            heading="Metrics against human scores (Table 3)", table=frame.round(3), legend=TABLE3_LEGEND,
            text=f"{n_rows} translations scored 0–10 by native speakers (up to {annotators} per translation; "
                 f"{human_score_label(data.human_score)}). A metric whose CCC is below {o.min_ccc:g} for a "
                 "dialect is not to be trusted there"
                 + (f": {', '.join(untrusted)}." if untrusted else "; every metric with enough rows passes.")))
    else:
        sections.append(Section(
            heading="Metrics against human scores (Table 3)",
            text="No human scores yet. Draw the stratified sample (25 translations per dialect by default) with "
                 f"`dialectbias review sample {task.exp.path.name} --queue translation_score`, then score it in the "
                 "review app (`dialectbias review serve`) or through the CSV round trip (`dialectbias review export "
                 "--queue translation_score`, `dialectbias review import`), and run `report` again."))
    if data.dialect_id:
        did = pd.DataFrame(dialect_id_table(data))
        did.to_csv(out_dir / "translation_quality_dialect_id.csv", index=False)
        sections.append(Section(heading="Dialect identification", table=did.round(3), legend=DIALECT_ID_LEGEND,
                                text="How each translation reads to the character n-gram dialect classifier "
                                     f"({o.dialect_id}): an automatic check of dialect fidelity beside the judge. "
                                     "The references' own row is the classifier's accuracy on this data."))
    return ReportContent(title=title, sections=sections, metadata={
        "systems": ", ".join(data.systems), "metrics": ", ".join(data.columns()),
        "normalisation": o.normalization.describe(), "rows": len(data.rows),
        "human-scored translations": len(data.human),
        "bootstrap": f"{o.bootstrap_resamples} resamples, {o.confidence:.0%}, seed {task.exp.seed}"})


def summary(task: TranslationQualityTask, data: TQData) -> list[str]:
    """One line per system (every dialect together), then the human and dialect-ID counts."""
    o = task.options
    t2 = table2(data, o.normalization, failed_as_empty=o.failed_as_empty, n_resamples=0, confidence=o.confidence,
                seed=task.exp.seed)
    lines = []
    for r in (r for r in t2 if r["dialect"] == ALL):
        values = " · ".join(f"{c} {_fmt(r[c], _digits(c))}" for c in data.columns())
        extra = "".join(f" · {r[k]} {k}" for k in ("failed", "missing") if r[k])
        lines.append(f"{r['system']}: {r['n']} translations of {len({x.key for x in data.rows})} rows{extra} · "
                     f"{values}")
    if data.human:
        lines.append(f"human scores: {len(data.human)} translations scored (Table 3 in the report)")
    if data.dialect_id:
        for r in dialect_id_table(data):
            if r["dialect"] == ALL:
                lines.append(f"dialect ID {r['system']}: " + " · ".join(f"{r[v]} {v}" for v in VERDICTS if r[v]))
    return lines
