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


class StructuredParse(BaseModel):
    value: Any = None
    status: ParseStatus
    error: str | None = None


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
    """Return the validated object (`ok`, or `repaired` when the raw text needed fixing) or `failed`."""
    if not text or not text.strip():
        return StructuredParse(status="failed", error="empty output")
    error = "no JSON object found"
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
            continue
        return StructuredParse(value=value, status="ok" if i == 0 else "repaired")
    return StructuredParse(status="failed", error=error)


def reask_messages(messages: list[ChatMessage], bad_output: str, error: str) -> list[ChatMessage]:
    """The one re-ask: the original conversation, the bad answer, and what was wrong with it."""
    return [*messages, {"role": "assistant", "content": bad_output},
            {"role": "user", "content": f"Your answer could not be used ({error}). Reply again with only "
                                        "the JSON object, following the schema exactly."}]
