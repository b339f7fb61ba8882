"""Human review: the CSV review queue and its import as overrides, the review app's queue kinds (plug-ins),
annotators and their assignments, agreement between annotators and judge calibration against humans."""

from dialectbias.review._annotators import (
    Annotator,
    AssignSummary,
    Task,
    add_annotator,
    annotator_for_token,
    annotators,
    assign,
    hash_token,
    task_of,
    tasks_of,
)
from dialectbias.review._calibration import (
    CalibrationRow,
    Thresholds,
    annotator_agreement,
    human_scores,
    judge_calibration,
    save_snapshot,
    snapshot_history,
)
from dialectbias.review._gold import (
    HUMAN_VALIDATED_COLUMNS,
    HUMAN_VALIDATED_LEGEND,
    Correction,
    Gold,
    GoldSummary,
    corrections,
    human_validated_rows,
    iso_utc,
    validation_labels,
)
from dialectbias.review._hcs import HCS_COLUMNS, HCS_LEGEND, HCSTable, hcs_table, judgment_score, mean_scores
from dialectbias.review._kind_consistency import HCS_COMPONENTS, HCS_KIND, JudgeConsistencyQueue
from dialectbias.review._kind_errors import ERROR_CATEGORIES, ErrorCodingQueue
from dialectbias.review._kind_judgments import JudgmentQueue
from dialectbias.review._kind_translations import (
    Translation,
    TranslationCorrectionQueue,
    TranslationScoreQueue,
    ValidationQueue,
    task_translations,
    translation_targets,
)
from dialectbias.review._kinds import (
    AnnotationError,
    QueueKind,
    Rating,
    ReviewConfig,
    queue_kind,
    queue_kinds,
    register_queue_kind,
    save_annotation,
)
from dialectbias.review._queue import (
    CalibrationSample,
    ImportSummary,
    ReviewQueue,
    human_columns,
    override_value,
    queue_columns,
    read_review_csv,
    review_readme,
    write_review_csv,
)
from dialectbias.review._queue_csv import (
    CSV_QUEUES,
    QueueExport,
    csv_kind,
    import_queue_csv,
    is_queue_csv,
    queue_rows,
    read_queue_csv,
    write_queue_csv,
)
from dialectbias.review._report import (
    ANNOTATOR_AGREEMENT_LEGEND,
    JUDGE_CALIBRATION_LEGEND,
    ReviewSummary,
    review_summary,
    routed_to_judge,
)
from dialectbias.review._routing import Route, calibration_alert, miscalibrated_routes
from dialectbias.review._rubrics import judge_rubric, rubric_named
from dialectbias.review._sample import (
    Sample,
    Stratum,
    clear_sample,
    draw_sample,
    queue_targets,
    sample_queue,
    sampled_ids,
    stored_sample,
)
from dialectbias.review._sample import describe as describe_sample
from dialectbias.review._setup import (
    miscalibrated_now,
    primary_routes,
    review_config,
    routed_to_review,
    store_language,
    thresholds_of,
)
from dialectbias.review._targets import FormField, Panel, ReviewTarget, language_tag, text_direction
from dialectbias.store import latest_annotations

__all__ = ["ANNOTATOR_AGREEMENT_LEGEND", "CSV_QUEUES", "ERROR_CATEGORIES", "HUMAN_VALIDATED_COLUMNS",
           "HUMAN_VALIDATED_LEGEND", "JUDGE_CALIBRATION_LEGEND", "AnnotationError", "Annotator", "AssignSummary",
           "CalibrationRow", "CalibrationSample", "Correction", "ErrorCodingQueue", "FormField", "Gold", "GoldSummary",
           "ImportSummary", "JudgmentQueue", "Panel", "QueueExport", "QueueKind", "Rating", "ReviewConfig",
           "ReviewQueue", "ReviewSummary", "ReviewTarget", "Route", "Sample", "Stratum", "Task", "Thresholds",
           "Translation", "TranslationCorrectionQueue", "TranslationScoreQueue", "ValidationQueue", "add_annotator",
           "annotator_agreement", "annotator_for_token", "annotators", "assign", "calibration_alert", "clear_sample",
           "corrections", "csv_kind", "describe_sample", "draw_sample", "hash_token", "human_columns", "human_scores",
           "human_validated_rows", "import_queue_csv", "is_queue_csv", "iso_utc", "judge_calibration", "judge_rubric",
           "language_tag", "latest_annotations", "miscalibrated_now", "miscalibrated_routes", "override_value",
           "primary_routes", "queue_columns", "queue_kind", "queue_kinds", "queue_rows", "queue_targets",
           "read_queue_csv", "read_review_csv", "register_queue_kind", "review_config", "review_readme",
           "review_summary", "routed_to_judge", "routed_to_review", "rubric_named", "sample_queue", "sampled_ids",
           "save_annotation", "save_snapshot", "snapshot_history", "store_language", "stored_sample", "task_of",
           "task_translations", "tasks_of", "text_direction", "thresholds_of", "translation_targets",
           "validation_labels", "write_queue_csv", "write_review_csv"]
# the judges' Human Consistency Score (BanglaVerse §4.3): its queue kind and table
__all__ += ["HCS_COLUMNS", "HCS_COMPONENTS", "HCS_KIND", "HCS_LEGEND", "HCSTable", "JudgeConsistencyQueue", "hcs_table",
            "judgment_score", "mean_scores"]
