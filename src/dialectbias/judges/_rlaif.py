"""The RLAIF rubric of the Bengali dialect-bias paper (Sami et al., arXiv 2603.21359, §3.3, App. B)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# (field, weight) in the paper's category order (§3.3; SPEC §4 P3 table)
RLAIF_CATEGORIES: tuple[tuple[str, float], ...] = (
    ("dialect_comprehension", 3.0),
    ("factual_correctness", 2.5),
    ("content_completeness", 2.0),
    ("response_clarity", 1.5),
    ("appropriate_length", 1.0),
)
LIKERT_MAX = 5


def rlaif_score(likert: Sequence[int]) -> float:
    """`Σ w_i · L_i / 5` over the five categories, 0–10 (paper §3.3). [0,1,5,4,5] → 4.7."""
    if len(likert) != len(RLAIF_CATEGORIES):
        raise ValueError(f"expected {len(RLAIF_CATEGORIES)} Likert values, got {len(likert)}")
    for value in likert:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LIKERT_MAX:
            raise ValueError(f"Likert values must be integers 0–{LIKERT_MAX}, got {value!r}")
    return sum(w * v for (_, w), v in zip(RLAIF_CATEGORIES, likert, strict=True)) / LIKERT_MAX


class RlaifJudgment(BaseModel):
    """The judge's JSON: reasoning first, its script/refusal verdicts, five Likert fields, confidence."""

    model_config = ConfigDict(extra="forbid")

    chain_of_thought_reasoning: str = Field(
        description="script validity, dialect comprehension and factual accuracy, compared step by step")
    script_valid: bool = Field(description="the dialect response's primary text is in Bengali script")
    refusal: bool = Field(description="the dialect response refuses or does not attempt an answer")
    dialect_comprehension: int = Field(ge=0, le=5)
    factual_correctness: int = Field(ge=0, le=5)
    content_completeness: int = Field(ge=0, le=5)
    response_clarity: int = Field(ge=0, le=5)
    appropriate_length: int = Field(ge=0, le=5)
    confidence: int = Field(ge=1, le=5)

    def likert(self) -> list[int]:
        return [getattr(self, name) for name, _ in RLAIF_CATEGORIES]


@lru_cache(maxsize=1)
def rlaif_json_schema() -> dict[str, Any]:
    """Strict JSON schema for `response_format` (all keys required, no extras, property order kept).
    Cached: treat the returned dict as read-only."""
    schema = RlaifJudgment.model_json_schema()
    schema.pop("title", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    schema["additionalProperties"] = False
    schema["required"] = list(schema["properties"])
    return schema
