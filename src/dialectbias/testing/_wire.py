"""The OpenAI wire format of the test server's answers: JSON bodies, error bodies, and the request checks
every generation endpoint makes before anything else."""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web


def error_response(status: int, message: str, etype: str, code: str | None = None,
                   headers: dict[str, str] | None = None) -> web.Response:
    """An OpenAI error body: ``{"error": {"message", "type", "param", "code"}}``."""
    body = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return web.Response(status=status, body=json.dumps(body).encode(), content_type="application/json",
                        headers=headers)


def json_response(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=json.dumps(obj, ensure_ascii=False).encode(),
                        content_type="application/json")


def completion_response(response_id: str, kind: str, model: str, choices: list[dict[str, Any]], prompt_tokens: int,
                        completion_tokens: int, **extra: Any) -> web.Response:
    """A `chat.completion` or `text_completion` body with its `usage` (`extra` keys go before `choices`)."""
    return json_response({
        "id": response_id,
        "object": kind,
        "created": int(time.time()),
        "model": model,
        **extra,
        "choices": choices,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


async def read_body(request: web.Request) -> dict[str, Any] | web.Response:
    """The request's JSON object, or a 400 response: not JSON, not an object, no model, or stream=true."""
    try:
        body = await request.json(loads=json.loads)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return error_response(400, "Request body is not valid JSON.", "invalid_request_error")
    if not isinstance(body, dict):
        return error_response(400, "Request body must be a JSON object.", "invalid_request_error")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return error_response(400, "Missing required parameter: 'model'.", "invalid_request_error")
    if body.get("stream"):
        return error_response(400, "The dialectbias test server does not support stream=true.",
                              "invalid_request_error")
    return body


def tokens(text: str) -> int:
    """A token count for `usage`: one per 4 characters, rounded up."""
    return max(1, (len(text) + 3) // 4) if text else 0


__all__ = ["completion_response", "error_response", "json_response", "read_body", "tokens"]
