"""Server discovery (issue 24 item 1): `ModelAPI.server_profile()` learns the kind, context window and parallel
slots of an OpenAI-compatible server from `GET /v1/models` (and llama.cpp's `GET /props`), over real HTTP to
the test server imitating vLLM, llama.cpp and llama-cpp-python; without a `server:` hint a schema that would
crash a grammar-building server stops the model with one message instead of being sent."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from dialectbias.errors import ProviderError
from dialectbias.judges import rlaif_json_schema
from dialectbias.providers import ChatRequest, ServerProfile
from dialectbias.providers._fit import engine_too_long, refuses_context
from dialectbias.providers._openai import OpenAIModel, OpenAIModelConfig
from dialectbias.providers._server import detect_kind, props_slots, refuses_response_format, sent_schema
from dialectbias.testing import TestServer

SCHEMA = rlaif_json_schema()
REQUEST = ChatRequest(messages=[{"role": "user", "content": "Rate this answer."}], json_schema=SCHEMA,
                      params={"max_tokens": 64})


def _config(base_url: str, **changes: Any) -> OpenAIModelConfig:
    return OpenAIModelConfig(**{"id": "judge-1", "model": "judge-model", "base_url": base_url, "max_retries": 0,
                                **changes})


def _profile_twice(config: OpenAIModelConfig) -> tuple[ServerProfile | None, ServerProfile | None]:
    async def go() -> tuple[ServerProfile | None, ServerProfile | None]:
        client = OpenAIModel(config)
        try:
            first, second = await asyncio.gather(client.server_profile(), client.server_profile())
            assert await client.context_window() == (first.context_window if first else None)
            return first, second
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_detect_kind_reads_what_each_server_says_of_itself() -> None:
    def listing(**entry: Any) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "m", "object": "model", **entry}]}

    assert detect_kind(listing(owned_by="vllm", max_model_len=2048), "m") == "vllm"
    assert detect_kind(listing(owned_by="llamacpp"), "m") == "llamacpp"
    assert detect_kind(listing(owned_by="x", meta={"n_ctx_train": 8192}), "m") == "llamacpp"
    assert detect_kind(listing(owned_by="me", permissions=[]), "m") == "llamacpp"  # llama-cpp-python
    assert detect_kind(listing(owned_by="library"), "m") == "ollama"
    assert detect_kind(listing(owned_by="system"), "m") == "openai"
    assert detect_kind(listing(owned_by="me"), "m") is None  # no permissions list: not llama-cpp-python
    assert detect_kind(listing(owned_by="acme-proxy"), "m") is None
    assert detect_kind({"error": "no"}, "m") is None
    assert props_slots({"total_slots": 4}) == 4
    assert props_slots({"total_slots": True}) is None and props_slots(None) is None


@pytest.mark.parametrize(("imitate", "expected", "paths"), [
    ("llamacpp", ServerProfile(kind="llamacpp", detected="llamacpp", context_window=2048, slots=4,
                               tokenize="llamacpp"),
     {"/v1/models": 1, "/props": 1}),
    ("vllm", ServerProfile(kind="vllm", detected="vllm", context_window=2048, slots=None, tokenize="vllm"),
     {"/v1/models": 1}),
    ("llama-cpp-python", ServerProfile(kind="llamacpp", detected="llamacpp", context_window=None, slots=None,
                                       tokenize="llama-cpp-python"),
     {"/v1/models": 1, "/props": 1}),  # it has no /props (404): the context stays unknown
])
def test_the_profile_of_each_imitated_server_is_asked_once(imitate: str, expected: ServerProfile,
                                                           paths: dict[str, int]) -> None:
    with TestServer(imitate=imitate, context=2048, slots=4) as server:
        first, second = _profile_twice(_config(server.base_url))
        assert first == second == expected
        stats = server.stats()
        assert stats["by_path"] == paths
        assert stats["requests_total"] == 0  # metadata routes are not model calls


def test_the_hint_wins_over_what_the_server_says_and_the_default_server_says_nothing() -> None:
    with TestServer(imitate="llamacpp", context=1024, slots=2) as server:
        first, _ = _profile_twice(_config(server.base_url, server="ollama"))
    assert first == ServerProfile(kind="ollama", detected="llamacpp", context_window=1024, slots=2)
    with TestServer() as server:  # the plain test server: vLLM-like max_model_len, no owner anyone uses
        first, _ = _profile_twice(_config(server.base_url, model="test-model"))
    assert first == ServerProfile(kind="other", detected=None, context_window=8192, slots=None)


def test_an_unreachable_server_has_no_profile() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    first, second = _profile_twice(_config(f"http://127.0.0.1:{port}/v1"))
    assert first is None and second is None


def _complete(config: OpenAIModelConfig) -> Any:
    async def go() -> Any:
        client = OpenAIModel(config)
        try:
            return await client.complete(REQUEST)
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("imitate", ["llamacpp", "llama-cpp-python"])
def test_without_the_hint_a_detected_llamacpp_gets_nothing_it_would_die_of(imitate: str) -> None:
    assert sent_schema(SCHEMA, "llamacpp") != SCHEMA  # the rubric's maxLength 1500 and ranges
    with TestServer(imitate=imitate) as server:
        with pytest.raises(ProviderError) as info:
            _complete(_config(server.base_url, structured_output="json_object"))
        assert info.value.fatal and not info.value.retryable
        message = str(info.value)
        assert "model 'judge-1'" in message and "says it is llamacpp" in message
        assert "set `server: llamacpp` on this model" in message and "nothing was sent" in message
        assert server.stats()["chat_requests"] == 0

        with pytest.raises(ProviderError) as info:  # json_schema: both settings named in the one message
            _complete(_config(server.base_url, structured_output="json_schema"))
        assert "set `server: llamacpp` and `structured_output: json_object`" in str(info.value)
        assert server.stats()["chat_requests"] == 0

        answer = _complete(_config(server.base_url, structured_output="json_object", server="llamacpp"))
        assert answer.output.startswith("{")
        sent = server.requests()[-1]["body"]["response_format"]["schema"]
        assert sent == sent_schema(SCHEMA, "llamacpp")


def test_a_detected_vllm_or_a_schema_that_is_already_safe_is_sent_as_it_is() -> None:
    with TestServer(imitate="vllm") as server:
        assert _complete(_config(server.base_url)).output.startswith("{")
        assert server.requests()[-1]["body"]["response_format"]["json_schema"]["schema"] == SCHEMA
    safe = sent_schema(SCHEMA, "llamacpp")
    with TestServer(imitate="llamacpp") as server:
        request = REQUEST.model_copy(update={"json_schema": safe})

        async def go() -> Any:
            client = OpenAIModel(_config(server.base_url, structured_output="json_object"))
            try:
                return await client.complete(request)
            finally:
                await client.aclose()

        assert asyncio.run(go()).output.startswith("{")
        assert server.stats()["chat_requests"] == 1


@pytest.mark.parametrize(("status", "body", "too_long"), [
    (400, "This model's maximum context length is 2048 tokens. However, you requested 2310 tokens (2054 in the "
          "messages, 256 in the completion).", True),  # vLLM, OpenAI, llama-cpp-python
    (400, '{"error": {"code": 400, "message": "request (2310 tokens) exceeds the available context size (2048 '
          'tokens), try increasing it", "type": "exceed_context_size_error"}}', True),  # llama.cpp
    (500, "Requested tokens (2310) exceed context window of 2048", True),  # llama-cpp-python, older
    (400, "input length exceeds the context length", True),  # Ollama
    (400, "Input length (2310) exceeds model's maximum context length (2048).", True),  # vLLM's server
    (400, "The decoder prompt (length 2310) is longer than the maximum model length of 2048.", True),  # vLLM
    (400, "response_format json_schema is not supported by this server", False),
    (429, "maximum context length is busy", False),  # a rate limit is a rate limit
    (400, "Missing required parameter: 'model'.", False),
])
def test_a_server_saying_the_prompt_is_too_long_is_told_apart(status: int, body: str, too_long: bool) -> None:
    assert refuses_context(status, body) is too_long
    if too_long:  # never mistaken for a refused response_format, which stops the model
        assert not refuses_response_format(status, body)
        fault = engine_too_long("m", body)  # the same words from an in-process engine (local vllm)
        assert fault is not None and fault.context and not fault.retryable
    elif status != 429:  # an engine has no status: the words alone decide
        assert engine_too_long("m", body) is None
