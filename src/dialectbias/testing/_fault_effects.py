"""What a fired fault rule (`_faults.py`) does to an answer: an HTTP error, a delay, or broken content."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from dialectbias.testing._faults import FaultRule
from dialectbias.testing._wire import error_response

#: what an `out_of_range` fault puts in every integer of a JSON answer (a value llama.cpp's grammar let through:
#: keys and types enforced, ranges not; issue 24)
OUT_OF_RANGE_VALUE = 1023984765
#: the content an `invalid_json` fault answers, per endpoint
INVALID_CHAT_JSON = "Sure! Here is my verdict: {score: five, reasoning: 'looks fine'"
INVALID_COMPLETION_JSON = "Sure! {score: five"


def _seconds(v: float | None) -> str:
    v = float(v or 0.0)
    return str(int(v)) if v.is_integer() else f"{v:g}"


async def http_fault(rule: FaultRule) -> web.Response | None:
    """The response of an HTTP-level fault (429, 500, 503, bad_body); None after sleeping (timeout, slow) or
    for a content fault, which `content_fault` applies to the answer."""
    kind = rule.kind
    if kind == "429":
        ra = rule.retry_after if rule.retry_after is not None else 0.0
        return error_response(429, "Rate limit reached (injected by dialectbias test server).", "requests",
                              "rate_limit_exceeded", headers={"Retry-After": _seconds(ra)})
    if kind == "500":
        return error_response(500, "The server had an error (injected).", "server_error")
    if kind == "503":
        headers = {"Retry-After": _seconds(rule.retry_after)} if rule.retry_after is not None else None
        return error_response(503, "The engine is currently overloaded (injected).", "server_error",
                              headers=headers)
    if kind == "bad_body":
        return web.Response(status=200, body=b"<html><body>502 Bad Gateway (injected)</body>",
                            content_type="application/json")
    if kind in ("timeout", "slow"):
        await asyncio.sleep(rule.effective_delay())
    return None


#: what llama-cpp-python 0.3.x answers (HTTP 500) to `response_format: {"type": "json_schema", …}`
LLAMACPP_JSON_SCHEMA_ERROR = ("[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
                              "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]")
#: what a vLLM server without the guided-decoding backend answers (HTTP 400) to `json_schema`
VLLM_JSON_SCHEMA_ERROR = "response_format json_schema is not supported by this server (guided decoding off)"


def _max_length(node: Any) -> int:
    if isinstance(node, dict):
        own = node["maxLength"] if isinstance(node.get("maxLength"), int) else 0
        return max([int(own), *(_max_length(v) for v in node.values())])
    if isinstance(node, list):
        return max([0, *(_max_length(v) for v in node)])
    return 0


def server_refusal(kind: str | None, body: dict[str, Any]) -> web.Response | None:
    """The refusal an imitated server (`llamacpp_json_schema`, `vllm_json_schema` faults) gives a request
    whose `response_format` it cannot take; None when it takes it."""
    fmt = body.get("response_format")
    if kind not in ("llamacpp_json_schema", "vllm_json_schema") or not isinstance(fmt, dict):
        return None
    if kind == "vllm_json_schema" and fmt.get("type") == "json_schema":
        return error_response(400, VLLM_JSON_SCHEMA_ERROR, "BadRequestError")
    if kind == "llamacpp_json_schema" and fmt.get("type") == "json_schema":
        return error_response(500, LLAMACPP_JSON_SCHEMA_ERROR, "server_error")
    if kind == "llamacpp_json_schema" and _max_length(fmt.get("schema")) > 1000:
        return error_response(500, "server died: number of grammar rules exceeds sane defaults (imitated)",
                              "server_error")
    return None


def _out_of_range(value: Any) -> str:
    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return OUT_OF_RANGE_VALUE if isinstance(v, int) and not isinstance(v, bool) else v
    return json.dumps(walk(value), ensure_ascii=False)


def content_fault(fault: str | None, answer: Callable[[], str], json_answer: Callable[[], str],
                  invalid_json: str) -> tuple[str, str]:
    """(content, finish_reason) of an answer under a content fault (or none): `answer` makes the normal
    answer, `json_answer` a JSON one (what `truncated_json` cuts in half), `invalid_json` is what an
    `invalid_json` fault answers instead; `out_of_range` answers the JSON one with every integer made
    `OUT_OF_RANGE_VALUE`."""
    if fault == "empty_content":
        return "", "stop"
    if fault == "invalid_json":
        return invalid_json, "stop"
    if fault == "out_of_range":  # well-formed JSON of the schema's shape, every integer far out of range
        content = json_answer()
        try:
            return _out_of_range(json.loads(content)), "stop"
        except json.JSONDecodeError:  # not a JSON answer (a completion): nothing to put out of range
            return content, "stop"
    if fault in ("truncated_json", "length"):
        content = json_answer() if fault == "truncated_json" else answer()
        return content[: max(1, len(content) // 2)], "length" if fault == "length" else "stop"
    return answer(), "stop"


__all__ = ["INVALID_CHAT_JSON", "INVALID_COMPLETION_JSON", "content_fault", "http_fault", "server_refusal"]
