"""The SQLite run store."""

from dialectbias.store._content import TEXT_REF_MIN_CHARS, ContentRow, Packed, pack_messages, pack_schema
from dialectbias.store._judgments import (
    DERIVED_COLUMNS,
    HUMAN_SCORE_MODES,
    JSON_COLUMNS,
    JudgeCounts,
    JudgeYield,
    JudgmentRecord,
    StoredJudgment,
    StoredOverride,
    get_judgment,
    human_override_sql,
    human_overrides,
    human_score_label,
    iter_judgments,
    judge_counts,
    judge_yields,
    judgment_columns,
    judgments_to_rescore,
    latest_overrides,
    overrides_to_rescore,
    update_judgments,
    update_overrides,
)
from dialectbias.store._kinds import OVERRIDE_KIND
from dialectbias.store._lock import RunLock
from dialectbias.store._owner import StoreOwner, check_owner, claim_store, earlier_stores
from dialectbias.store._records import ResultCounts, StageResult
from dialectbias.store._schema import SCHEMA_VERSION
from dialectbias.store._store import PARTS_KEY, REASK_SUFFIX, Store, dumps, dumps_ordered

__all__ = ["DERIVED_COLUMNS", "HUMAN_SCORE_MODES", "JSON_COLUMNS", "OVERRIDE_KIND", "PARTS_KEY", "REASK_SUFFIX",
           "SCHEMA_VERSION", "TEXT_REF_MIN_CHARS", "ContentRow", "JudgeCounts", "JudgeYield", "JudgmentRecord",
           "Packed", "ResultCounts", "RunLock", "StageResult", "Store", "StoreOwner", "StoredJudgment",
           "StoredOverride", "check_owner", "claim_store", "dumps", "dumps_ordered", "earlier_stores",
           "get_judgment", "human_override_sql", "human_overrides", "human_score_label", "iter_judgments",
           "judge_counts", "judge_yields", "judgment_columns", "judgments_to_rescore", "latest_overrides",
           "overrides_to_rescore", "pack_messages", "pack_schema", "update_judgments", "update_overrides"]
