"""What a request says: its text, its requested JSON schema, and the hashes answers are chosen from.

Responders and the app read requests through these functions only; nothing here knows a task."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def chat_request(body: dict[str, Any]) -> tuple[str, list[Any]] | None:
    """(model, messages) of a chat request, or None when it has no messages (a responder then answers None)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    return str(body.get("model", "")), messages


def part_text(content: Any) -> str:
    """Text of a message's content: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type") == "text" or "text" in part:
                    texts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                texts.append(part)
        return " ".join(t for t in texts if t)
    return str(content)


def last_user_text(messages: list[Any]) -> str:
    """Text of the last user message (of the last message when none is a user's)."""
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return part_text(msg.get("content"))
    return part_text(messages[-1].get("content")) if messages and isinstance(messages[-1], dict) else ""


def all_text(messages: list[Any]) -> str:
    """Text of every message, one per line."""
    return "\n".join(part_text(m.get("content")) for m in messages if isinstance(m, dict))


def original_turns(messages: list[Any]) -> list[Any]:
    """The messages up to and including the first user message: a re-ask (which appends the bad answer
    and a correction) is answered like the original request."""
    for i, msg in enumerate(messages):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return messages[: i + 1]
    return messages


def requested_schema(body: dict[str, Any]) -> tuple[bool, dict[str, Any] | None]:
    """(wants_json, schema) from an OpenAI `response_format` (json_schema or json_object[+schema])."""
    rf = body.get("response_format")
    if not isinstance(rf, dict):
        return False, None
    kind = rf.get("type")
    if kind == "json_schema":
        js = rf.get("json_schema") or {}
        schema = js.get("schema") if isinstance(js, dict) else None
        return True, schema if isinstance(schema, dict) else None
    if kind == "json_object":
        schema = rf.get("schema")
        return True, schema if isinstance(schema, dict) else None
    return False, None


def fingerprint(model: str, messages: Any) -> str:
    """Stable hash of (model, messages): the key of `per_prompt_first_n` and the echo JSON seed."""
    canon = json.dumps([model, messages], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(canon.encode(), digest_size=16).hexdigest()


def digest(*parts: Any) -> bytes:
    """SHA-256 of the parts' canonical JSON: the bytes responders pick their answers with."""
    canon = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).digest()


__all__ = ["all_text", "chat_request", "digest", "fingerprint", "last_user_text", "original_turns", "part_text",
           "requested_schema"]
