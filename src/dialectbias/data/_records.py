"""Typed records of SPEC §3 shared by every task."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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
