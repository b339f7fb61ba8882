"""The `judgments` row of one finalized judge request: what every task with a judge stage writes."""

from __future__ import annotations

import sqlite3
from typing import Any

from dialectbias.judges._judgment import JudgmentValues
from dialectbias.run._stage import Outcome
from dialectbias.store import dumps


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
