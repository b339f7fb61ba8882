"""Judge rubrics, JSON schemas, parsing/repair and score computation."""

from dialectbias.judges._rlaif import RLAIF_CATEGORIES, RlaifJudgment, rlaif_json_schema, rlaif_score
from dialectbias.judges._rubric import CHECKS, Ceiling, Condition, Rubric, RubricField, RubricResult
from dialectbias.judges._rubric_load import load_rubric, packaged_rubrics, parse_rubric
from dialectbias.judges._structured import StructuredParse, parse_structured, reask_messages

__all__ = ["CHECKS", "RLAIF_CATEGORIES", "Ceiling", "Condition", "RlaifJudgment", "Rubric", "RubricField",
           "RubricResult", "StructuredParse", "load_rubric", "packaged_rubrics", "parse_rubric", "parse_structured",
           "reask_messages", "rlaif_json_schema", "rlaif_score"]
