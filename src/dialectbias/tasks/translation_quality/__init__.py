"""translation_quality: reference-based scores of translations per dialect."""

from __future__ import annotations

from dialectbias.tasks.translation_quality._task import (
    DEFAULT_METRICS,
    DEFAULT_RUBRIC,
    Metric,
    ReviewTranslation,
    TranslationQualityOptions,
    TranslationQualityTask,
    TranslationSource,
    translate_experiment,
)

__all__ = [
    "DEFAULT_METRICS",
    "DEFAULT_RUBRIC",
    "Metric",
    "ReviewTranslation",
    "TranslationQualityOptions",
    "TranslationQualityTask",
    "TranslationSource",
    "translate_experiment",
]
