"""The RLAIF rubric of the Bengali dialect-bias paper (Sami et al., arXiv 2603.21359, §3.3, App. B).

Its one definition is the packaged rubric `resources/rubrics/rlaif.yaml` (fields, weights, anchors,
reasoning first, confidence last); these names are shortcuts to it for code and tests that speak RLAIF.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dialectbias.judges._rubric_load import rubric_resource

_RUBRIC = rubric_resource("dialectbias.resources.rubrics:rlaif.yaml")  # the file the `rlaif` rubric names

#: (field, weight) in the paper's category order (§3.3; SPEC §4 P3 table)
RLAIF_CATEGORIES: tuple[tuple[str, float], ...] = tuple((f.name, f.effective_weight) for f in _RUBRIC.numeric_fields)
LIKERT_MAX = 5

#: the judge's JSON answer as a pydantic model: reasoning first, script/refusal verdicts, five Likert
#: fields, confidence
RlaifJudgment = _RUBRIC.validator()


def rlaif_score(likert: Sequence[int]) -> float:
    """`Σ w_i · L_i / 5` over the five categories, 0–10 (paper §3.3). [0,1,5,4,5] → 4.7."""
    if len(likert) != len(RLAIF_CATEGORIES):
        raise ValueError(f"expected {len(RLAIF_CATEGORIES)} Likert values, got {len(likert)}")
    for value in likert:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LIKERT_MAX:
            raise ValueError(f"Likert values must be integers 0–{LIKERT_MAX}, got {value!r}")
    score = _RUBRIC.rescore(dict(zip((name for name, _ in RLAIF_CATEGORIES), likert, strict=True))).score
    assert score is not None
    return score


def rlaif_json_schema() -> dict[str, Any]:
    """The strict JSON schema sent as `response_format` (cached by the rubric: treat it as read-only)."""
    return _RUBRIC.json_schema()
