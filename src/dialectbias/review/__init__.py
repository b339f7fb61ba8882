"""Human review of judgments: the CSV review queue, its import as overrides, calibration samples."""

from dialectbias.review._queue import (
    HUMAN_COLUMNS,
    QUEUE_COLUMNS,
    CalibrationSample,
    ImportSummary,
    ReviewQueue,
    human_columns,
    queue_columns,
    read_review_csv,
    review_readme,
    write_review_csv,
)

__all__ = ["HUMAN_COLUMNS", "QUEUE_COLUMNS", "CalibrationSample", "ImportSummary", "ReviewQueue", "human_columns",
           "queue_columns", "read_review_csv", "review_readme", "write_review_csv"]
