"""`provider: vllm` with images, on a tiny random Idefics3 (SmolVLM's architecture) built in the test
(`tests/tiny_vlm.py`, shared with the `hf` provider's image tests): image parts reach vLLM's engine as data
URLs, their tokens are inserted, image and text requests share a batch; more images than the per-prompt limit,
an image sent to a text-only model, and an image on the Ray + vLLM path each fail with one clear message.
They need the vllm extra (and ray for the last) and skip without them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scale_helpers import have, need_ray, need_vllm

pytestmark = pytest.mark.scale

if not have("transformers"):
    pytest.skip("needs the hf extra to build the tiny model: pip install 'dialectbias[hf]'", allow_module_level=True)

from dialectbias.data import image_part, text_part  # noqa: E402
from dialectbias.errors import ProviderError  # noqa: E402
from dialectbias.providers import ChatRequest, config_class, create_model  # noqa: E402
from tiny_vlm import BLUE, GREEN, IDEFICS3_IMAGE_TOKENS, RED, build_tiny_idefics3, build_tiny_text_llama  # noqa: E402

SYSTEM = {"role": "system", "content": "উত্তর দাও।"}


def ask(text: str, *images: bytes, **params: Any) -> ChatRequest:
    content = [text_part(text), *(image_part(i, "image/png") for i in images)]
    return ChatRequest(messages=[SYSTEM, {"role": "user", "content": content if images else text}],
                       params={"max_tokens": 6, "temperature": 0, **params})


def vllm_model(model_id: str, folder: Path, **extra: Any) -> Any:
    return create_model(config_class("vllm").model_validate(
        {"id": model_id, "provider": "vllm", "model": str(folder), "dtype": "float32", "max_model_len": 256,
         "kv_cache_gib": 1, **extra}))


@pytest.fixture(scope="module")
def vlm_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_vllm()
    return build_tiny_idefics3(tmp_path_factory.mktemp("tiny-idefics3"))


@pytest.fixture(scope="module")
def vlm(vlm_folder: Path) -> Iterator[Any]:
    """The tiny Idefics3 on one vLLM engine for the module (at most 2 images per prompt)."""
    model = vllm_model("tiny-vlm", vlm_folder, max_images_per_prompt=2, batch_size=8, batch_wait_s=0.5)
    asyncio.run(model.load())
    print(f"\ntiny VLM engine start: {model.load_s:.1f} s")
    try:
        yield model
    finally:
        asyncio.run(model.aclose())


def test_an_image_request_returns_text_and_its_tokens_are_inserted(vlm: Any) -> None:
    async def main() -> tuple[Any, Any, Any]:
        return (await vlm.complete(ask("ছবিতে কী আছে?", RED)), await vlm.complete(ask("ছবিতে কী আছে?")),
                await vlm.complete(ask("ছবিতে কী আছে?", RED, GREEN)))

    one, none, two = asyncio.run(main())
    assert vlm.max_images == 2  # the engine loaded it as a vision-language model, with the configured limit
    assert one.output and 1 <= one.tokens_out <= 6 and one.finish_reason in {"stop", "length"}
    # each image adds its placeholder tokens to the prompt: <fake><global-img> 16 × <image> <fake>
    assert one.tokens_in - none.tokens_in == IDEFICS3_IMAGE_TOKENS
    assert two.tokens_in - none.tokens_in == 2 * IDEFICS3_IMAGE_TOKENS
    assert two.output


def test_the_pixels_reach_the_model(vlm: Any) -> None:
    """Same prompt, different images: different next-token log-probabilities (the engine read the pixels)."""
    from vllm import SamplingParams

    from dialectbias.providers._vllm_messages import vllm_messages

    outputs = vlm.llm.chat([vllm_messages(ask("what is this", image).messages, "m") for image in (RED, BLUE)],
                           SamplingParams(temperature=0, max_tokens=1, logprobs=5), use_tqdm=False)
    top = [{t: round(lp.logprob, 4) for t, lp in o.outputs[0].logprobs[0].items()} for o in outputs]
    assert top[0] != top[1]


def test_image_and_text_requests_share_one_batch(vlm: Any) -> None:
    requests = [ask("what is this picture", RED), ask("নদী নৌকা"), ask("two images", GREEN, BLUE),
                ask("market food", BLUE, max_tokens=3)]
    calls: list[int] = []
    chat = vlm._chat

    def counting(jobs: list[Any]) -> list[Any]:
        calls.append(len(jobs))
        return chat(jobs)

    async def main() -> list[Any]:
        return await asyncio.gather(*(vlm.complete(r) for r in requests))

    vlm._chat = counting
    try:
        answers = asyncio.run(main())
    finally:
        del vlm._chat
    assert calls == [4]
    assert all(a.output for a in answers)
    assert answers[2].tokens_in > answers[1].tokens_in + 2 * IDEFICS3_IMAGE_TOKENS - 10


def test_more_images_than_the_limit_fail_that_request_clearly(vlm: Any) -> None:
    async def main() -> list[Any]:
        return await asyncio.gather(vlm.complete(ask("three", RED, GREEN, BLUE)), vlm.complete(ask("one", RED)),
                                    return_exceptions=True)

    over, fine = asyncio.run(main())
    assert isinstance(over, ProviderError) and not over.fatal
    assert str(over) == ("model 'tiny-vlm': the request has 3 images, above the engine's 2 per prompt: raise the "
                         "model's `max_images_per_prompt` (vLLM's limit_mm_per_prompt)")
    assert not isinstance(fine, BaseException) and fine.output


def test_a_text_only_model_refuses_an_image_clearly(tmp_path: Path) -> None:
    need_vllm()
    model = vllm_model("tiny-text", build_tiny_text_llama(tmp_path / "text"))

    async def main() -> None:
        try:
            with pytest.raises(ProviderError, match=r"^model 'tiny-text' is text-only: message 1 contains an image "
                               r"part") as caught:
                await model.complete(ask("what is this", RED))
            assert not caught.value.fatal
            assert model.max_images == 0
            assert (await model.complete(ask("what is this"))).tokens_out >= 1  # the engine is still alive
        finally:
            await model.aclose()

    asyncio.run(main())


def test_the_ray_vllm_path_refuses_images_with_one_message(local_ray: Any) -> None:
    need_ray()
    need_vllm()
    from dialectbias.run._ray_vllm import VLLMPass

    config = config_class("vllm").model_validate({"id": "tiny-vlm", "provider": "vllm", "model": "/models/x"})
    engine = VLLMPass(config)
    assert engine.request_payload("r1", ask("no image"))["db_id"] == "r1"
    with pytest.raises(ProviderError, match=r"^model 'tiny-vlm': image parts are not supported on executor: ray") \
            as caught:
        engine.request_payload("r2", ask("what is this", RED))
    assert caught.value.fatal  # stops the model with this one message; nothing is sent


def test_a_run_sends_the_stored_images_to_vllm(vlm: Any, vlm_folder: Path, qa: Any, qa_project: Any,
                                               qa_server: Any, cli: Any) -> None:
    """qa_bias with one of two items carrying an image, generated by the tiny VLM on `provider: vllm` through
    the run machinery: the image goes through the store's content parts to the engine, and each of that item's
    prompts is exactly the image's tokens longer than the same prompt without it (checked on the module's
    engine)."""
    from dialectbias.store import Store

    items = [qa.qa_item(i) for i in range(2)]
    project = qa_project(qa_server.base_url, items=items)
    (project.dir / "images").mkdir()
    (project.dir / "images/0.png").write_bytes(RED)
    items[0]["image"] = "images/0.png"
    qa.write_jsonl(project.dir / "items.jsonl", items)
    project.rewrite(models=[{"id": "tiny-vlm", "provider": "vllm", "model": str(vlm_folder), "dtype": "float32",
                             "max_model_len": 256, "kv_cache_gib": 1, "params": {"max_tokens": 4}}])
    result = cli("run", project.yaml_path, "--no-progress", "--yes")
    assert result.exit_code == 0, result.output
    with Store.open(project.store_path) as store:
        rows = store.query("SELECT q.item_id, q.messages, r.tokens_in, r.status, r.output FROM requests q "
                           "JOIN results r USING (request_id) WHERE q.model_id = ?", ("tiny-vlm",))
        sent = [(r["item_id"], store.resolve_messages(r["messages"]), int(r["tokens_in"])) for r in rows]
    assert len(rows) == 2 * 3 and all(r["status"] == "ok" and r["output"] for r in rows), [dict(r) for r in rows]

    def without_images(messages: list[Any]) -> list[Any]:
        return [{**m, "content": [p for p in m["content"] if p.get("type") == "text"]}
                if isinstance(m.get("content"), list) else m for m in messages]

    async def text_only_lengths() -> list[int]:
        answers = await asyncio.gather(*(vlm.complete(ChatRequest(messages=without_images(m), params={"max_tokens": 1}))
                                         for _, m, _ in sent))
        return [a.tokens_in for a in answers]

    added = {(item, i): n - base for i, ((item, _, n), base) in enumerate(zip(sent, asyncio.run(text_only_lengths()),
                                                                              strict=True))}
    assert added == {key: IDEFICS3_IMAGE_TOKENS if key[0] == "q01" else 0 for key in added}
