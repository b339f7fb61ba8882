"""The SQLite run store."""

from dialectbias.store._judgments import (
    JSON_COLUMNS,
    OVERRIDE_KIND,
    JudgeCounts,
    JudgeYield,
    JudgmentRecord,
    get_judgment,
    iter_judgments,
    judge_counts,
    judge_yields,
    judgment_columns,
    latest_overrides,
)
from dialectbias.store._lock import RunLock
from dialectbias.store._schema import SCHEMA_VERSION
from dialectbias.store._store import Store, dumps, dumps_ordered

__all__ = ["JSON_COLUMNS", "OVERRIDE_KIND", "SCHEMA_VERSION", "JudgeCounts", "JudgeYield", "JudgmentRecord", "RunLock",
           "Store", "dumps", "dumps_ordered", "get_judgment", "iter_judgments", "judge_counts", "judge_yields",
           "judgment_columns", "latest_overrides"]
