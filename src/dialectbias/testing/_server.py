"""An OpenAI-compatible test server with deterministic answers and fault injection.

Run it as ``python -m dialectbias.testing.server --port 0 [--faults faults.json] [--api-key KEY]``;
it binds 127.0.0.1 only and prints one JSON line ``{"port": N}`` once it listens. In tests, use
:class:`TestServer`, which runs it in a separate process (so it never competes for the GIL with
the client under test) and stops it on exit.

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``GET /v1/models``,
``GET /health``, ``GET /stats``, ``POST /stats/reset``, ``GET /requests`` (recorded request
bodies), ``POST /faults`` (replace the fault spec and reset its counters).

Chat content parts are checked as a real server would: an ``image_url`` part must hold a base64 data URL
whose payload decodes to an image of its declared type (PNG, JPEG, GIF, WebP), else the answer is a 400
naming the message and part.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import importlib
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter, deque
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from dialectbias.testing._faults import FaultInjector, FaultRule, FaultSpec
from dialectbias.testing._schema_fill import fill_schema
from dialectbias.testing._server_help import ServerParser

HOST = "127.0.0.1"
CONTROL_PATHS = frozenset({"/health", "/stats", "/stats/reset", "/requests", "/faults"})
GENERATION_PATHS = ("/v1/chat/completions", "/v1/completions")
ECHO_MAX_CHARS = 200

Responder = Callable[[dict[str, Any]], str | None]


# --------------------------------------------------------------------------------------------
# deterministic content
# --------------------------------------------------------------------------------------------


def _part_text(content: Any) -> str:
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


#: the leading bytes of each image type the server accepts in an `image_url` data URL
_IMAGE_MAGIC = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",),
                "image/gif": (b"GIF87a", b"GIF89a"), "image/webp": (b"RIFF",)}
_DATA_URL_HEADER = re.compile(r"data:(image/[\w.+-]+);base64")


def image_part_problem(messages: list[Any]) -> str | None:
    """What is wrong with a request's content parts, or None: text parts and `image_url` parts holding a
    base64 data URL whose payload decodes to an image of the declared type are accepted (the OpenAI format
    that providers send; this server fetches no URL)."""
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, part in enumerate(content):
            where = f"messages[{i}].content[{j}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                continue
            if kind != "image_url":
                return f"{where}: unsupported content part type {kind!r} (expected 'text' or 'image_url')"
            image_url = part.get("image_url")
            url = image_url.get("url") if isinstance(image_url, dict) else None
            if not isinstance(url, str):
                return f"{where}: 'image_url' must be an object with a string 'url'"
            header, comma, payload = url.partition(",")
            match = _DATA_URL_HEADER.fullmatch(header)
            if not url.startswith("data:") or not comma or match is None:
                return (f"{where}: image_url.url must be a base64 data URL (data:image/png;base64,…); got "
                        f"{url[:40]!r} (the test server fetches no URL)")
            mime = match[1]
            if mime not in _IMAGE_MAGIC:
                return f"{where}: unsupported image type {mime} (expected {', '.join(_IMAGE_MAGIC)})"
            try:
                data = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                return f"{where}: the data URL's base64 payload does not decode"
            if not data.startswith(_IMAGE_MAGIC[mime]) or (mime == "image/webp" and data[8:12] != b"WEBP"):
                return f"{where}: the payload is not a {mime} image (its first bytes are {data[:8]!r})"
    return None


def last_user_text(messages: list[Any]) -> str:
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return _part_text(msg.get("content"))
    return _part_text(messages[-1].get("content")) if messages and isinstance(messages[-1], dict) else ""


def all_text(messages: list[Any]) -> str:
    return "\n".join(_part_text(m.get("content")) for m in messages if isinstance(m, dict))


def fingerprint(model: str, messages: Any) -> str:
    """Stable hash of (model, messages): the key of `per_prompt_first_n` and the echo JSON seed."""
    canon = json.dumps([model, messages], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(canon.encode(), digest_size=16).hexdigest()


def echo_text(model: str, messages: list[Any]) -> str:
    """The default responder's plain-text answer."""
    return f"answer[{model}]: " + last_user_text(messages)[:ECHO_MAX_CHARS]


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


def echo_json(model: str, messages: list[Any], schema: dict[str, Any] | None, fp: str) -> str:
    if schema is None:
        obj: Any = {"answer": echo_text(model, messages)}
    else:
        obj = fill_schema(schema, bytes.fromhex(fp))
    return json.dumps(obj, ensure_ascii=False)


def _load_responder(spec: str) -> Responder | None:
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
        raise ValueError(f"responder must be 'echo', 'fixed:TEXT' or 'module:function', got {spec!r}")
    fn = getattr(importlib.import_module(mod_name), attr)
    if not callable(fn):
        raise ValueError(f"responder {spec!r} is not callable")
    return fn  # type: ignore[no-any-return]


def _tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4) if text else 0


# --------------------------------------------------------------------------------------------
# the aiohttp application
# --------------------------------------------------------------------------------------------


class _State:
    def __init__(self, faults: FaultSpec, api_key: str | None, responder: str, record: int) -> None:
        self.faults = FaultInjector(faults)
        self.api_key = api_key
        self.auth_header = f"Bearer {api_key}" if api_key else None
        self.responder_spec = responder
        self.responder = _load_responder(responder)
        self.record_max = record
        self.reset()

    def reset(self) -> None:
        self.requests_total = 0
        self.by_path: Counter[str] = Counter()
        self.faults_served: Counter[str] = Counter()
        self.by_model: Counter[str] = Counter()
        self.chat_by_model: Counter[str] = Counter()
        self.status_counts: Counter[int] = Counter()
        self.unauthorized = 0
        self.responses_ok = 0
        self.prompts: set[str] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.started = time.time()
        self.recorded: deque[dict[str, Any]] = deque(maxlen=self.record_max or None)

    def stats(self) -> dict[str, Any]:
        return {
            "requests_total": self.requests_total,
            "by_path": dict(self.by_path),
            "status_counts": {str(k): v for k, v in sorted(self.status_counts.items())},
            "faults": dict(self.faults_served),
            "faults_total": sum(self.faults_served.values()),
            "chat_requests": self.by_path.get("/v1/chat/completions", 0),
            "chat_by_model": dict(self.chat_by_model),
            "generation_by_model": dict(self.by_model),
            "distinct_prompts": len(self.prompts),
            "responses_ok": self.responses_ok,
            "unauthorized": self.unauthorized,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "uptime_s": round(time.time() - self.started, 3),
        }


STATE_KEY: web.AppKey[_State] = web.AppKey("state", _State)


def _error(status: int, message: str, etype: str, code: str | None = None,
           headers: dict[str, str] | None = None) -> web.Response:
    body = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return web.Response(status=status, body=json.dumps(body).encode(), content_type="application/json",
                        headers=headers)


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=json.dumps(obj, ensure_ascii=False).encode(),
                        content_type="application/json")


@web.middleware
async def _middleware(request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    path = request.path
    if path in CONTROL_PATHS:
        return await handler(request)  # type: ignore[no-any-return]
    state.requests_total += 1
    state.by_path[path] += 1
    if state.auth_header is not None and request.headers.get("Authorization") != state.auth_header:
        state.unauthorized += 1
        state.status_counts[401] += 1
        return _error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
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


async def _read_body(request: web.Request) -> dict[str, Any] | web.Response:
    try:
        body = await request.json(loads=json.loads)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _error(400, "Request body is not valid JSON.", "invalid_request_error")
    if not isinstance(body, dict):
        return _error(400, "Request body must be a JSON object.", "invalid_request_error")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return _error(400, "Missing required parameter: 'model'.", "invalid_request_error")
    if body.get("stream"):
        return _error(400, "The dialectbias test server does not support stream=true.",
                      "invalid_request_error")
    return body


async def _apply_fault(rule: FaultRule, state: _State) -> web.Response | str | None:
    """Serve an HTTP-level fault (returns a Response), a delay (returns None after sleeping),
    or a content fault (returns the kind as a marker string)."""
    kind = rule.kind
    state.faults_served[kind] += 1
    if kind == "429":
        ra = rule.retry_after if rule.retry_after is not None else 0.0
        return _error(429, "Rate limit reached (injected by dialectbias test server).", "requests",
                      "rate_limit_exceeded", headers={"Retry-After": _fmt_seconds(ra)})
    if kind == "500":
        return _error(500, "The server had an error (injected).", "server_error")
    if kind == "503":
        headers = {"Retry-After": _fmt_seconds(rule.retry_after)} if rule.retry_after is not None else None
        return _error(503, "The engine is currently overloaded (injected).", "server_error", headers=headers)
    if kind == "bad_body":
        return web.Response(status=200, body=b"<html><body>502 Bad Gateway (injected)</body>",
                            content_type="application/json")
    if kind in ("timeout", "slow"):
        await asyncio.sleep(rule.effective_delay())
        return None
    return kind


def _fmt_seconds(v: float | None) -> str:
    v = float(v or 0.0)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def _content_for(state: _State, body: dict[str, Any], model: str, messages: list[Any], fp: str,
                 fault: str | None) -> tuple[str, str]:
    """(content, finish_reason) for a chat request, after content-level faults."""
    wants_json, schema = requested_schema(body)
    if fault == "empty_content":
        return "", "stop"
    if fault == "invalid_json":
        return "Sure! Here is my verdict: {score: five, reasoning: 'looks fine'", "stop"
    content: str | None = None
    if state.responder is not None:
        content = state.responder(body)
    if content is None:
        content = echo_json(model, messages, schema, fp) if wants_json else echo_text(model, messages)
    if fault in ("truncated_json", "length"):
        if not wants_json and fault == "truncated_json":
            content = echo_json(model, messages, schema, fp)
        content = content[: max(1, len(content) // 2)]
        return content, "length" if fault == "length" else "stop"
    return content, "stop"


async def _chat(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    body = await _read_body(request)
    if isinstance(body, web.Response):
        return body
    model: str = body["model"]
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return _error(400, "'messages' must be a non-empty array.", "invalid_request_error")
    state.by_model[model] += 1
    state.chat_by_model[model] += 1
    fp = fingerprint(model, messages)
    state.prompts.add(fp)
    if state.record_max:
        state.recorded.append({"path": request.path, "body": body,
                               "authorization": request.headers.get("Authorization")})
    problem = image_part_problem(messages)
    if problem is not None:
        return _error(400, problem, "invalid_request_error")
    fault: str | None = None
    if state.faults:
        text = model + "\n" + all_text(messages) if state.faults.needs_text else ""
        rule = state.faults.decide(fp, text)
        if rule is not None:
            res = await _apply_fault(rule, state)
            if isinstance(res, web.Response):
                return res
            fault = res
    content, finish = _content_for(state, body, model, messages, fp, fault)
    prompt_tokens = _tokens(all_text(messages))
    completion_tokens = _tokens(content)
    state.responses_ok += 1
    return _json({
        "id": "chatcmpl-" + fp[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "dialectbias-testing",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": None},
            "logprobs": None,
            "finish_reason": finish,
        }],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


async def _completions(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    body = await _read_body(request)
    if isinstance(body, web.Response):
        return body
    model: str = body["model"]
    prompt = body.get("prompt", "")
    prompts = prompt if isinstance(prompt, list) else [prompt]
    prompts = [p if isinstance(p, str) else json.dumps(p) for p in prompts] or [""]
    state.by_model[model] += 1
    fp = fingerprint(model, prompts)
    state.prompts.add(fp)
    if state.record_max:
        state.recorded.append({"path": request.path, "body": body,
                               "authorization": request.headers.get("Authorization")})
    fault: str | None = None
    if state.faults:
        rule = state.faults.decide(fp, model + "\n" + "\n".join(prompts) if state.faults.needs_text else "")
        if rule is not None:
            res = await _apply_fault(rule, state)
            if isinstance(res, web.Response):
                return res
            fault = res
    choices = []
    total_completion = 0
    for i, p in enumerate(prompts):
        text = f"answer[{model}]: " + p[-ECHO_MAX_CHARS:]
        finish = "stop"
        if fault == "empty_content":
            text = ""
        elif fault == "invalid_json":
            text = "Sure! {score: five"
        elif fault in ("truncated_json", "length"):
            text = text[: max(1, len(text) // 2)]
            finish = "length" if fault == "length" else "stop"
        total_completion += _tokens(text)
        choices.append({"index": i, "text": text, "logprobs": None, "finish_reason": finish})
    prompt_tokens = sum(_tokens(p) for p in prompts)
    state.responses_ok += 1
    return _json({
        "id": "cmpl-" + fp[:24],
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": total_completion,
                  "total_tokens": prompt_tokens + total_completion},
    })


async def _models(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    names = sorted(set(state.by_model) | {"test-model"})
    return _json({"object": "list", "data": [
        {"id": n, "object": "model", "created": 0, "owned_by": "dialectbias-testing"} for n in names
    ]})


async def _health(request: web.Request) -> web.StreamResponse:
    return _json({"status": "ok", "pid": os.getpid()})


async def _stats(request: web.Request) -> web.StreamResponse:
    return _json(request.app[STATE_KEY].stats())


async def _stats_reset(request: web.Request) -> web.StreamResponse:
    request.app[STATE_KEY].reset()
    return _json({"status": "ok"})


async def _requests(request: web.Request) -> web.StreamResponse:
    return _json(list(request.app[STATE_KEY].recorded))


async def _set_faults(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    try:
        spec = FaultSpec.load(await request.json())
    except Exception as exc:  # pydantic ValidationError, JSON errors
        return _error(400, f"invalid fault spec: {exc}", "invalid_request_error")
    state.faults = FaultInjector(spec)
    return _json({"status": "ok", "rules": len(spec.rules)})


def make_app(faults: FaultSpec | dict[str, Any] | str | Path | None = None, *, api_key: str | None = None,
             responder: str = "echo", record_requests: int = 20_000) -> web.Application:
    """Build the aiohttp application (use `serve`/`TestServer` to run it)."""
    app = web.Application(middlewares=[_middleware], client_max_size=64 * 1024**2)
    app[STATE_KEY] = _State(FaultSpec.load(faults), api_key, responder, record_requests)
    app.router.add_post("/v1/chat/completions", _chat)
    app.router.add_post("/chat/completions", _chat)
    app.router.add_post("/v1/completions", _completions)
    app.router.add_post("/completions", _completions)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/health", _health)
    app.router.add_get("/stats", _stats)
    app.router.add_post("/stats/reset", _stats_reset)
    app.router.add_get("/requests", _requests)
    app.router.add_post("/faults", _set_faults)
    return app


async def serve(port: int = 0, *, faults: FaultSpec | dict[str, Any] | str | Path | None = None,
                api_key: str | None = None, responder: str = "echo", record_requests: int = 20_000,
                announce: Callable[[int], None] | None = None) -> None:
    """Run the server on 127.0.0.1:`port` until SIGTERM/SIGINT; `announce(port)` once listening."""
    app = make_app(faults, api_key=api_key, responder=responder, record_requests=record_requests)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port, backlog=1024)
    await site.start()
    bound = runner.addresses[0][1]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    if announce is not None:
        announce(bound)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = ServerParser()
    parser.add_argument("--port", type=int, default=0, help="0 = pick a free port (printed as JSON)")
    parser.add_argument("--faults", default=None, help="fault spec: path to a JSON file, or inline JSON "
                        "(format below)")
    parser.add_argument("--api-key", default=None, help="require 'Authorization: Bearer KEY' (or set "
                        "DIALECTBIAS_TESTSERVER_API_KEY)")
    parser.add_argument("--responder", default="echo", help="'echo', 'fixed:TEXT' or 'module:function', e.g. "
                        "dialectbias.testing:qa_responder (below)")
    parser.add_argument("--record-requests", type=int, default=20_000,
                        help="keep the last N request bodies for GET /requests (0 = off)")
    args = parser.parse_args(argv)
    api_key = args.api_key or os.environ.get("DIALECTBIAS_TESTSERVER_API_KEY") or None

    def announce(port: int) -> None:
        sys.stdout.write(json.dumps({"port": port}) + "\n")
        sys.stdout.flush()

    try:
        import uvloop  # type: ignore[import-not-found]  # optional speed-up
    except ImportError:
        runner: Callable[..., Any] = asyncio.run
    else:  # pragma: no cover - depends on environment
        runner = uvloop.run
    runner(serve(args.port, faults=args.faults, api_key=api_key, responder=args.responder,
                 record_requests=args.record_requests, announce=announce))


# --------------------------------------------------------------------------------------------
# the test-facing handle
# --------------------------------------------------------------------------------------------


class TestServerError(RuntimeError):
    """The test server failed to start or answer a control request."""


class TestServer:
    """Run the test server in a separate process for the duration of a ``with`` block.

    >>> with TestServer(faults={"rules": [{"kind": "429", "per_prompt_first_n": 1}]}) as srv:
    ...     client = OpenAI(base_url=srv.base_url, api_key="x")
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        faults: FaultSpec | dict[str, Any] | list[Any] | str | Path | None = None,
        *,
        api_key: str | None = None,
        responder: str = "echo",
        port: int = 0,
        record_requests: int = 20_000,
        startup_timeout: float = 30.0,
    ) -> None:
        self.faults = FaultSpec.load(faults)
        self.api_key = api_key
        self.responder = responder
        self.requested_port = port
        self.record_requests = record_requests
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Root URL, e.g. ``http://127.0.0.1:PORT``."""
        if self.port is None:
            raise TestServerError("TestServer is not running")
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return self.url + "/v1"

    def start(self) -> TestServer:
        if self._proc is not None:
            return self
        cmd = [sys.executable, "-m", "dialectbias.testing.server", "--port", str(self.requested_port),
               "--responder", self.responder, "--record-requests", str(self.record_requests)]
        if self.faults.rules:
            cmd += ["--faults", self.faults.model_dump_json(exclude_none=True)]
        env = dict(os.environ)
        env.pop("DIALECTBIAS_TESTSERVER_API_KEY", None)
        if self.api_key:
            env["DIALECTBIAS_TESTSERVER_API_KEY"] = self.api_key  # not on the command line
        pkg_root = str(Path(__file__).resolve().parents[2])  # the dir holding `dialectbias/`
        env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._stderr,
                                      stdin=subprocess.DEVNULL, env=env)
        try:
            self.port = self._read_port(time.monotonic() + self.startup_timeout)
            self._wait_healthy(time.monotonic() + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-4000:]

    def _read_port(self, deadline: float) -> int:
        assert self._proc is not None and self._proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self._proc.stdout, selectors.EVENT_READ)
        buf = b""
        try:
            while b"\n" not in buf:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TestServerError("test server did not report its port in time\n"
                                          + self._stderr_tail())
                if not sel.select(timeout=remaining):
                    continue
                chunk = os.read(self._proc.stdout.fileno(), 4096)
                if not chunk:
                    raise TestServerError(f"test server exited early (code {self._proc.poll()})\n"
                                          + self._stderr_tail())
                buf += chunk
        finally:
            sel.close()
        return int(json.loads(buf.split(b"\n", 1)[0])["port"])

    def _wait_healthy(self, deadline: float) -> None:
        delay = 0.005
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if self._proc is not None and self._proc.poll() is not None:
                raise TestServerError(f"test server exited (code {self._proc.returncode})\n"
                                      + self._stderr_tail())
            if time.monotonic() > deadline:
                raise TestServerError("test server did not become healthy in time\n" + self._stderr_tail())
            time.sleep(delay)  # poll back-off between /health attempts
            delay = min(delay * 2, 0.1)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        self.port = None

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -- control -----------------------------------------------------------------------------
    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            raise TestServerError(f"{method} {path} -> {exc.code}: {detail}") from exc

    def stats(self) -> dict[str, Any]:
        """Counters: requests_total, by_path, status_counts, faults (per kind), faults_total,
        chat_requests, chat_by_model, generation_by_model, distinct_prompts, responses_ok,
        unauthorized, in_flight, max_in_flight, uptime_s."""
        return self._call("GET", "/stats")  # type: ignore[no-any-return]

    def reset_stats(self) -> None:
        """Zero the counters and the recorded requests (fault-rule counters are kept)."""
        self._call("POST", "/stats/reset", {})

    def requests(self) -> list[dict[str, Any]]:
        """Recorded generation requests: ``[{"path", "body", "authorization"}, ...]`` (oldest first)."""
        return self._call("GET", "/requests")  # type: ignore[no-any-return]

    def set_faults(self, faults: FaultSpec | dict[str, Any] | list[Any] | str | Path | None) -> None:
        """Replace the fault rules (their counters start from zero)."""
        spec = FaultSpec.load(faults)
        self.faults = spec
        self._call("POST", "/faults", spec.model_dump(exclude_none=True))
