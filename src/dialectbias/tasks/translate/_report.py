"""Report of a translate experiment: every translation with its status, and counts per target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dialectbias.dialectid import VERDICTS
from dialectbias.report import ReportContent, Section
from dialectbias.store import Store
from dialectbias.tasks.translate._results import Translation, count_translations, dialect_id_counts, failure_text

if TYPE_CHECKING:
    from dialectbias.tasks.translate._task import TranslateTask

MAX_FAILED_EXAMPLES = 20

ROW_LEGEND = {
    "item_id": "the item",
    "target": "the variant written (a dialect or a language)",
    "field": "the part of the source variant (text: a plain-string variant; else the key, e.g. question, options)",
    "status": "ok, or why it is not a variant: empty, wrong_script, echo (the prompt's own lines or the source "
              "unchanged), misaligned (a list not returned one line per element), request_failed, pending",
    "reason": "the post-processing's or the call's explanation",
    "source": "the source text (a list field: JSON list)",
    "translation": "the post-processed translation (a list field: JSON list); empty unless ok",
    "output": "the model's raw answer",
    "examples": "ids of the retrieved standard/dialect pairs shown in the prompt",
    "transcripts": "ids of the retrieved dialect-only transcripts shown as style context (options.transcript_k)",
    "leaked": "the source text is the standard side of a pair in the index (empty: no index)",
    "prompt": "the rendered prompt sent to the translator",
    "request_id": "the request in the store",
    "dialect_verdict": "options.dialect_id: ok, other_dialect, standard, uncertain (a wrong label below "
                       "dialect_id_min_probability) or not_covered (the model has no such label); empty: not checked",
    "dialect_predicted": "options.dialect_id: the label the translation reads as",
    "dialect_probability": "options.dialect_id: its probability",
}
DIALECT_ID_LEGEND = {
    "target": "the dialect written",
    "verdict": ROW_LEGEND["dialect_verdict"],
    "n": "translations (item × field group) with this verdict",
    "share": "n / translations of this target checked",
}
TARGET_LEGEND = {
    "target": ROW_LEGEND["target"],
    "requests": "translation requests (item × field group)",
    "translated": "answers that passed post-processing",
    "failed": "answers that did not, by reason",
    "pending": "requests not answered yet",
    "variants": "items with every field group of this target translated (exported as a variant)",
    "transcript_prompts": "requests whose prompt showed dialect-only transcripts as style context "
                          "(options.transcript_k; 0: none, e.g. the index has none of this dialect)",
    "transcripts_per_prompt": "mean transcripts shown per such request (empty when none)",
}


def write_translate_report(task: TranslateTask, store: Store, out_dir: Path) -> ReportContent:
    rows = task.translations(store)
    title = f"{task.exp.name}: translation into {', '.join(task.targets)}"
    if not rows:
        return ReportContent(title=title, sections=[Section(
            heading="No translations yet", text="No translate request has been built: run `dialectbias run` first.")])
    table = pd.DataFrame([{
        "item_id": t.item_id, "target": t.target, "field": t.field, "status": t.status, "reason": t.reason,
        "source": json.dumps(list(t.source), ensure_ascii=False) if t.is_list else (t.source[0] if t.source else ""),
        "translation": (json.dumps(t.text, ensure_ascii=False) if isinstance(t.text, list) else t.text) or "",
        "output": t.output or "", "prompt": t.prompt, "examples": " ".join(t.examples),
        "transcripts": " ".join(t.transcripts),
        "leaked": "" if t.leaked is None else t.leaked, "request_id": t.request_id, **_dialect_columns(t)}
        for t in rows])
    table.to_csv(out_dir / "translate_translations.csv", index=False)
    per_target = []
    for target in task.targets:
        mine = [t for t in rows if t.target == target]
        c = count_translations(mine)
        shown = [len(t.transcripts) for t in mine if t.transcripts]
        per_target.append({"target": target, "requests": c.requests, "translated": c.translated,
                           "failed": failure_text(c.failed) or "0", "pending": c.pending, "variants": c.variants,
                           "transcript_prompts": len(shown),
                           "transcripts_per_prompt": sum(shown) / len(shown) if shown else None})
    by_target = pd.DataFrame(per_target)
    by_target.to_csv(out_dir / "translate_by_target.csv", index=False)
    total = count_translations(rows)
    dialect_id = _dialect_id_table(rows, list(task.targets))
    if task.options.dialect_id:
        dialect_id.to_csv(out_dir / "dialect_id.csv", index=False)
    failed = table[~table.status.isin(["ok", "pending"])].head(MAX_FAILED_EXAMPLES)
    sections = [
        Section(heading="Translations per target", table=by_target, legend=TARGET_LEGEND,
                text="Answers are post-processed (quotes, labels, preambles, explanations and echoed prompt lines "
                     "removed); empty, wrong-script, echoed and misaligned answers are failures, never variants. "
                     "Every translation is in translate_translations.csv."),
        Section(heading="Failed translations", table=failed[["item_id", "target", "field", "status", "reason",
                                                             "output"]],
                legend=ROW_LEGEND, empty="none",
                text=f"The first {len(failed)} of {total.n_failed} failures." if total.n_failed else ""),
    ]
    if task.options.dialect_id:
        flagged = int(dialect_id[dialect_id.verdict.isin(["other_dialect", "standard"])].n.sum())
        sections.append(Section(
            heading="Dialect identification", table=dialect_id, legend=DIALECT_ID_LEGEND, empty="nothing checked",
            text=f"Each usable translation into a dialect is labelled by the dialect identifier "
                 f"{task.options.dialect_id} ({flagged} read as another dialect or as standard with probability ≥ "
                 f"{task.options.dialect_id_min_probability}). A flag, not a failure: flagged variants are still "
                 "exported; the per-translation verdicts are in translate_translations.csv and in the exported "
                 "items' translation.<variant>.dialect_id."))
    leak = (f"{total.leaked_items} of {total.items}" if total.leak_checked else "not checked (no index)")
    return ReportContent(title=title, sections=sections, metadata={
        "translator": task.exp.role("translator").id, "translated": total.translated,
        "failed": total.n_failed, "variants complete": total.variants, "leaked items": leak})


def _dialect_columns(t: Translation) -> dict[str, Any]:
    c = t.dialect_check
    return {"dialect_verdict": c.verdict if c else "", "dialect_predicted": c.predicted if c else "",
            "dialect_probability": round(c.probability, 4) if c else ""}


def _dialect_id_table(rows: list[Translation], order: list[str]) -> pd.DataFrame:
    """One row per target × verdict: the number of checked translations and their share of the target's."""
    out: list[dict[str, str | int | float]] = []
    for target, counts in dialect_id_counts(rows, order).items():
        total = sum(counts.values())
        out.extend({"target": target, "verdict": v, "n": counts[v], "share": round(counts[v] / total, 4)}
                   for v in VERDICTS if counts.get(v))
    return pd.DataFrame(out, columns=["target", "verdict", "n", "share"])
