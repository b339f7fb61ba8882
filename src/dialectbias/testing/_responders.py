"""Responders: who writes a chat answer's content.

A responder gets the request body and returns the assistant's content, or None to let the server answer
with its echo. `load_responder` turns the server's `--responder` value into one; the echo answers live here
too. The stand-in models for the package's studies are in `_*_responder.py` next to this module.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

from dialectbias.testing._messages import last_user_text, requested_schema
from dialectbias.testing._schema_fill import fill_schema

#: how much of the prompt an echo answer repeats
ECHO_MAX_CHARS = 200

Responder = Callable[[dict[str, Any]], str | None]


def echo_text(model: str, messages: list[Any]) -> str:
    """The default responder's plain-text answer."""
    return f"answer[{model}]: " + last_user_text(messages)[:ECHO_MAX_CHARS]


def echo_json(model: str, messages: list[Any], schema: dict[str, Any] | None, fp: str) -> str:
    """The default responder's JSON answer: a value filled from `schema` (seeded by the fingerprint `fp`),
    or ``{"answer": <echo text>}`` without one."""
    if schema is None:
        obj: Any = {"answer": echo_text(model, messages)}
    else:
        obj = fill_schema(schema, bytes.fromhex(fp))
    return json.dumps(obj, ensure_ascii=False)


def echo_completion(model: str, prompt: str) -> str:
    """The answer to one `/v1/completions` prompt: its end, echoed."""
    return f"answer[{model}]: " + prompt[-ECHO_MAX_CHARS:]


def load_responder(spec: str) -> Responder | None:
    """'echo' -> None (built in); 'fixed:TEXT' -> constant; 'pkg.mod:func' -> imported callable.

    A custom callable gets the request body dict and returns the content, or None to fall back
    to the echo answer.
    """
    if spec == "echo":
        return None
    if spec.startswith("fixed:"):
        text = spec[len("fixed:") :]
        return lambda _body: text
    mod_name, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"responder {spec!r}: must be 'echo', 'fixed:TEXT' or 'module:function'")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ValueError(f"responder {spec!r}: cannot import {mod_name!r} ({exc})") from None
    fn = getattr(module, attr, None)
    if fn is None:
        raise ValueError(f"responder {spec!r}: module {mod_name!r} has no {attr!r}")
    if not callable(fn):
        raise ValueError(f"responder {spec!r} is not callable")
    return fn


def chat_answer(responder: Responder | None, body: dict[str, Any], fp: str) -> str:
    """A chat request's content: the responder's, else the echo (JSON when the request asks for it)."""
    content = responder(body) if responder is not None else None
    if content is not None:
        return content
    model, messages = body["model"], body["messages"]
    wants_json, schema = requested_schema(body)
    return echo_json(model, messages, schema, fp) if wants_json else echo_text(model, messages)


__all__ = ["ECHO_MAX_CHARS", "Responder", "chat_answer", "echo_completion", "echo_json", "echo_text",
           "load_responder"]
