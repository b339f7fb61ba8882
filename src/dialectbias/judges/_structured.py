"""Parse judge output into the rubric's pydantic model: validate, repair, or explain why not."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from dialectbias.data import ChatMessage

T = TypeVar("T", bound=BaseModel)

ParseStatus = Literal["ok", "repaired", "reasked", "failed"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


#: why an answer was not usable: `parse` = no JSON object, or keys missing or unknown (the answer did not
#: parse into the rubric's shape); `values` = a JSON object with the rubric's keys whose values failed
#: validation (out of range, wrong type, too long): counted apart as "invalid values" (issue 24 item 6)
FailureKind = Literal["parse", "values"]
#: pydantic error types that mean the object's shape is wrong (a parse failure), not one of its values
_SHAPE_ERRORS = frozenset({"missing", "extra_forbidden", "model_type", "model_attributes_type", "dict_type"})


class StructuredParse(BaseModel):
    value: Any = None
    status: ParseStatus
    error: str | None = None
    #: with status "failed": what failed (`FailureKind`)
    failure: FailureKind | None = None


def _candidates(text: str) -> list[str]:
    """The raw text, then increasingly aggressive repairs of it."""
    out = [text.strip()]
    fenced = _FENCE.search(text)
    if fenced:
        out.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        out.append(text[start:end + 1])
    out += [_TRAILING_COMMA.sub(r"\1", c) for c in list(out)]
    return out


def parse_structured(text: str, model: type[T]) -> StructuredParse:
    """Return the validated object (`ok`, or `repaired` when the raw text needed fixing) or `failed`, with
    `failure` "values" when a candidate was a JSON object of the right shape whose values failed validation
    (its error is the one given), else "parse"."""
    if not text or not text.strip():
        return StructuredParse(status="failed", error="empty output", failure="parse")
    error = "no JSON object found"
    values_error: str | None = None
    for i, candidate in enumerate(_candidates(text)):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as exc:
            error = f"invalid JSON: {exc.msg} at position {exc.pos}"
            continue
        try:
            value = model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            error = f"{'.'.join(str(p) for p in first['loc']) or 'object'}: {first['msg']}"
            if isinstance(data, dict) and all(e["loc"] and e["type"] not in _SHAPE_ERRORS for e in exc.errors()):
                values_error = values_error or error
            continue
        return StructuredParse(value=value, status="ok" if i == 0 else "repaired")
    if values_error is not None:
        return StructuredParse(status="failed", error=values_error, failure="values")
    return StructuredParse(status="failed", error=error, failure="parse")


def reask_messages(messages: list[ChatMessage], bad_output: str, error: str) -> list[ChatMessage]:
    """The one re-ask: the original conversation, the bad answer, and what was wrong with it."""
    return [*messages, {"role": "assistant", "content": bad_output},
            {"role": "user", "content": f"Your answer could not be used ({error}). Reply again with only "
                                        "the JSON object, following the schema exactly."}]
