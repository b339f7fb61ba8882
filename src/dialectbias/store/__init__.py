"""The SQLite run store."""

from dialectbias.store._annotations import (
    LatestAnnotation,
    NewAnnotation,
    OverrideOfJudgment,
    add_annotations,
    annotated_targets,
    judgment_overrides,
    latest_annotations,
    replace_annotation,
)
from dialectbias.store._assignments import (
    AnnotatorRow,
    AssignmentRow,
    add_assignments,
    annotator_assignments,
    annotator_by_name,
    annotator_by_token_hash,
    annotator_rows,
    annotator_token_hash,
    assigned_dialects,
    assignment,
    assignment_count,
    assignment_queue,
    queue_holders,
    save_annotator,
)
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
from dialectbias.store._review_reads import (
    ImageAnswer,
    ItemRecord,
    StageOutput,
    first_item_variants,
    image_answers,
    item_domains,
    item_records,
    item_variants,
    judgment_variants,
    ref_outputs,
    request_keys,
    stage_outputs,
    stored_image,
)
from dialectbias.store._schema import SCHEMA_VERSION
from dialectbias.store._snapshots import SnapshotRow, latest_snapshot, save_snapshot_rows, snapshot_rows
from dialectbias.store._store import PARTS_KEY, REASK_SUFFIX, Store, dumps, dumps_ordered

__all__ = ["DERIVED_COLUMNS", "HUMAN_SCORE_MODES", "JSON_COLUMNS", "OVERRIDE_KIND", "PARTS_KEY", "REASK_SUFFIX",
           "SCHEMA_VERSION", "TEXT_REF_MIN_CHARS", "ContentRow", "JudgeCounts", "JudgeYield", "JudgmentRecord",
           "Packed", "ResultCounts", "RunLock", "StageResult", "Store", "StoreOwner", "StoredJudgment",
           "StoredOverride", "check_owner", "claim_store", "dumps", "dumps_ordered", "earlier_stores",
           "get_judgment", "human_override_sql", "human_overrides", "human_score_label", "iter_judgments",
           "judge_counts", "judge_yields", "judgment_columns", "judgments_to_rescore", "latest_overrides",
           "overrides_to_rescore", "pack_messages", "pack_schema", "update_judgments", "update_overrides"]
# review: annotations, annotators and assignments, calibration snapshots, what the queue kinds read
__all__ += ["AnnotatorRow", "AssignmentRow", "ImageAnswer", "ItemRecord", "LatestAnnotation", "NewAnnotation",
            "OverrideOfJudgment", "SnapshotRow", "StageOutput", "add_annotations", "add_assignments",
            "annotated_targets", "annotator_assignments", "annotator_by_name", "annotator_by_token_hash",
            "annotator_rows", "annotator_token_hash", "assigned_dialects", "assignment", "assignment_count",
            "assignment_queue", "first_item_variants", "image_answers", "item_domains", "item_records",
            "item_variants", "judgment_overrides", "judgment_variants", "latest_annotations", "latest_snapshot",
            "queue_holders", "ref_outputs", "replace_annotation", "request_keys", "save_annotator",
            "save_snapshot_rows", "snapshot_rows", "stage_outputs", "stored_image"]
