"""translate: building dialect benchmarks with retrieval-augmented translation."""

from __future__ import annotations

from dialectbias.tasks.translate._task import QUERY_BATCH, ROLE, TranslateOptions, TranslateTask

__all__ = ["QUERY_BATCH", "ROLE", "TranslateOptions", "TranslateTask"]
