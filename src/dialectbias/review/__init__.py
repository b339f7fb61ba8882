"""Human review of judgments: the CSV review queue, its import as overrides, calibration samples."""

from dialectbias.review._queue import (
    HUMAN_COLUMNS,
    QUEUE_COLUMNS,
    CalibrationSample,
    ImportSummary,
    ReviewQueue,
    read_review_csv,
    write_review_csv,
)

__all__ = ["HUMAN_COLUMNS", "QUEUE_COLUMNS", "CalibrationSample", "ImportSummary", "ReviewQueue",
           "read_review_csv", "write_review_csv"]
