"""qa_bias: the Bengali paper's QA bias study (answers judged per dialect)."""

from __future__ import annotations

from dialectbias.tasks.qa_bias._task import DEFAULT_RUBRIC, RUBRIC_CHECKS, QABiasOptions, QABiasTask

__all__ = ["DEFAULT_RUBRIC", "RUBRIC_CHECKS", "QABiasOptions", "QABiasTask"]
