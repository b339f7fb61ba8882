"""What every task with a judge stage shares: the `judgments` row of one finalized judge request, and the judge
stage's yields and summary lines."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from dialectbias.judges._judgment import JudgmentValues
from dialectbias.providers import ModelConfig
from dialectbias.run._stage import Outcome, StageYield
from dialectbias.store import JudgeCounts, Store, dumps, judge_counts, judge_yields


def judgment_row(row: sqlite3.Row, model_id: str, outcome: Outcome, values: JudgmentValues) -> dict[str, Any]:
    """The record of judge request `row` on model `model_id`'s answer, from the evaluated judgment `values`."""
    return {
        "request_id": row["request_id"], "judge_id": row["model_id"], "model_id": model_id,
        "item_id": row["item_id"], "variant": row["variant"], "rubric": values.rubric,
        "raw_output": outcome.output, "source_request_id": outcome.source_request_id,
        "parse_status": values.parse_status, "parsed": None if values.parsed is None else dumps(values.parsed),
        "score": values.score, "confidence": values.confidence, "checks": dumps(values.checks),
        "flags": dumps(values.flags), "clipped": dumps({k: list(v) for k, v in values.clipped.items()}),
        "needs_review": int(values.needs_review), "flagged": int(values.flagged), "reason": values.reason}


def judge_stage_yields(store: Store, judges: Sequence[ModelConfig]) -> list[StageYield]:
    """Per judge: its scored judgments (unscored ones are unusable)."""
    yields = judge_yields(store)
    out = []
    for judge in judges:
        y = yields.get(judge.id)
        scored = y.scored if y else 0
        detail = (f"{scored} of {y.requests} judge requests scored ({y.unscored} unscored: parse failed)"
                  if y and y.requests else "no judgments")
        out.append(StageYield("judge", judge.id, scored, detail))
    return out


def judge_summary_lines(store: Store, judges: Sequence[ModelConfig], review_note: str = "") -> list[str]:
    """One run-summary line per judge: judgments, unscored, and those for human review (`review_note` says why)."""
    counts = judge_counts(store, [j.id for j in judges])
    lines = []
    for judge in judges:
        c = counts.get(judge.id, JudgeCounts())
        lines.append(f"judge {judge.id}: {c.judgments} judgments · {c.unscored} unscored (parse failed) · "
                     f"{c.needs_review} for human review{review_note}")
    return lines
