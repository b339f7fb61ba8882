"""Judge rubrics, JSON schemas, parsing/repair, score computation and the script/refusal decision."""

from dialectbias.judges._judgment import (
    INVALID_VALUES_PREFIX,
    CheckSettings,
    CodeChecks,
    JudgmentValues,
    evaluate_judgment,
    judge_answer,
    override_value,
    reevaluate_judgment,
    rescore_override,
    run_checks,
    scoring_fingerprint,
    unscored_kinds,
    unscored_text,
)
from dialectbias.judges._rlaif import RLAIF_CATEGORIES, RlaifJudgment, rlaif_json_schema, rlaif_score
from dialectbias.judges._rubric import CHECKS, Ceiling, Condition, Rubric, RubricField, RubricResult, count_items
from dialectbias.judges._rubric_load import load_rubric, packaged_rubrics, parse_rubric
from dialectbias.judges._structured import StructuredParse, parse_structured, reask_messages
from dialectbias.judges._verdict import REVIEW_PREFIX, ZEROED_PREFIX, ScoringDecision, script_refusal_verdict

__all__ = [
    "CHECKS",
    "INVALID_VALUES_PREFIX",
    "REVIEW_PREFIX",
    "RLAIF_CATEGORIES",
    "ZEROED_PREFIX",
    "Ceiling",
    "CheckSettings",
    "CodeChecks",
    "Condition",
    "JudgmentValues",
    "RlaifJudgment",
    "Rubric",
    "RubricField",
    "RubricResult",
    "ScoringDecision",
    "StructuredParse",
    "count_items",
    "evaluate_judgment",
    "judge_answer",
    "load_rubric",
    "override_value",
    "packaged_rubrics",
    "parse_rubric",
    "parse_structured",
    "reask_messages",
    "reevaluate_judgment",
    "rescore_override",
    "rlaif_json_schema",
    "rlaif_score",
    "run_checks",
    "scoring_fingerprint",
    "script_refusal_verdict",
    "unscored_kinds",
    "unscored_text",
]
