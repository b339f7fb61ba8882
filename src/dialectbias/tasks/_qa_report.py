"""Tables and HTML sections of the qa_bias report (SPEC §4 P3 Reports; paper Table 4)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dialectbias.report import Section, heatmap
from dialectbias.store import Store

if TYPE_CHECKING:
    from dialectbias.tasks.qa_bias import QABiasTask

OVERRIDE_KIND = "rlaif_override"

# The latest judgment per (judge, model, item, variant), with a human override when one exists.
FINAL_SCORES_SQL = f"""
SELECT j.request_id, j.judge_id, j.model_id, j.item_id, j.variant, j.score AS judge_score,
       o.score AS human_score, CASE WHEN o.target_id IS NULL THEN j.score ELSE o.score END AS final_score,
       j.confidence, j.parse_status, j.needs_review, j.flagged, j.reason, o.annotator
FROM judgments j
LEFT JOIN (SELECT target_id, json_extract(value, '$.score') AS score, annotator, MAX(annotation_id)
           FROM annotations WHERE kind = '{OVERRIDE_KIND}' GROUP BY target_id) o
       ON o.target_id = j.request_id
WHERE j.rowid IN (SELECT MAX(rowid) FROM judgments GROUP BY judge_id, model_id, item_id, variant)
"""


def final_scores(store: Store, judge_id: str, model_ids: list[str]) -> pd.DataFrame:
    marks = ",".join("?" * len(model_ids))
    rows = store.query(f"SELECT * FROM ({FINAL_SCORES_SQL}) WHERE judge_id = ? AND model_id IN ({marks})",
                       (judge_id, *model_ids))
    cols = ["request_id", "judge_id", "model_id", "item_id", "variant", "judge_score", "human_score",
            "final_score", "confidence", "parse_status", "needs_review", "flagged", "reason", "annotator"]
    return pd.DataFrame([tuple(r) for r in rows], columns=cols)


def model_by_dialect(scores: pd.DataFrame, models: list[str], dialects: list[str]) -> pd.DataFrame:
    """Mean final score per model × dialect, `avg` = mean of the model's dialect columns (macro),
    rows sorted by avg descending, and a last `dialect_avg` row (mean of each column over models)."""
    scored = scores.dropna(subset=["final_score"])
    matrix = scored.pivot_table(index="model_id", columns="variant", values="final_score", aggfunc="mean")
    matrix = matrix.reindex(index=models, columns=dialects)
    matrix["avg"] = matrix[dialects].mean(axis=1)
    matrix = matrix.sort_values("avg", ascending=False, kind="stable")
    matrix.loc["dialect_avg"] = matrix[dialects].mean(axis=0).tolist() + [matrix["avg"].mean()]
    out = matrix.reset_index().rename(columns={"index": "model", "model_id": "model"})
    out.columns.name = None
    return out


def _counts(scores: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    rows = []
    for m in models:
        s = scores[scores.model_id == m]
        rows.append({"model": m, "judgments": len(s), "scored": int(s.final_score.notna().sum()),
                     "unscored (parse failed)": int((s.parse_status == "failed").sum()),
                     "zeroed (script/refusal)": int(((s.parse_status != "failed") & s.reason.notna()).sum()),
                     "needs review": int(s.needs_review.sum()), "overridden": int(s.human_score.notna().sum())})
    return pd.DataFrame(rows)


def dialect_order(task: QABiasTask, scores: pd.DataFrame) -> list[str]:
    present = [v for v in scores.variant.unique().tolist() if v != "standard"]
    if task.exp.variants:
        return [v for v in task.exp.variants if v in present]
    return sorted(present)


def write_qa_report(task: QABiasTask, store: Store, out_dir: Path) -> dict[str, Any]:
    judge = task.exp.primary_judge
    models = [m.id for m in task.exp.models]
    if judge is None:
        return {"title": f"{task.exp.name}: qa_bias", "sections": [Section(
            heading="No judge", text="The experiment has no judge, so there are no scores to report. "
                                     "Add a judge with role: primary and run again.")]}
    scores = final_scores(store, judge.id, models)
    dialects = dialect_order(task, scores)
    table = model_by_dialect(scores, models, dialects)
    table.to_csv(out_dir / "qa_bias_model_by_dialect.csv", index=False)
    counts = _counts(scores, models)
    counts.to_csv(out_dir / "qa_bias_counts.csv", index=False)
    body = table[table.model != "dialect_avg"].set_index("model")[dialects]
    png = heatmap(body, f"RLAIF score (0–10), judge {judge.id}", out_dir / "qa_bias_heatmap",
                  vmin=0, vmax=10) if len(body) and len(dialects) else None
    sections = [
        Section(heading="Model × dialect (RLAIF score, 0–10)", table=table,
                text=f"Mean final score of the primary judge ({judge.id}) per model and dialect; human review "
                     "overrides replace judge scores; unscored judgments are excluded and counted below. "
                     "avg = mean over the model's dialect columns; rows sorted by avg."),
        Section(heading="Heatmap", image_png=png, image_alt="model by dialect heatmap"),
        Section(heading="Judgment counts", table=counts,
                text="Unscored judgments failed to parse after repair and one re-ask; they are never scored 0. "
                     "Zeroed: script check or refusal (by the judge or the code)."),
    ]
    n_scored = int(scores.final_score.notna().sum())
    mean = float(np.nanmean(scores.final_score)) if n_scored else float("nan")
    return {"title": f"{task.exp.name}: QA dialect bias", "sections": sections,
            "metadata": {"primary judge": judge.id, "judgments": len(scores), "scored": n_scored,
                         "mean score": f"{mean:.3f}"}}
