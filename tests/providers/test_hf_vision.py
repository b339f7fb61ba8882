"""Images through the local transformers provider: a tiny random LLaVA (2-layer Llama, 2-layer CLIP vision
tower, a byte-level BPE trained in-process, a processor assembled from its parts) built in the test."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from dialectbias.data import image_part, text_part  # noqa: E402
from dialectbias.errors import ProviderError  # noqa: E402
from dialectbias.providers._base import ChatRequest  # noqa: E402
from dialectbias.providers._hf import HFModel  # noqa: E402
from dialectbias.providers._hf_config import HFModelConfig  # noqa: E402
from dialectbias.providers._hf_vision import has_images, is_vision_model, vision_messages  # noqa: E402
from tiny_vlm import BLUE, GREEN, IMAGE_TOKENS, RED, build_tiny_llava, build_tiny_text_llama, png  # noqa: E402


@pytest.fixture(scope="module")
def vlm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


def ask(text: str, *images: bytes, **params: Any) -> ChatRequest:
    content = [text_part(text), *(image_part(i, "image/png") for i in images)]
    return ChatRequest(messages=[{"role": "system", "content": "উত্তর দাও।"}, {"role": "user", "content": content}],
                       params={"max_tokens": 6, "temperature": 0, **params})


def make(path: Path, **kwargs: Any) -> HFModel:
    return HFModel(HFModelConfig(id="tiny-vlm", model=str(path), **kwargs))


def reference(hf: HFModel, request: ChatRequest) -> tuple[str, int]:
    """Greedy output and prompt length computed directly with the processor and the model."""
    messages, images = vision_messages(list(request.messages), "ref")
    text = hf.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    pictures = [Image.open(io.BytesIO(b)).convert("RGB") for b in images]
    inputs = hf.processor(text=[text], images=[pictures] if pictures else None, return_tensors="pt")
    with torch.inference_mode():
        out = hf.model.generate(**inputs, max_new_tokens=request.params["max_tokens"], do_sample=False,
                                eos_token_id=hf.tokenizer.eos_token_id, pad_token_id=hf.tokenizer.pad_token_id)
    ids = [t for t in out[0, inputs["input_ids"].shape[1]:].tolist() if t != hf.tokenizer.eos_token_id]
    return hf.tokenizer.decode(ids, skip_special_tokens=True), int(inputs["input_ids"].shape[1])


def test_is_vision_model(vlm_dir: Path, tmp_path: Path) -> None:
    assert is_vision_model(vlm_dir)
    assert not is_vision_model(build_tiny_text_llama(tmp_path))
    assert not is_vision_model(tmp_path / "missing")


def test_vision_messages_keep_order_and_turn_strings_into_parts() -> None:
    data_url = "data:image/png;base64," + base64.b64encode(GREEN).decode("ascii")
    messages, images = vision_messages([
        {"role": "system", "content": "brief"},
        {"role": "user", "content": [image_part(RED), text_part("and"),
                                     {"type": "image_url", "image_url": {"url": data_url}}]},
    ], "m")
    assert messages == [{"role": "system", "content": [{"type": "text", "text": "brief"}]},
                        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "and"},
                                                     {"type": "image"}]}]
    assert images == [RED, GREEN]
    assert has_images([{"role": "user", "content": [image_part(RED)]}])
    assert not has_images([{"role": "user", "content": "no image"}])


@pytest.mark.parametrize(("part", "error"), [
    ({"type": "image", "image": "images/culture_114.jpg"}, "holds a path"),
    ({"type": "image", "image": b"not an image"}, "not a readable image"),
    ({"type": "audio", "audio": b""}, "unsupported part 'audio'"),
])
def test_vision_messages_errors(part: dict[str, Any], error: str) -> None:
    with pytest.raises(ProviderError, match=error):
        vision_messages([{"role": "user", "content": [part]}], "m")


def test_image_request_matches_direct_generation(vlm_dir: Path) -> None:
    async def main() -> None:
        hf = make(vlm_dir)
        try:
            request = ask("ছবিতে কী আছে?", RED)
            resp = await hf.complete(request)
            expected, prompt_len = reference(hf, request)
            assert resp.output == expected
            assert resp.output  # a random model still says something in 6 tokens
            assert resp.tokens_in == prompt_len
            assert 1 <= resp.tokens_out <= 6
            assert resp.finish_reason in {"stop", "length"}
            # the image's tokens are in the prompt: the same text without the image is IMAGE_TOKENS shorter
            text_only = await hf.complete(ChatRequest(messages=[{"role": "system", "content": "উত্তর দাও।"},
                                                                {"role": "user", "content": "ছবিতে কী আছে?"}],
                                                      params={"max_tokens": 6}))
            assert resp.tokens_in - text_only.tokens_in == IMAGE_TOKENS
            assert text_only.output == reference(hf, ChatRequest(
                messages=[{"role": "system", "content": "উত্তর দাও।"}, {"role": "user", "content": "ছবিতে কী আছে?"}],
                params={"max_tokens": 6}))[0]
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_the_image_reaches_the_model(vlm_dir: Path) -> None:
    """Different pixels give different next-token logits for the same prompt (so outputs can differ)."""
    async def main() -> None:
        hf = make(vlm_dir)
        try:
            await hf.load()
            logits = []
            for image in (RED, BLUE):
                messages, images = vision_messages(list(ask("what is this", image).messages), "m")
                text = hf.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
                inputs = hf.processor(text=[text], images=[[Image.open(io.BytesIO(images[0])).convert("RGB")]],
                                      return_tensors="pt")
                with torch.inference_mode():
                    logits.append(hf.model(**inputs).logits[0, -1])
            assert not torch.allclose(logits[0], logits[1])
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_data_url_part_equals_bytes_part(vlm_dir: Path) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(GREEN).decode("ascii")

    async def main() -> None:
        hf = make(vlm_dir)
        try:
            a = await hf.complete(ask("what is this picture", max_tokens=5).model_copy(update={"messages": [
                {"role": "user", "content": [text_part("what is this picture"), image_part(data_url)]}]}))
            b = await hf.complete(ask("what is this picture", max_tokens=5).model_copy(update={"messages": [
                {"role": "user", "content": [text_part("what is this picture"), image_part(GREEN)]}]}))
            assert (a.output, a.tokens_in) == (b.output, b.tokens_in)
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_image_requests_are_batched_and_match_sequential(vlm_dir: Path) -> None:
    requests = [ask("ছবিতে কী আছে?", RED), ask("what is this picture", GREEN), ask("two images", RED, BLUE),
                ask("নদী নৌকা", BLUE), ask("market food", GREEN, max_tokens=3)]

    async def main() -> None:
        hf = make(vlm_dir, batch_size=4, batch_wait_s=0.2)
        try:
            await hf.load()
            calls: list[int] = []
            generate = hf.model.generate

            def counting(*args: Any, **kwargs: Any) -> Any:
                calls.append(int(kwargs["input_ids"].shape[0]))
                return generate(*args, **kwargs)

            hf.model.generate = counting
            sequential = [await hf.complete(r) for r in requests]
            assert calls == [1] * len(requests)
            calls.clear()
            batched = await asyncio.gather(*(hf.complete(r) for r in requests))
            # the four max_tokens=6 requests share one generate; max_tokens=3 differs, so it runs alone
            assert sorted(calls) == [1, 4]
            assert [r.output for r in batched] == [r.output for r in sequential]
            assert [r.tokens_in for r in batched] == [r.tokens_in for r in sequential]
            assert sequential[2].tokens_in > sequential[0].tokens_in + IMAGE_TOKENS - 10  # two images
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_a_broken_image_fails_only_its_request(vlm_dir: Path) -> None:
    broken = ChatRequest(messages=[{"role": "user", "content": [text_part("x"), image_part(b"GIF89a")]}],
                         params={"max_tokens": 4})

    async def main() -> None:
        hf = make(vlm_dir, batch_size=4, batch_wait_s=0.2)
        try:
            await hf.load()
            good, bad = await asyncio.gather(hf.complete(ask("what is this", RED, max_tokens=4)),
                                             hf.complete(broken), return_exceptions=True)
            assert not isinstance(good, BaseException) and good.output
            assert isinstance(bad, ProviderError)
            assert "not a readable image" in str(bad)
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_json_schema_with_an_image_is_constrained(vlm_dir: Path) -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}},
              "required": ["score"], "additionalProperties": False}

    async def main() -> None:
        hf = make(vlm_dir)
        try:
            resp = await hf.complete(ask("score this picture", RED, max_tokens=16).model_copy(
                update={"json_schema": schema}))
            assert 1 <= json.loads(resp.output)["score"] <= 5
        finally:
            await hf.aclose()

    asyncio.run(main())


def test_text_only_model_refuses_an_image_clearly(tmp_path: Path) -> None:
    directory = build_tiny_text_llama(tmp_path)

    async def main() -> None:
        hf = make(directory)
        try:
            with pytest.raises(ProviderError, match=r"'tiny-vlm' is text-only: message 1 contains an image part"):
                await hf.complete(ask("what is this", RED))
            assert (await hf.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}],
                                                  params={"max_tokens": 2}))).tokens_out >= 1
        finally:
            await hf.aclose()

    asyncio.run(main())


def _tokens_in(store_path: Path, model_id: str) -> dict[tuple[str, str], int]:
    from dialectbias.store import Store

    with Store.open(store_path) as store:
        rows = store.query("SELECT q.item_id, q.variant, r.tokens_in, r.status, r.output FROM requests q "
                           "JOIN results r USING (request_id) WHERE q.model_id = ?", (model_id,))
    assert rows and all(r[3] == "ok" and r[4] for r in rows), rows
    return {(r[0], r[1]): int(r[2]) for r in rows}


def test_a_run_sends_the_stored_images_to_the_local_vlm(vlm_dir: Path, qa: Any, qa_project: Any, qa_server: Any,
                                                       cli: Any) -> None:
    """qa_bias with items carrying images, generated by the tiny VLM through the run machinery: the images
    go through the store's content parts to the `hf` provider; each image adds exactly its tokens."""
    hf_model = [{"id": "tiny-vlm", "provider": "hf", "model": str(vlm_dir), "batch_size": 4,
                 "params": {"max_tokens": 4}}]
    runs = {}
    for with_images in (False, True):
        items = [qa.qa_item(i) for i in range(3)]
        project = qa_project(qa_server.base_url, items=items)
        if with_images:
            for i, color in ((0, (200, 10, 10)), (1, (10, 160, 40))):
                (project.dir / "images").mkdir(exist_ok=True)
                (project.dir / f"images/{i}.png").write_bytes(png(color))
                items[i]["image"] = f"images/{i}.png"
            qa.write_jsonl(project.dir / "items.jsonl", items)
        project.rewrite(models=hf_model)
        result = cli("run", project.yaml_path, "--no-progress")
        assert result.exit_code == 0, result.output
        runs[with_images] = _tokens_in(project.store_path, "tiny-vlm")
    assert runs[True].keys() == runs[False].keys() and len(runs[True]) == 3 * 3
    added = {key: runs[True][key] - runs[False][key] for key in runs[True]}
    assert added == {(item, variant): IMAGE_TOKENS if item in {"q01", "q02"} else 0 for item, variant in added}
