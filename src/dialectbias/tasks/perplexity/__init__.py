"""Perplexity control (German dialect-bias paper, App. C.2): per model × variant, the token-level perplexity of
standard, dialect and noisy texts, so a study shows that its noisy control is comparable to the dialect texts."""

from __future__ import annotations

from dialectbias.tasks.perplexity._task import PerplexityOptions, PerplexityTask

__all__ = ["PerplexityOptions", "PerplexityTask"]
