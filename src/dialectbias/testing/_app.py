"""The test server's HTTP application: the OpenAI routes, the control routes, and the middleware that
counts every call (auth, in-flight, status codes) into the app's `ServerState`.

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``GET /v1/models``, ``GET /props`` (when
imitating llama.cpp), ``POST /tokenize`` and ``POST /extras/tokenize/count`` (when imitating), ``GET /health``,
``GET /stats``, ``POST /stats/reset``, ``GET /requests`` (recorded request bodies), ``POST /faults`` (replace the
fault spec and reset its counters).

Chat content parts are checked as a real server would: an ``image_url`` part must hold a base64 data URL
whose payload decodes to an image of its declared type (PNG, JPEG, GIF, WebP), else the answer is a 400
naming the message and part.

``/v1/completions`` with ``echo: true`` and ``logprobs`` set answers as vLLM's server does: the prompt echoed
(then the generated text, none with ``max_tokens: 0``) with each token's logprob, the first null
(`_logprobs`: a deterministic stand-in tokeniser and logprob).

``imitate`` (`_imitation`): ``/v1/models`` (and llama.cpp's ``/props``) and the tokenize route answer as that
server does, and with a ``context`` a chat prompt that does not fit is refused with that server's 400. The metadata
routes (``/v1/models``, ``/props``, ``/tokenize``, ``/extras/tokenize/count``) are counted in ``by_path`` but not in
``requests_total``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from dialectbias.testing._fault_effects import (
    INVALID_CHAT_JSON,
    INVALID_COMPLETION_JSON,
    content_fault,
    http_fault,
    server_refusal,
)
from dialectbias.testing._faults import FaultInjector, FaultSpec
from dialectbias.testing._image_parts import image_part_problem
from dialectbias.testing._imitation import context_refusal, models_answer, props_answer, tokenize_answer
from dialectbias.testing._logprobs import echo_logprobs
from dialectbias.testing._messages import all_text, fingerprint, requested_schema
from dialectbias.testing._responders import chat_answer, echo_completion, echo_json
from dialectbias.testing._state import ServerState
from dialectbias.testing._wire import completion_response, error_response, json_response, read_body, tokens

CONTROL_PATHS = frozenset({"/health", "/stats", "/stats/reset", "/requests", "/faults"})
#: what a client asks about the server, not of the model: counted by path, not in `requests_total`
METADATA_PATHS = frozenset({"/v1/models", "/models", "/props", "/tokenize", "/extras/tokenize/count"})

STATE_KEY: web.AppKey[ServerState] = web.AppKey("state", ServerState)
#: the context window `GET /v1/models` reports for every model, as vLLM's server does (`max_model_len`)
MODELS_MAX_MODEL_LEN = 8192


@web.middleware
async def _count_calls(request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
    """Every call but the control routes: counted, checked for the API key, its status code tallied."""
    state = request.app[STATE_KEY]
    path = request.path
    if path in CONTROL_PATHS:
        return await handler(request)
    state.requests_total += path not in METADATA_PATHS
    state.by_path[path] += 1
    if state.auth_header is not None and request.headers.get("Authorization") != state.auth_header:
        state.unauthorized += 1
        state.status_counts[401] += 1
        return error_response(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
    state.in_flight += 1
    if state.in_flight > state.max_in_flight:
        state.max_in_flight = state.in_flight
    try:
        resp: web.StreamResponse = await handler(request)
    except web.HTTPException as exc:
        state.status_counts[exc.status] += 1
        raise
    finally:
        state.in_flight -= 1
    state.status_counts[resp.status] += 1
    return resp


async def _fault(state: ServerState, fp: str, text: Callable[[], str]) -> web.Response | str | None:
    """The fault a generation request gets: an HTTP response, a content fault's kind, or None (after a
    delay fault's sleep). `text()` is what a rule's `match` is looked for in."""
    if not state.faults:
        return None
    rule = state.faults.decide(fp, text() if state.faults.needs_text else "")
    if rule is None:
        return None
    state.faults_served[rule.kind] += 1
    response = await http_fault(rule)
    return rule.kind if response is None else response


def _count_generation(state: ServerState, request: web.Request, body: dict[str, Any], model: str, fp: str) -> None:
    """Count a generation request by model and distinct prompt, and record it."""
    state.by_model[model] += 1
    state.prompts.add(fp)
    state.record(request.path, body, request.headers.get("Authorization"))


async def _chat(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    body = await read_body(request)
    if isinstance(body, web.Response):
        return body
    model: str = body["model"]
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return error_response(400, "'messages' must be a non-empty array.", "invalid_request_error")
    state.chat_by_model[model] += 1
    fp = fingerprint(model, messages)
    _count_generation(state, request, body, model, fp)
    problem = image_part_problem(messages)
    if problem is not None:
        return error_response(400, problem, "invalid_request_error")
    fault = await _fault(state, fp, lambda: model + "\n" + all_text(messages))
    if isinstance(fault, web.Response):
        return fault
    if (refusal := server_refusal(fault, body)) is not None:
        return refusal
    too_long = context_refusal(state.imitate, state.context, tokens(all_text(messages)), body.get("max_tokens"))
    if too_long is not None:
        return too_long
    wants_json, schema = requested_schema(body)

    def answer() -> str:
        return chat_answer(state.responder, body, fp)

    def json_answer() -> str:
        return answer() if wants_json else echo_json(model, messages, schema, fp)

    content, finish = content_fault(fault, answer, json_answer, INVALID_CHAT_JSON)
    state.responses_ok += 1
    choice = {"index": 0, "message": {"role": "assistant", "content": content, "refusal": None}, "logprobs": None,
              "finish_reason": finish}
    return completion_response("chatcmpl-" + fp[:24], "chat.completion", model, [choice],
                               tokens(all_text(messages)), tokens(content), system_fingerprint="dialectbias-testing")


async def _completions(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    body = await read_body(request)
    if isinstance(body, web.Response):
        return body
    model: str = body["model"]
    prompt = body.get("prompt", "")
    prompts = prompt if isinstance(prompt, list) else [prompt]
    prompts = [p if isinstance(p, str) else json.dumps(p) for p in prompts] or [""]
    fp = fingerprint(model, prompts)
    _count_generation(state, request, body, model, fp)
    fault = await _fault(state, fp, lambda: model + "\n" + "\n".join(prompts))
    if isinstance(fault, web.Response):
        return fault
    choices = []
    total_completion = total_prompt = 0
    scoring = bool(body.get("echo")) and body.get("logprobs") is not None  # prompt logprobs, as vLLM echoes them
    for i, p in enumerate(prompts):
        echo = functools.partial(echo_completion, model, p)
        text, finish = content_fault(fault, echo, echo, INVALID_COMPLETION_JSON)
        if scoring and text == echo():  # an echo request (no content fault): the prompt with its logprobs
            text = "" if body.get("max_tokens") == 0 else text
            logprobs, n_prompt = echo_logprobs(model, p, text)
            total_prompt += n_prompt
            total_completion += len(logprobs["tokens"]) - n_prompt  # type: ignore[arg-type]
            choices.append({"index": i, "text": p + text, "logprobs": logprobs, "finish_reason": "length"})
            continue
        total_prompt += tokens(p)
        total_completion += tokens(text)
        choices.append({"index": i, "text": text, "logprobs": None, "finish_reason": finish})
    state.responses_ok += 1
    return completion_response("cmpl-" + fp[:24], "text_completion", model, choices, total_prompt,
                               total_completion)


async def _models(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    if state.imitate is not None:
        return json_response(models_answer(state.imitate, state.context))
    names = sorted(set(state.by_model) | {"test-model"})
    return json_response({"object": "list", "data": [
        {"id": n, "object": "model", "created": 0, "owned_by": "dialectbias-testing",
         "max_model_len": MODELS_MAX_MODEL_LEN} for n in names
    ]})


async def _props(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    if state.imitate != "llamacpp":
        return error_response(404, "Not Found", "not_found_error")
    return json_response(props_answer(state.context, state.slots))


async def _tokenize(request: web.Request) -> web.StreamResponse:
    """The imitated server's tokenize route (`_imitation.tokenize_answer`): vLLM's and llama.cpp's `POST /tokenize`,
    llama-cpp-python's `POST /extras/tokenize/count`; 404 for another route, no imitation or `--no-tokenize`."""
    state = request.app[STATE_KEY]
    try:
        body = await request.json(loads=json.loads)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return error_response(400, "Request body is not valid JSON.", "invalid_request_error")
    answer = tokenize_answer(state.imitate, state.context, request.path, body) if state.tokenize else None
    if answer is None:
        return error_response(404, "Not Found", "not_found_error")
    return answer


async def _health(request: web.Request) -> web.StreamResponse:
    return json_response({"status": "ok", "pid": os.getpid()})


async def _stats(request: web.Request) -> web.StreamResponse:
    return json_response(request.app[STATE_KEY].stats())


async def _stats_reset(request: web.Request) -> web.StreamResponse:
    request.app[STATE_KEY].reset()
    return json_response({"status": "ok"})


async def _requests(request: web.Request) -> web.StreamResponse:
    return json_response(list(request.app[STATE_KEY].recorded))


async def _set_faults(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    try:
        spec = FaultSpec.load(await request.json())
    except Exception as exc:  # pydantic ValidationError, JSON errors
        return error_response(400, f"invalid fault spec: {exc}", "invalid_request_error")
    state.faults = FaultInjector(spec)
    return json_response({"status": "ok", "rules": len(spec.rules)})


def make_app(faults: FaultSpec | dict[str, Any] | str | Path | None = None, *, api_key: str | None = None,
             responder: str = "echo", record_requests: int = 20_000, imitate: str | None = None,
             context: int | None = None, slots: int | None = None, tokenize: bool = True) -> web.Application:
    """Build the aiohttp application (use `serve`/`TestServer` to run it); `imitate` a real server
    (`_imitation`) with its `context` window, parallel `slots` and, unless `tokenize` is False, its tokenize route."""
    app = web.Application(middlewares=[_count_calls], client_max_size=64 * 1024**2)
    app[STATE_KEY] = ServerState(FaultSpec.load(faults), api_key, responder, record_requests, imitate, context,
                                 slots, tokenize)
    app.router.add_post("/v1/chat/completions", _chat)
    app.router.add_post("/chat/completions", _chat)
    app.router.add_post("/v1/completions", _completions)
    app.router.add_post("/completions", _completions)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/props", _props)
    app.router.add_post("/tokenize", _tokenize)
    app.router.add_post("/extras/tokenize/count", _tokenize)
    app.router.add_get("/health", _health)
    app.router.add_get("/stats", _stats)
    app.router.add_post("/stats/reset", _stats_reset)
    app.router.add_get("/requests", _requests)
    app.router.add_post("/faults", _set_faults)
    return app


__all__ = ["STATE_KEY", "make_app"]
