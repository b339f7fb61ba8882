"""The OpenAI-compatible provider over HTTP against the local test server (127.0.0.1 only)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import socket
from typing import Any

import pytest
from PIL import Image

from dialectbias.errors import ConfigError, ProviderError
from dialectbias.judges import rlaif_json_schema
from dialectbias.providers import ChatRequest, ChatResponse, create_model
from dialectbias.providers._openai import OpenAIModel, OpenAIModelConfig
from dialectbias.testing import TestServer

RIGHT_KEY = "sk-test-right-0123456789abcdef"
WRONG_KEY = "sk-test-WRONG-9876543210fedcba"
SCHEMA = rlaif_json_schema()
QUESTION = [{"role": "user", "content": "ঢাকা জেলার প্রধান নদীর নাম কী?"}]


def config(base_url: str, **changes: Any) -> OpenAIModelConfig:
    return OpenAIModelConfig(**{"id": "m", "model": "test-model", "base_url": base_url, "max_retries": 0,
                                **changes})


def complete(model: OpenAIModel, request: ChatRequest) -> ChatResponse:
    async def go() -> ChatResponse:
        try:
            return await model.complete(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


def provider_error(model: OpenAIModel, request: ChatRequest) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        complete(model, request)
    return info.value


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def keyed_server():
    with TestServer(api_key=RIGHT_KEY) as server:
        yield server


def test_registry_creates_the_openai_client(qa_server: Any) -> None:
    assert isinstance(create_model(config(qa_server.base_url)), OpenAIModel)


def test_plain_request_has_no_response_format(qa_server: Any) -> None:
    response = complete(OpenAIModel(config(qa_server.base_url)),
                        ChatRequest(messages=QUESTION, params={"temperature": 0, "max_tokens": 32}))
    (sent,) = qa_server.requests()
    assert sent["body"] == {"model": "test-model", "messages": QUESTION, "temperature": 0, "max_tokens": 32}
    assert response.output.startswith("উত্তর: ")
    assert response.finish_reason == "stop" and response.tokens_in > 0 and response.tokens_out > 0


@pytest.mark.parametrize(("mode", "expected"), [
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "rlaif_judgment", "schema": SCHEMA,
                                                            "strict": True}}),
    ("json_object", {"type": "json_object", "schema": SCHEMA}),
    ("none", None),
])
def test_structured_output_mode_shapes_the_body(qa_server: Any, mode: str, expected: Any) -> None:
    request = ChatRequest(messages=QUESTION, json_schema=SCHEMA, schema_name="rlaif_judgment")
    complete(OpenAIModel(config(qa_server.base_url, structured_output=mode)), request)
    (sent,) = qa_server.requests()
    assert sent["body"].get("response_format") == expected


def test_judge_answer_validates_against_the_schema(qa_server: Any) -> None:
    from dialectbias.judges import RlaifJudgment, parse_structured

    response = complete(OpenAIModel(config(qa_server.base_url)), ChatRequest(messages=QUESTION,
                                                                             json_schema=SCHEMA))
    assert parse_structured(response.output, RlaifJudgment).status == "ok"


def test_the_key_is_sent_as_a_bearer_token(keyed_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    keyed_server.reset_stats()
    monkeypatch.setenv("DB_TEST_KEY", RIGHT_KEY)
    complete(OpenAIModel(config(keyed_server.base_url, api_key_env="DB_TEST_KEY")),
             ChatRequest(messages=QUESTION))
    (sent,) = keyed_server.requests()
    assert sent["authorization"] == f"Bearer {RIGHT_KEY}"


def test_wrong_key_is_not_retryable_and_not_in_the_message(keyed_server: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_TEST_KEY", WRONG_KEY)
    exc = provider_error(OpenAIModel(config(keyed_server.base_url, api_key_env="DB_TEST_KEY")),
                         ChatRequest(messages=QUESTION))
    assert (exc.status, exc.retryable) == (401, False)
    assert "HTTP 401" in str(exc) and "api_key_env" in str(exc)
    assert WRONG_KEY not in str(exc) and WRONG_KEY[8:20] not in str(exc)


def test_key_fragments_echoed_by_a_server_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_TEST_KEY", WRONG_KEY)
    model = OpenAIModel(config("http://127.0.0.1:1/v1", api_key_env="DB_TEST_KEY"))
    redacted = model._redact(f"Incorrect API key provided: {WRONG_KEY[:12]}****{WRONG_KEY[-8:]}")
    assert WRONG_KEY[:12] not in redacted and WRONG_KEY[-8:] not in redacted


def test_missing_key_variable_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DB_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="DB_TEST_NO_SUCH_KEY") as info:
        OpenAIModel(config("http://127.0.0.1:1/v1", api_key_env="DB_TEST_NO_SUCH_KEY"))
    assert "'m'" in str(info.value)


def test_unreachable_server_is_retryable_and_names_the_base_url() -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    exc = provider_error(OpenAIModel(config(base_url)), ChatRequest(messages=QUESTION))
    assert exc.retryable
    assert base_url in str(exc) and "cannot connect" in str(exc)


@pytest.mark.parametrize(("kind", "status"), [("500", 500), ("503", 503), ("429", 429)])
def test_server_errors_are_retryable(qa_server: Any, kind: str, status: int) -> None:
    qa_server.set_faults([{"kind": kind, "retry_after": 2}])
    exc = provider_error(OpenAIModel(config(qa_server.base_url)), ChatRequest(messages=QUESTION))
    assert (exc.status, exc.retryable) == (status, True)
    assert exc.retry_after == (2.0 if kind != "500" else None)


def test_timeout_is_retryable(qa_server: Any) -> None:
    qa_server.set_faults([{"kind": "timeout", "delay_s": 2.0}])
    exc = provider_error(OpenAIModel(config(qa_server.base_url, timeout_s=0.2)),
                         ChatRequest(messages=QUESTION))
    assert exc.retryable and "no answer within 0.2 s" in str(exc)


def test_a_body_that_is_not_a_completion_is_retryable(qa_server: Any) -> None:
    qa_server.set_faults([{"kind": "bad_body"}])
    exc = provider_error(OpenAIModel(config(qa_server.base_url)), ChatRequest(messages=QUESTION))
    assert exc.retryable and "not a chat completion" in str(exc)


def test_404_hints_at_base_url(qa_server: Any) -> None:
    exc = provider_error(OpenAIModel(config(qa_server.url + "/nowhere")), ChatRequest(messages=QUESTION))
    assert (exc.status, exc.retryable) == (404, False)
    assert "check base_url" in str(exc)


def test_utf8_is_sent_unescaped(qa_server: Any) -> None:
    body = OpenAIModel(config(qa_server.base_url)).body(ChatRequest(messages=QUESTION))
    from dialectbias.providers._openai import _dumps

    assert "ঢাকা" in _dumps(body)
    assert json.loads(_dumps(body)) == body


# -- image parts (issue 8.3) ------------------------------------------------------------------------


def png(size: tuple[int, int], color: tuple[int, int, int] = (200, 10, 10)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


def image_request(image: bytes, text: str = "কী দেখা যাচ্ছে?") -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": [{"type": "image", "image": image},
                                                               {"type": "text", "text": text}]}])


def test_image_parts_are_sent_as_data_urls_the_server_accepts(qa_server: Any) -> None:
    image = png((40, 30))
    model = create_model(config(qa_server.base_url))
    assert complete(model, image_request(image)).output
    parts = qa_server.requests()[-1]["body"]["messages"][0]["content"]
    assert parts[0]["type"] == "image_url" and parts[1] == {"type": "text", "text": "কী দেখা যাচ্ছে?"}
    header, _, payload = parts[0]["image_url"]["url"].partition(",")
    assert header == "data:image/png;base64" and base64.b64decode(payload) == image


def test_images_above_max_image_side_are_scaled_down() -> None:
    model = OpenAIModel(config("http://127.0.0.1:1/v1", max_image_side=100))
    url = model.body(image_request(png((400, 50))))["messages"][0]["content"][0]["image_url"]["url"]
    with Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2]))) as img:
        assert img.size == (100, 12)  # 400 × 50 scaled by 1/4, aspect kept
    small = png((80, 60))
    url = model.body(image_request(small))["messages"][0]["content"][0]["image_url"]["url"]
    assert base64.b64decode(url.partition(",")[2]) == small  # at or below the bound: sent as stored


def test_max_image_side_is_part_of_the_identity_only_when_set() -> None:
    assert "max_image_side" not in config("http://x/v1").identity()
    assert config("http://x/v1", max_image_side=512).identity()["max_image_side"] == 512


def test_the_token_estimate_counts_an_image_by_its_tiles_not_its_bytes() -> None:
    """A 300 KB image counted as text (the old len(str(content)) / 4) would be ~100,000 tokens."""
    out = io.BytesIO()
    Image.frombytes("RGB", (1024, 1024), hashlib.shake_256(b"n").digest(1024 * 1024 * 3)).save(out, format="PNG")
    request = image_request(out.getvalue(), text="x" * 400)
    assert len(out.getvalue()) > 300_000
    model = OpenAIModel(config("http://127.0.0.1:1/v1"))
    text = 400 // 2  # 400 Latin characters at 2 per token (`providers._tokens`)
    assert model.estimate_tokens(request) == text + 85 + 170 * 4  # 1024² → 768², 2 × 2 tiles of 512 px
    small = OpenAIModel(config("http://127.0.0.1:1/v1", max_image_side=512))
    assert small.estimate_tokens(request) == text + 85 + 170  # sent at 512², one tile
