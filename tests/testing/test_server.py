"""The OpenAI-compatible test server: answers, JSON schemas, auth, faults, stats."""

from __future__ import annotations

import base64
import io
import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from PIL import Image

from dialectbias.testing import FaultInjector, FaultSpec, TestServer, fill_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 40},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "label": {"type": "string", "enum": ["harmful", "benign", "unclear"]},
        "refused": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4},
        "grade": {"$ref": "#/$defs/Grade"},
    },
    "required": ["reasoning", "score", "confidence", "label", "refused", "tags", "grade"],
    "additionalProperties": False,
    "$defs": {"Grade": {"type": "string", "enum": ["A", "B", "C"]}},
}


def _post(url: str, body: Any, headers: dict[str, str] | None = None,
          timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _chat(srv: TestServer, text: str, *, model: str = "m", schema: dict[str, Any] | None = None,
          headers: dict[str, str] | None = None, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "system", "content": "be brief"},
                                                          {"role": "user", "content": text}],
                            "temperature": 0, "max_tokens": 50, "seed": 1}
    if schema is not None:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "verdict", "schema": schema, "strict": True}}
    return _post(srv.base_url + "/chat/completions", body, headers, timeout)


def _content(raw: bytes) -> str:
    return json.loads(raw)["choices"][0]["message"]["content"]  # type: ignore[no-any-return]


def _check_conforms(obj: Any) -> None:
    try:
        import jsonschema
    except ImportError:
        assert list(obj) == list(SCHEMA["properties"])  # schema order kept
        assert isinstance(obj["reasoning"], str) and len(obj["reasoning"]) <= 40
        assert isinstance(obj["score"], int) and 1 <= obj["score"] <= 5
        assert isinstance(obj["confidence"], int | float) and 0 <= obj["confidence"] <= 1
        assert obj["label"] in ("harmful", "benign", "unclear")
        assert isinstance(obj["refused"], bool)
        assert 1 <= len(obj["tags"]) <= 4 and all(isinstance(t, str) for t in obj["tags"])
        assert obj["grade"] in ("A", "B", "C")
    else:
        jsonschema.validate(obj, SCHEMA)
        assert list(obj) == list(SCHEMA["properties"])


@pytest.fixture(scope="module")
def srv():
    with TestServer() as server:
        yield server


def test_health_models_and_base_url(srv: TestServer) -> None:
    assert srv.base_url == f"http://127.0.0.1:{srv.port}/v1"
    with urllib.request.urlopen(srv.url + "/health", timeout=5) as resp:
        assert json.loads(resp.read())["status"] == "ok"
    with urllib.request.urlopen(srv.base_url + "/models", timeout=5) as resp:
        assert json.loads(resp.read())["object"] == "list"


def test_echo_is_deterministic_and_openai_shaped(srv: TestServer) -> None:
    status, _, raw = _chat(srv, "What is a rickshaw?" + "x" * 500, model="echo-m")
    assert status == 200
    body = json.loads(raw)
    assert body["object"] == "chat.completion" and body["model"] == "echo-m"
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["choices"][0]["message"]["role"] == "assistant"
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    content = body["choices"][0]["message"]["content"]
    assert content.startswith("answer[echo-m]: What is a rickshaw?")
    assert len(content) == len("answer[echo-m]: ") + 200
    assert _content(_chat(srv, "What is a rickshaw?" + "x" * 500, model="echo-m")[2]) == content


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (0, 128, 255)).save(out, format="PNG")
    return out.getvalue()


def _image_body(url: str) -> dict[str, Any]:
    return {"model": "vlm", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "describe"}, {"type": "image_url", "image_url": {"url": url}},
        {"type": "text", "text": "briefly"}]}]}


def test_content_parts_with_images(srv: TestServer) -> None:
    url = "data:image/png;base64," + base64.b64encode(_png()).decode()
    status, _, raw = _post(srv.base_url + "/chat/completions", _image_body(url))
    assert status == 200
    assert _content(raw) == "answer[vlm]: describe briefly"


@pytest.mark.parametrize(("url", "message"), [
    ("data:image/png;base64,AAAA", "the payload is not a image/png image"),
    ("data:image/png;base64,%%%not base64", "base64 payload does not decode"),
    ("data:image/jpeg;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n1234").decode(), "not a image/jpeg image"),
    ("data:image/tiff;base64,AAAA", "unsupported image type image/tiff"),
    ("https://example.org/cat.png", "must be a base64 data URL"),
    ("data:image/png,rawbytes", "must be a base64 data URL"),
])
def test_a_bad_image_part_is_a_400_naming_the_part(srv: TestServer, url: str, message: str) -> None:
    status, _, raw = _post(srv.base_url + "/chat/completions", _image_body(url))
    assert status == 400
    error = json.loads(raw)["error"]["message"]
    assert error.startswith("messages[0].content[1]: ") and message in error


def test_an_unconverted_image_part_is_a_400(srv: TestServer) -> None:
    body = {"model": "vlm", "messages": [{"role": "user", "content": [{"type": "image", "image": "x"}]}]}
    status, _, raw = _post(srv.base_url + "/chat/completions", body)
    assert status == 400 and "unsupported content part type 'image'" in json.loads(raw)["error"]["message"]


def test_json_schema_conformance_and_determinism(srv: TestServer) -> None:
    scores = set()
    for i in range(40):
        status, _, raw = _chat(srv, f"judge answer {i}", model="judge", schema=SCHEMA)
        assert status == 200
        obj = json.loads(_content(raw))
        _check_conforms(obj)
        scores.add(obj["score"])
        again = json.loads(_content(_chat(srv, f"judge answer {i}", model="judge", schema=SCHEMA)[2]))
        assert again == obj
    assert len(scores) >= 3  # different prompts get different scores


def test_json_object_with_and_without_schema(srv: TestServer) -> None:
    body = {"model": "j", "messages": [{"role": "user", "content": "rate it"}],
            "response_format": {"type": "json_object", "schema": SCHEMA}}
    _check_conforms(json.loads(_content(_post(srv.base_url + "/chat/completions", body)[2])))
    body["response_format"] = {"type": "json_object"}
    assert isinstance(json.loads(_content(_post(srv.base_url + "/chat/completions", body)[2])), dict)


def test_fill_schema_edge_cases() -> None:
    seed = bytes(16)
    assert fill_schema({"type": "integer", "minimum": 3, "maximum": 3}, seed) == 3
    v = fill_schema({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 2}, seed)
    assert v == 1
    assert fill_schema({"anyOf": [{"type": "null"}, {"type": "boolean"}]}, seed) in (True, False)
    assert fill_schema({"type": ["string", "null"], "minLength": 50}, seed).__len__() >= 50
    assert fill_schema({"const": "x"}, seed) == "x"


def test_completions_endpoint(srv: TestServer) -> None:
    body = {"model": "c", "prompt": "Once upon", "max_tokens": 5}
    status, _, raw = _post(srv.base_url + "/completions", body)
    assert status == 200
    body = json.loads(raw)
    assert body["object"] == "text_completion"
    assert body["choices"][0]["text"] == "answer[c]: Once upon"


def test_bad_requests(srv: TestServer) -> None:
    assert _post(srv.base_url + "/chat/completions", b"{nope")[0] == 400
    assert _post(srv.base_url + "/chat/completions", {"messages": []})[0] == 400
    status, _, raw = _post(srv.base_url + "/chat/completions", {"model": "m", "messages": []})
    assert status == 400 and "error" in json.loads(raw)


def test_api_key_required() -> None:
    with TestServer(api_key="sekret") as srv:
        status, _, raw = _chat(srv, "hi")
        assert status == 401
        err = json.loads(raw)["error"]
        assert err["code"] == "invalid_api_key" and err["type"] == "invalid_request_error"
        assert _chat(srv, "hi", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert _chat(srv, "hi", headers={"Authorization": "Bearer sekret"})[0] == 200
        stats = srv.stats()
        assert stats["unauthorized"] == 2 and stats["responses_ok"] == 1
        assert srv.requests()[-1]["authorization"] == "Bearer sekret"


@pytest.mark.parametrize(
    ("kind", "check"),
    [
        ("429", lambda s, h, c: s == 429 and h.get("Retry-After") == "0.2"),
        ("500", lambda s, h, c: s == 500 and "error" in json.loads(c)),
        ("503", lambda s, h, c: s == 503),
        ("bad_body", lambda s, h, c: s == 200 and not _is_json(c)),
        ("empty_content", lambda s, h, c: s == 200 and _content(c) == ""),
        ("invalid_json", lambda s, h, c: s == 200 and not _is_json(_content(c))),
        ("out_of_range", lambda s, h, c: s == 200 and 1023984765 in json.loads(_content(c)).values()),
        ("truncated_json", lambda s, h, c: s == 200 and _content(c).startswith("{")
         and not _is_json(_content(c))),
        ("length", lambda s, h, c: s == 200
         and json.loads(c)["choices"][0]["finish_reason"] == "length"),
    ],
)
def test_each_fault_kind(kind: str, check: Any) -> None:
    rule = {"kind": kind, "per_prompt_first_n": 1, "retry_after": 0.2}
    with TestServer(faults={"rules": [rule]}) as srv:
        status, headers, raw = _chat(srv, "fault me", model="judge", schema=SCHEMA)
        assert check(status, headers, raw), (status, headers, raw[:300])
        status, _, raw = _chat(srv, "fault me", model="judge", schema=SCHEMA)  # second attempt is clean
        assert status == 200
        _check_conforms(json.loads(_content(raw)))
        assert srv.stats()["faults"] == {kind: 1}


def test_timeout_and_slow_faults_delay_then_answer() -> None:
    rules = [{"kind": "timeout", "delay_s": 1.0, "match": "TIMEOUT", "times": 1},
             {"kind": "slow", "delay_s": 0.2, "match": "SLOW"}]
    with TestServer(faults={"rules": rules}) as srv:
        with pytest.raises((TimeoutError, urllib.error.URLError)):
            _chat(srv, "please TIMEOUT", timeout=0.3)
        t0 = time.perf_counter()
        assert _chat(srv, "please SLOW")[0] == 200
        assert time.perf_counter() - t0 >= 0.2
        t0 = time.perf_counter()
        assert _chat(srv, "please TIMEOUT")[0] == 200  # times=1 used up
        assert time.perf_counter() - t0 < 0.9
        assert srv.stats()["faults"] == {"timeout": 1, "slow": 1}


def test_times_every_and_match() -> None:
    rules = [{"kind": "500", "match": "judge", "times": 2}, {"kind": "503", "every": 3}]
    with TestServer(faults={"rules": rules}) as srv:
        judge = [_chat(srv, f"q{i}", model="judge-1")[0] for i in range(4)]
        assert judge == [500, 500, 200, 200]
        other = [_chat(srv, f"q{i}", model="gen")[0] for i in range(6)]
        # the 503 rule saw the two judge requests that passed rule 1, so its 3rd is other[0]
        assert other == [503, 200, 200, 503, 200, 200]


def test_per_prompt_first_n_is_order_independent() -> None:
    with TestServer(faults={"rules": [{"kind": "429", "per_prompt_first_n": 2, "retry_after": 0}]}) as srv:
        def attempt_until_ok(i: int) -> int:
            for n in range(1, 10):
                if _chat(srv, f"prompt {i}")[0] == 200:
                    return n
            return -1

        with ThreadPoolExecutor(16) as pool:
            attempts = list(pool.map(attempt_until_ok, range(40)))
        assert attempts == [3] * 40
        stats = srv.stats()
        assert stats["faults"] == {"429": 80}
        assert stats["distinct_prompts"] == 40


def test_stats_counting_reset_and_set_faults() -> None:
    with TestServer() as srv:
        for i in range(3):
            _chat(srv, f"a{i}", model="alpha")
        _chat(srv, "b", model="beta")
        _post(srv.base_url + "/completions", {"model": "beta", "prompt": "x"})
        stats = srv.stats()
        assert stats["requests_total"] == 5
        assert stats["by_path"] == {"/v1/chat/completions": 4, "/v1/completions": 1}
        assert stats["chat_requests"] == 4
        assert stats["chat_by_model"] == {"alpha": 3, "beta": 1}
        assert stats["generation_by_model"] == {"alpha": 3, "beta": 2}
        assert stats["faults_total"] == 0 and stats["responses_ok"] == 5
        assert len(srv.requests()) == 5
        srv.reset_stats()
        assert srv.stats()["requests_total"] == 0 and srv.requests() == []
        srv.set_faults([{"kind": "500", "times": 1}])
        assert _chat(srv, "c")[0] == 500
        assert _chat(srv, "c")[0] == 200
        assert srv.stats()["faults"] == {"500": 1}


def test_fault_spec_loading(tmp_path: Any) -> None:
    path = tmp_path / "faults.json"
    path.write_text(json.dumps({"rules": [{"kind": "slow"}]}))
    assert FaultSpec.load(path).rules[0].effective_delay() == 0.05
    assert FaultSpec.load(str(path)).rules[0].kind == "slow"
    assert FaultSpec.load('[{"kind": "timeout"}]').rules[0].effective_delay() == 5.0
    with pytest.raises(ValueError):
        FaultSpec.load({"rules": [{"kind": "teapot"}]})
    inj = FaultInjector(FaultSpec.load({"rules": [{"kind": "500", "every": 2, "times": 2}]}))
    fired = [inj.decide(f"p{i}", "") is not None for i in range(8)]
    assert fired == [False, True, False, True, False, False, False, False]


def test_server_stops_on_exit() -> None:
    srv = TestServer()
    with srv:
        url = srv.url
        proc = srv._proc
    assert proc is not None and proc.poll() is not None
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/health", timeout=2)


def _is_json(text: str | bytes) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_each_imitated_server_counts_tokens_on_its_own_route() -> None:
    """vLLM's and llama.cpp's `POST /tokenize`, llama-cpp-python's `POST /extras/tokenize/count`, in their shapes,
    with the count the server reports as `prompt_tokens` (one token per 4 characters); any other route, or
    `--no-tokenize`, is a 404; metadata, not model calls."""
    messages = [{"role": "user", "content": "x" * 40}]
    with TestServer(imitate="vllm", context=2048) as srv:
        status, _, raw = _post(srv.url + "/tokenize", {"model": "m", "messages": messages,
                                                       "add_generation_prompt": True})
        assert status == 200
        answer = json.loads(raw)
        assert (answer["count"], answer["max_model_len"], len(answer["tokens"])) == (10, 2048, 10)
        assert _post(srv.url + "/extras/tokenize/count", {"input": "x"})[0] == 404
        assert srv.stats()["requests_total"] == 0
    with TestServer(imitate="llamacpp") as srv:
        status, _, raw = _post(srv.url + "/tokenize", {"content": "x" * 41})
        assert status == 200 and json.loads(raw) == {"tokens": list(range(11))}
    with TestServer(imitate="llama-cpp-python") as srv:
        status, _, raw = _post(srv.url + "/extras/tokenize/count", {"input": "x" * 8})
        assert status == 200 and json.loads(raw) == {"count": 2}
        assert _post(srv.url + "/tokenize", {"content": "x"})[0] == 404
    with TestServer(imitate="vllm", tokenize=False) as srv:
        assert _post(srv.url + "/tokenize", {"model": "m", "messages": messages})[0] == 404
    with TestServer() as srv:  # nothing imitated: no tokenize route
        assert _post(srv.url + "/tokenize", {"model": "m", "messages": messages})[0] == 404
