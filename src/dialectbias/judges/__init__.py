"""Judge rubrics, JSON schemas, parsing/repair and score computation."""

from dialectbias.judges._rlaif import RLAIF_CATEGORIES, RlaifJudgment, rlaif_json_schema, rlaif_score
from dialectbias.judges._structured import StructuredParse, parse_structured, reask_messages

__all__ = ["RLAIF_CATEGORIES", "RlaifJudgment", "StructuredParse", "parse_structured", "reask_messages",
           "rlaif_json_schema", "rlaif_score"]
