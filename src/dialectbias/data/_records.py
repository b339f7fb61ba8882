"""Typed records of SPEC §3 shared by every task."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Item(BaseModel):
    """A benchmark unit with all its variants (`standard` and dialect/language names)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    domain: str | None = None
    question_type: str | None = None
    variants: dict[str, Any]
    gold: Any = None
    validated_by: dict[str, str] = Field(default_factory=dict, description="variant -> annotator")
    metadata: dict[str, Any] = Field(default_factory=dict, description="unknown fields, kept as given")

    def is_human_validated(self, variant: str) -> bool:
        return variant in self.validated_by


class InputLimits(BaseModel):
    """Size limits of one item field (a variant's text, `gold`, a metadata value), in characters.

    Defaults: a benchmark question, answer key or usage-setting passage is at most a few thousand
    characters; 20,000 characters (≈ 7k–20k tokens, Bengali tokenizes at 1–3 characters per token) is
    already beyond the context of small local models and far beyond any question, so it is worth a warning.
    200,000 characters (≥ 70k tokens) exceeds the context window of nearly every model and is a data error
    (a pasted file, a broken join): the item is refused rather than sent, echoed into the judge's prompt and
    stored several times over.
    """

    model_config = ConfigDict(extra="forbid")

    warn_field_chars: int = Field(default=20_000, ge=1, description="warn about a field longer than this")
    max_field_chars: int = Field(default=200_000, ge=1, description="refuse an item with a field longer than this")

    @model_validator(mode="after")
    def _ordered(self) -> InputLimits:
        if self.warn_field_chars > self.max_field_chars:
            raise ValueError(f"warn_field_chars ({self.warn_field_chars}) must not exceed max_field_chars "
                             f"({self.max_field_chars})")
        return self
